"""Loading task directories: one clear error per bad task, the good ones still load."""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from rollbox.errors import ConfigError, TaskFormatError
from rollbox.tasks import patch
from rollbox.tasks.model import (
    DocumentJudge,
    OutputJudge,
    PytestJudge,
    Task,
    TaskSpec,
)
from rollbox.tasks.taskset import TaskSet

BUNDLED = "bundled"
TASK_FILE = "task.toml"
SOLUTION_DIFF = "solution.diff"
_PARTS = ("workspace", "tests", "visible_tests", "solution")
_IGNORED_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
_IGNORED_SUFFIXES = (".pyc", ".pyo")


def bundled_dir() -> Path:
    """Where the bundled task set lives (inside the installed package)."""
    return Path(__file__).resolve().parent / "bundled"


def resolve_tasks_dir(where: str | Path) -> Path:
    """A task directory given by the user; the word `bundled` names the bundled set."""
    path = bundled_dir() if str(where) == BUNDLED else Path(where).expanduser()
    if not path.exists():
        raise ConfigError(f"task directory {str(where)!r} does not exist")
    if not path.is_dir():
        raise ConfigError(f"{str(where)!r} is not a directory")
    return path


def iter_files(base: Path) -> Iterator[tuple[str, Path]]:
    """Regular files beneath `base` as (posix relative path, path), sorted, caches skipped.

    Raises TaskFormatError for symbolic links: a task must not point outside itself.
    """
    if not base.is_dir():
        return
    found: list[tuple[str, Path]] = []
    stack = [(base, "")]
    while stack:
        d, prefix = stack.pop()
        with os.scandir(d) as it:
            for entry in it:
                if entry.is_symlink():
                    raise TaskFormatError(entry.path, "symbolic links are not allowed in a task")
                if entry.is_dir():
                    if entry.name not in _IGNORED_DIRS:
                        stack.append((Path(entry.path), f"{prefix}{entry.name}/"))
                elif entry.is_file():
                    if not entry.name.endswith(_IGNORED_SUFFIXES):
                        found.append((prefix + entry.name, Path(entry.path)))
                else:
                    raise TaskFormatError(
                        entry.path, "only regular files and directories are allowed"
                    )
    yield from sorted(found)


def read_tree(base: Path) -> dict[str, bytes]:
    """Every regular file beneath `base`, by relative path."""
    return {rel: p.read_bytes() for rel, p in iter_files(base)}


def content_version(task_toml: bytes, parts: dict[str, dict[str, bytes]]) -> str:
    """A hash of every file that affects the task: task.toml and the four parts."""
    h = hashlib.sha256()
    files = [(TASK_FILE, task_toml)]
    for part in _PARTS:
        files.extend((f"{part}/{rel}", data) for rel, data in parts.get(part, {}).items())
    for rel, data in files:
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:16]


def _format_validation(err: ValidationError) -> str:
    problems = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"])
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        elif e["type"] == "missing":
            msg = "required field is missing"
        problems.append(f"'{loc}': {msg}" if loc else msg)
    return "; ".join(problems)


