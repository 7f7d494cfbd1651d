"""Exercism practice exercises (the Python track's layout) as native tasks.

An exercise is `exercises/practice/<slug>/` with `.docs/instructions.md` (optional
`introduction.md` before it and `instructions.append.md` after it), `.meta/config.json`
(`files.solution`, `files.test`, `files.example`, optional `files.editor`), the stub(s), the
test file(s) and the example solution(s).

    workspace/   the stub(s) listed in files.solution, and the read-only files.editor helpers
    tests/       the files.test files; `<name>_test.py` is renamed `test_<name>.py` (the task
                 format's hidden tests are test_*.py files)
    solution/    each example file's content under its stub's name

SRC may be a track (it has `exercises/practice/`), its `exercises/practice/` directory, or one
exercise directory. Exercises the track's `config.json` marks deprecated, exercises whose config
says `test_runner: false`, non-Python exercises and exercises missing a piece are skipped, each
with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from rollbox.errors import ConfigError
from rollbox.tasks.importers.common import (
    ImportOptions,
    SkipItem,
    Skipped,
    TaskDraft,
    convert_each,
    make_spec,
    normalize_text,
    safe_path,
    task_id,
)
from rollbox.tasks.model import Difficulty, Family

CONFIG = ".meta/config.json"


def exercise_dirs(src: Path) -> tuple[list[Path], dict[str, dict[str, Any]]]:
    """The exercise directories under SRC, and the track's entries for them by slug."""
    if not src.exists():
        raise ConfigError(f"source {str(src)!r} does not exist")
    if not src.is_dir():
        raise ConfigError(f"source {str(src)!r} is not a directory (expected an Exercism track)")
    if (src / CONFIG).is_file():
        return [src], _track_entries(src.parent.parent.parent / "config.json")
    practice = src / "exercises" / "practice"
    if practice.is_dir():
        base, track = practice, src / "config.json"
    else:
        base, track = src, src.parent.parent / "config.json"
    dirs = sorted(d for d in base.iterdir() if d.is_dir() and not d.name.startswith("."))
    if not any((d / CONFIG).is_file() for d in dirs):
        raise ConfigError(
            f"no Exercism exercises in {str(src)!r} (expected a track with exercises/practice/"
            "<slug>/.meta/config.json, that directory, or one exercise)"
        )
    return dirs, _track_entries(track)


def _track_entries(path: Path) -> dict[str, dict[str, Any]]:
    """The practice exercises of the track's config.json by slug (none if it is absent)."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        entries = config["exercises"]["practice"]
        return {e["slug"]: e for e in entries if isinstance(e, dict) and "slug" in e}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def exercism_drafts(src: Path, options: ImportOptions) -> Iterator[TaskDraft | Skipped]:
    """A draft (or a skip) per exercise, by slug."""
    dirs, track = exercise_dirs(src)
    units = [(f"exercism/{d.name}", d) for d in dirs]
    return convert_each(units, lambda _, d: exercise_draft(d, track.get(d.name, {}), options))


def _file_list(files: dict[str, Any], key: str, *, required: bool = True) -> list[str]:
    value = files.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SkipItem(f"{CONFIG}: files.{key} is not a list of file names")
    if required and not value:
        raise SkipItem(f"{CONFIG}: files.{key} lists no files")
    return [safe_path(v, f"{CONFIG} files.{key}") for v in value]


def _read(exercise: Path, rel: str, what: str) -> bytes:
    path = exercise / rel
    if not path.is_file():
        raise SkipItem(f"{what} {rel} is missing")
    return path.read_bytes()


def _hidden_name(rel: str) -> str:
    """`two_fer_test.py` -> `test_two_fer.py`; other names stay."""
    p = PurePosixPath(rel)
    if p.name.endswith("_test.py") and not p.name.startswith("test_"):
        return str(p.with_name("test_" + p.name[: -len("_test.py")] + ".py"))
    return rel


def _pair(solutions: list[str], examples: list[str]) -> dict[str, str]:
    """Which example file is the reference for which stub."""
    if len(solutions) == 1 and len(examples) == 1:
        return {solutions[0]: examples[0]}
    by_name = {PurePosixPath(e).name: e for e in examples}
    if all(PurePosixPath(s).name in by_name for s in solutions):
        return {s: by_name[PurePosixPath(s).name] for s in solutions}
    raise SkipItem("cannot tell which example file is the solution of which stub")


def _instruction(exercise: Path, solutions: list[str], editor: list[str]) -> str:
    docs = exercise / ".docs"
    if not (docs / "instructions.md").is_file():
        raise SkipItem(".docs/instructions.md is missing")
    parts = [
        (docs / name).read_text(encoding="utf-8", errors="replace").strip()
        for name in ("introduction.md", "instructions.md", "instructions.append.md")
        if (docs / name).is_file()
    ]
    files = ", ".join(f"`{s}`" for s in solutions)
    parts.append(
        f"Write your solution in {files} (the workspace holds a stub). Hidden tests, like the "
        "exercise's own, import it and check it."
        + (f" {', '.join(f'`{e}`' for e in editor)} is given; do not change it." if editor else "")
    )
    return "\n\n".join(p for p in parts if p) + "\n"


def exercise_draft(
    exercise: Path, track_entry: dict[str, Any], options: ImportOptions
) -> TaskDraft:
    """One exercise as a task (raises SkipItem if it cannot be converted)."""
    slug = exercise.name
    if track_entry.get("status") == "deprecated":
        raise SkipItem("deprecated in the track's config.json")
    config_path = exercise / CONFIG
    if not config_path.is_file():
        raise SkipItem(f"{CONFIG} is missing")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise SkipItem(f"{CONFIG} is not valid JSON ({e})") from None
    if not isinstance(config, dict) or not isinstance(config.get("files"), dict):
        raise SkipItem(f"{CONFIG} has no 'files' object")
    if config.get("test_runner") is False:
        raise SkipItem(f"{CONFIG} says its tests cannot run in a test runner")
    files = config["files"]
    solutions = _file_list(files, "solution")
    tests = _file_list(files, "test")
    examples = _file_list(files, "example")
    editor = _file_list(files, "editor", required=False)
    if not all(s.endswith(".py") for s in solutions):
        raise SkipItem(f"not a Python exercise (solution files: {', '.join(solutions)})")
    instruction = _instruction(exercise, solutions, editor)
    workspace = {rel: _read(exercise, rel, "stub") for rel in solutions}
    workspace |= {rel: _read(exercise, rel, "editor file") for rel in editor}
    hidden = {_hidden_name(rel): _read(exercise, rel, "test file") for rel in tests}
    solution = {
        stub: _read(exercise, example, "example solution")
        for stub, example in _pair(solutions, examples).items()
    }
    name = str(track_entry.get("name") or slug.replace("-", " ").title())
    blurb = config.get("blurb")
    title = f"{name}: {blurb}" if isinstance(blurb, str) and blurb.strip() else name
    tags = ["exercism"]
    if isinstance(track_entry.get("difficulty"), int):
        tags.append(f"exercism-difficulty-{track_entry['difficulty']}")
    spec = make_spec(
        tid=task_id("exercism", slug),
        title=title,
        instruction=normalize_text(instruction),
        family=Family.feature,
        difficulty=Difficulty.easy,
        options=options,
        tags=tags,
    )
    return TaskDraft(f"exercism/{slug}", spec, workspace, hidden, solution)
