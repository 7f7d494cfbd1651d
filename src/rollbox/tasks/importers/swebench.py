"""SWE-bench instances as native tasks, from a local clone of each repository.

    workspace/   the repository's tree at `base_commit`, read with git plumbing (`ls-tree`,
                 `cat-file`): exact blobs, no `.git`, so nothing newer than the base can leak
    tests/       the files `test_patch` touches, as they are at the base with the test patch
                 applied, at their repository paths; test files the ids name that the patch does
                 not touch (at the base); and the `conftest.py` files above them
    solution/    `patch`, as `solution.diff`
    [judge]      required = FAIL_TO_PASS + PASS_TO_PASS, pass_to_pass = PASS_TO_PASS,
                 isolation = "in-process" (a repository's tests use its internals directly)

The pytest judge runs the hidden tests with `tests/` as its rootdir, so a test at the
repository path `pkg/tests/test_x.py` has the node id `pkg/tests/test_x.py::test_a`, exactly
SWE-bench's id; bare test names (sympy's style) are resolved to the one hidden test file that
defines them. Ids in Django's runner format cannot be run by the pytest judge: such instances
are skipped. The workspace holds the base versions of the repository's own tests; the judge
never runs those, and changing them is tampering.

`--repo PATH` is one clone (used for every instance) or a directory holding clones named
`owner__name`, `name`, or `owner/name` (with or without `.git`).
"""

from __future__ import annotations

import ast
import posixpath
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from rollbox.errors import ConfigError
from rollbox.tasks import patch
from rollbox.tasks.importers.common import (
    ImportOptions,
    SkipItem,
    Skipped,
    TaskDraft,
    convert_each,
    make_spec,
    one_line,
    read_records,
    require_fields,
    string_field,
    string_list,
    task_id,
)
from rollbox.tasks.model import Difficulty, Family

FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")
TIMEOUT_S = 300  # a real repository's tests take longer than a bundled task's
_SAFE = ["-c", "core.fsmonitor=false", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null"]
_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")


class GitError(Exception):
    """A git command failed."""


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run git on a clone, with no user or system configuration, hooks or fsmonitor."""
    res = subprocess.run(
        ["git", *_SAFE, "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        timeout=600,
        env=_ENV,
    )
    if res.returncode != 0:
        lines = res.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(lines[-1] if lines else f"git {args[0]} failed ({res.returncode})")
    return res.stdout


def find_clone(repos: Path, repo: str) -> Path:
    """The local clone of `owner/name` under `repos` (or `repos` itself, if it is a clone)."""
    if (repos / ".git").exists() or _is_bare(repos):
        return repos
    owner, _, name = repo.partition("/")
    candidates = [f"{owner}__{name}", name, f"{owner}/{name}"] if name else [repo]
    for c in candidates:
        for suffix in ("", ".git"):
            path = repos / f"{c}{suffix}"
            if path.is_dir() and ((path / ".git").exists() or _is_bare(path)):
                return path
    raise SkipItem(f"no clone of {repo} under {repos} (tried {', '.join(candidates)})")


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def read_tree(repo: Path, commit: str) -> dict[str, bytes]:
    """Every file of `commit`'s tree, exactly as git stores it. A symbolic link to a file of the
    tree becomes a copy of that file (a task holds no links); other links and submodules are
    left out."""
    try:
        listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    except GitError as e:
        raise SkipItem(f"cannot read the tree of {commit[:12]}: {e}") from None
    entries: list[tuple[str, str, str]] = []
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        meta, _, name = raw.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob":
            try:
                entries.append((mode, sha, name.decode("utf-8")))
            except UnicodeDecodeError:
                raise SkipItem(f"the tree has a file name that is not UTF-8: {name!r}") from None
    blobs = _cat_blobs(repo, [sha for _, sha, _ in entries])
    files = {path: blobs[sha] for mode, sha, path in entries if mode != "120000"}
    for mode, sha, path in entries:
        if mode == "120000":
            link = blobs[sha].decode("utf-8", "replace")
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), link))
            if target in files:
                files[path] = files[target]
    return files


def _cat_blobs(repo: Path, shas: list[str]) -> dict[str, bytes]:
    """The contents of blobs, through one `git cat-file --batch`."""
    unique = list(dict.fromkeys(shas))
    out = git(repo, "cat-file", "--batch", stdin="".join(f"{s}\n" for s in unique).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in unique:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3:
            raise SkipItem(f"git cat-file could not read blob {sha}")
        size = int(header[2])
        blobs[sha] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def _apply(files: dict[str, bytes], diff: str, what: str) -> dict[str, bytes | None]:
    try:
        return patch.apply(files, diff)
    except patch.PatchError as e:
        raise SkipItem(f"the {what} does not apply to the base commit: {e}") from None


def _is_test_module(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def test_ids(raw: list[str], hidden: dict[str, bytes], field: str) -> list[str]:
    """SWE-bench test ids as the pytest judge names them (see the module's docstring)."""
    ids = []
    for tid in raw:
        if "::" in tid:
            path = tid.split("::", 1)[0]
            if not path.endswith(".py"):
                raise SkipItem(f"{field} id {tid!r} does not name a .py file")
            ids.append(tid)
        elif re.fullmatch(r"[A-Za-z_]\w*", tid):
            ids.append(_resolve_bare(tid, hidden, field))
        else:
            raise SkipItem(
                f"{field} id {tid!r} is not a pytest node id (Django's runner?); "
                "the pytest judge cannot run it"
            )
    return ids


def _resolve_bare(name: str, hidden: dict[str, bytes], field: str) -> str:
    """`test_a` -> `path/test_x.py::test_a`, for the one hidden test file that defines it."""
    found = []
    for rel, data in hidden.items():
        if not _is_test_module(PurePosixPath(rel).name):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        if any(isinstance(n, defs) and n.name == name for n in tree.body):
            found.append(rel)
    if len(found) != 1:
        where = "no" if not found else f"{len(found)}"
        raise SkipItem(f"{field} names {name!r}, which {where} hidden test file(s) define")
    return f"{found[0]}::{name}"


def hidden_tests(base: dict[str, bytes], test_patch: str, ids: list[str]) -> dict[str, bytes]:
    """The hidden test files (see the module's docstring)."""
    changes = _apply(base, test_patch, "test patch")
    hidden = {rel: data for rel, data in changes.items() if data is not None}
    after = {**base, **hidden}
    for tid in ids:
        path = tid.split("::", 1)[0]
        if "::" in tid and path not in hidden:
            if path not in base:
                raise SkipItem(f"test file {path} is in neither the test patch nor the base")
            hidden[path] = base[path]
    for rel in list(hidden):
        parent = PurePosixPath(rel).parent
        for d in (parent, *parent.parents):
            conftest = str(d / "conftest.py") if str(d) != "." else "conftest.py"
            if conftest in after and conftest not in hidden:
                hidden[conftest] = after[conftest]
    return hidden


def _packages(item: dict[str, Any]) -> list[str]:
    value = item.get("python_packages")
    return [] if value is None else string_list(value, "python_packages")


def instance_draft(item_value: Any, options: ImportOptions) -> TaskDraft:
    """One SWE-bench instance as a task (raises SkipItem if it cannot be converted)."""
    item = require_fields(item_value, FIELDS)
    instance_id, repo, base_commit, gold, test_patch, statement = (
        string_field(item, f) for f in FIELDS
    )
    if options.repo is None:
        raise ConfigError("swebench needs --repo: a local clone, or a directory of clones")
    if not _SHA.match(base_commit):
        raise SkipItem(f"base_commit {base_commit!r} is not a commit hash")
    fail_to_pass = string_list(item.get("FAIL_TO_PASS", []), "FAIL_TO_PASS")
    pass_to_pass = string_list(item.get("PASS_TO_PASS", []), "PASS_TO_PASS")
    if not fail_to_pass:
        raise SkipItem("FAIL_TO_PASS names no test")
    clone = find_clone(options.repo, repo)
    try:
        git(clone, "cat-file", "-e", f"{base_commit}^{{commit}}")
    except GitError:
        raise SkipItem(f"base commit {base_commit[:12]} is not in the clone {clone}") from None
    workspace = read_tree(clone, base_commit)
    _apply(workspace, gold, "patch")
    pytest_ids = [i for i in [*fail_to_pass, *pass_to_pass] if "::" in i]
    hidden = hidden_tests(workspace, test_patch, pytest_ids)
    f2p = test_ids(fail_to_pass, hidden, "FAIL_TO_PASS")
    p2p = test_ids(pass_to_pass, hidden, "PASS_TO_PASS")
    if not any(_is_test_module(PurePosixPath(r).name) for r in hidden):
        raise SkipItem("the test patch touches no test_*.py file")
    required = list(dict.fromkeys([*f2p, *p2p]))
    version = item.get("version")
    tags = ["swebench", f"repo:{repo}"] + ([f"version:{version}"] if version else [])
    instruction = (
        f"The workspace holds the {repo} repository at commit {base_commit[:12]}. Resolve the "
        "issue below by changing the repository's code; hidden tests (the ones that check the "
        "issue, and some that already pass and must keep passing) decide.\n\n"
        f"{statement.strip()}\n"
    )
    first = next((ln.strip("# ").strip() for ln in statement.splitlines() if ln.strip()), "")
    spec = make_spec(
        tid=task_id("swebench", instance_id),
        title=one_line(f"{instance_id}: {first}") if first else instance_id,
        instruction=instruction,
        family=Family.bugfix,
        difficulty=Difficulty.hard,
        options=options,
        tags=tags,
        extra={
            "limits": {"timeout_s": TIMEOUT_S},
            "environment": {"python_packages": _packages(item)},
            # a repository's tests reach deep into its internals (and sit beside its packages
            # under tests/): the code runs in the tests' process
            "judge": {"required": required, "pass_to_pass": p2p, "isolation": "in-process"},
        },
    )
    return TaskDraft(
        source_id=instance_id,
        spec=spec,
        workspace=workspace,
        tests=hidden,
        solution={"solution.diff": gold.encode()},
    )


def swebench_drafts(src: Path, options: ImportOptions) -> Iterator[TaskDraft | Skipped]:
    """A draft (or a skip) per instance of a SWE-bench JSONL file or JSON list, in order."""
    if options.repo is None:
        raise ConfigError("swebench needs --repo: a local clone, or a directory of clones")
    if not options.repo.is_dir():
        raise ConfigError(f"--repo {str(options.repo)!r} is not a directory")
    units = []
    for record in read_records(src):
        raw = record.value.get("instance_id") if isinstance(record.value, dict) else None
        units.append((raw if isinstance(raw, str) and raw else record.where, record.value))
    return convert_each(units, lambda _, value: instance_draft(value, options))