def load_spec(task_toml: Path, data: bytes | None = None) -> TaskSpec:
    """Parse and validate one task.toml (its bytes may be given, already read)."""
    if data is None:
        if not task_toml.is_file():
            raise TaskFormatError(task_toml, "missing task.toml")
        data = task_toml.read_bytes()
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise TaskFormatError(task_toml, "not valid UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(task_toml, f"invalid TOML: {e}") from None
    try:
        return TaskSpec.model_validate(raw)
    except ValidationError as e:
        raise TaskFormatError(task_toml, _format_validation(e)) from None


def load_task(root: Path | str) -> Task:
    """Load and check one task directory; raises TaskFormatError naming the file at fault."""
    root = Path(root)
    if not root.is_dir():
        raise TaskFormatError(root, "not a task directory")
    toml_path = root / TASK_FILE
    if not toml_path.is_file():
        raise TaskFormatError(toml_path, "missing task.toml")
    toml_bytes = toml_path.read_bytes()
    spec = load_spec(toml_path, toml_bytes)
    if spec.id != root.name:
        raise TaskFormatError(
            root / TASK_FILE, f"id {spec.id!r} differs from the directory name {root.name!r}"
        )
    for part in ("workspace", "tests", "solution"):
        if not (root / part).is_dir():
            raise TaskFormatError(root / part, f"missing directory '{part}/'")
    parts = {part: read_tree(root / part) for part in _PARTS}
    tests = parts["tests"]
    if not tests:
        raise TaskFormatError(root / "tests", "no hidden tests: 'tests/' is empty")
    _check_judge_files(root, spec, tests)
    _check_solution(root, parts["workspace"], parts["solution"])
    for rel, data in parts["visible_tests"].items():
        if tests.get(rel) == data:
            raise TaskFormatError(
                root / "visible_tests" / rel,
                "identical to the hidden test of the same name: hidden tests must differ",
            )
    version = content_version(toml_bytes, parts)
    return Task(spec=spec, root=root.resolve(), version=version)


def _check_judge_files(root: Path, spec: TaskSpec, tests: dict[str, bytes]) -> None:
    judge = spec.judge
    tdir = root / "tests"
    if isinstance(judge, PytestJudge):
        if not any(Path(r).name.startswith("test_") and r.endswith(".py") for r in tests):
            raise TaskFormatError(tdir, "a pytest judge needs test_*.py files in 'tests/'")
    elif isinstance(judge, OutputJudge):
        for case in judge.cases:
            for what, rel in (("inputs", case.inputs), ("expected", case.expected)):
                if rel is None:
                    continue
                prefix = rel.rstrip("/") + "/"
                if not any(name.startswith(prefix) for name in tests):
                    raise TaskFormatError(
                        root / TASK_FILE,
                        f"case {case.name!r}: {what} directory 'tests/{rel}' is missing or empty",
                    )
    elif isinstance(judge, DocumentJudge):
        if judge.schema_file is not None:
            schema_path = tdir / judge.schema_file
            if judge.schema_file not in tests:
                raise TaskFormatError(schema_path, "the judge's schema file is missing")
            try:
                json.loads(tests[judge.schema_file].decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise TaskFormatError(schema_path, f"the schema is not valid JSON: {e}") from None
        if judge.checks is not None:
            checks_path = tdir / judge.checks
            if judge.checks not in tests:
                raise TaskFormatError(checks_path, "the judge's checks module is missing")
            try:
                compile(tests[judge.checks], str(checks_path), "exec")
            except SyntaxError as e:
                raise TaskFormatError(checks_path, f"syntax error on line {e.lineno}") from None


def _check_solution(root: Path, workspace: dict[str, bytes], files: dict[str, bytes]) -> None:
    sol = root / "solution"
    if not files:
        raise TaskFormatError(sol, "no reference solution: 'solution/' is empty")
    if SOLUTION_DIFF in files:
        if len(files) > 1:
            raise TaskFormatError(
                sol / SOLUTION_DIFF, "a solution diff must be the only file in 'solution/'"
            )
        try:
            patch.apply(workspace, files[SOLUTION_DIFF].decode())
        except (patch.PatchError, UnicodeDecodeError) as e:
            raise TaskFormatError(
                sol / SOLUTION_DIFF, f"the reference does not apply: {e}"
            ) from None


def reference_changes(task: Task) -> dict[str, bytes | None]:
    """The reference solution as changes to the workspace (path -> bytes, None: deleted)."""
    if task.solution_diff is not None:
        return patch.apply(read_tree(task.workspace_dir), task.solution_diff.read_text())
    return dict(read_tree(task.solution_dir))


def materialize(task: Task, dest: Path, *, reference: bool) -> Path:
    """Write the task's workspace (with the reference applied, if asked) into `dest`."""
    files: dict[str, bytes | None] = dict(read_tree(task.workspace_dir))
    if reference:
        files.update(reference_changes(task))
    dest.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        if data is None:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def load_tasks(where: str | Path) -> TaskSet:
    """Load every task beneath a directory (or the bundled set).

    A directory that is itself a task loads as a set of one. Bad tasks do not stop the rest:
    their errors are collected on `TaskSet.errors`, all at once.
    """
    base = resolve_tasks_dir(where)
    candidates = _find_task_dirs(base)
    tasks: list[Task] = []
    errors: list[TaskFormatError] = []
    for root in candidates:
        try:
            tasks.append(load_task(root))
        except TaskFormatError as e:
            errors.append(e)
    seen: dict[str, Task] = {}
    for t in tasks:
        if t.id in seen:
            errors.append(
                TaskFormatError(t.root / TASK_FILE, f"duplicate task id (also {seen[t.id].root})")
            )
        seen[t.id] = t
    return TaskSet(tuple(sorted(seen.values(), key=lambda t: t.id)), errors=tuple(errors))


def _find_task_dirs(base: Path) -> list[Path]:
    """Directories holding a task.toml, not looking inside a task (its parts may hold anything)
    nor inside hidden directories."""
    found, stack = [], [base]
    while stack:
        d = stack.pop()
        if (d / TASK_FILE).is_file():
            found.append(d)
            continue
        with os.scandir(d) as it:
            stack.extend(
                Path(e.path)
                for e in it
                if e.is_dir(follow_symlinks=False)
                and e.name not in _IGNORED_DIRS
                and not e.name.startswith(".")  # hidden: an import's staging dir, .git, ...
            )
    return sorted(found)
