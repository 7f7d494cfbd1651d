"""What every importer shares: drafts, the report, ids, reading JSONL, writing task directories.

An importer turns a source collection into a stream of `TaskDraft`s (a task in memory) and
`Skipped` items (what could not be converted, and why). `run_import` writes each draft into a
staging directory beside its destination, loads it with the ordinary loader (so every imported
task is a valid task), and only then moves it into place. An identical task already in place is
left as it is ("unchanged"); a different one is never overwritten.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rollbox.errors import ConfigError, TaskFormatError
from rollbox.tasks.loader import TASK_FILE, load_task
from rollbox.tasks.model import ID_PATTERN, Difficulty, Family, Split, TaskSpec

T = TypeVar("T")
MAX_ID = 120
MAX_TITLE = 200


class ImportOptions(BaseModel):
    """How a source is imported (the same for every item)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    split: Split = Field(Split.train, description="The split every imported task gets.")
    family: Family | None = Field(None, description="The family; None: the source's default.")
    difficulty: Difficulty | None = Field(
        None, description="The difficulty label; None: the source's default."
    )
    limit: int | None = Field(None, ge=1, description="Stop after this many imported tasks.")
    repo: Path | None = Field(
        None, description="swebench: a local clone, or a directory of clones."
    )


class SkipItem(Exception):
    """Raised while converting one item: the item is skipped for this reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TaskDraft:
    """One converted task, in memory: its spec and the files of its parts."""

    source_id: str
    spec: TaskSpec
    workspace: Mapping[str, bytes]
    tests: Mapping[str, bytes]
    solution: Mapping[str, bytes]  # whole files, or exactly {"solution.diff": ...}


@dataclass(frozen=True)
class Skipped:
    """A source item that was not imported, and why."""

    source_id: str
    reason: str


@dataclass(frozen=True)
class Imported:
    """A task written (or found already in place, identical) under the destination."""

    id: str
    source_id: str
    status: Literal["new", "unchanged"]
    version: str
    path: str


@dataclass(frozen=True)
class ImportReport:
    """What one import did: the tasks imported and the items skipped, in source order."""

    kind: str
    source: str
    dest: str
    imported: tuple[Imported, ...] = field(default=())
    skipped: tuple[Skipped, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "dest": self.dest,
            "imported": [vars(i) for i in self.imported],
            "skipped": [vars(s) for s in self.skipped],
        }

    def summary(self) -> str:
        new = sum(i.status == "new" for i in self.imported)
        return (
            f"{len(self.imported)} task(s) imported into {self.dest} ({new} new, "
            f"{len(self.imported) - new} unchanged); {len(self.skipped)} item(s) skipped"
        )


def convert_each(
    units: Iterable[tuple[str, T]], convert: Callable[[str, T], TaskDraft]
) -> Iterator[TaskDraft | Skipped]:
    """Convert source units lazily, one draft each, or a skip with the reason it raised."""
    for source_id, unit in units:
        try:
            yield convert(source_id, unit)
        except SkipItem as e:
            yield Skipped(source_id, e.reason)


# ---------------------------------------------------------------------------------------------
# ids, titles, text


def task_id(prefix: str, raw: str) -> str:
    """A native task id: `<prefix>-<raw>`, lowercased, every run of other characters a '-'."""
    body = re.sub(r"[^a-z0-9._-]+", "-", raw.lower()).strip("-._")
    tid = f"{prefix}-{body}" if body else prefix
    if len(tid) > MAX_ID or not re.match(ID_PATTERN, tid):
        raise SkipItem(f"cannot make a task id from {raw!r} ({tid!r} is not a valid id)")
    return tid


def one_line(text: str, limit: int = MAX_TITLE) -> str:
    """The text on one line, cut to `limit` characters (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def normalize_text(text: str) -> str:
    """Unix line endings and exactly one final newline."""
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip() + "\n"


def safe_path(rel: str, where: str) -> str:
    """A relative posix path that stays inside its base."""
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts or rel.startswith("\\"):
        raise SkipItem(f"{where}: unsafe path {rel!r}")
    return str(p)


def make_spec(
    *,
    tid: str,
    title: str,
    instruction: str,
    family: Family,
    difficulty: Difficulty,
    options: ImportOptions,
    tags: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> TaskSpec:
    """The task.toml of an imported task; `extra` adds limits, environment or judge fields."""
    data: dict[str, Any] = {
        "id": tid,
        "title": one_line(title) or tid,
        "family": options.family or family,
        "difficulty": options.difficulty or difficulty,
        "split": options.split,
        "tags": tuple(tags),
        "instruction": normalize_text(instruction),
        "judge": {"type": "pytest"},
    }
    for key, value in (extra or {}).items():
        data[key] = {**data[key], **value} if isinstance(data.get(key), dict) else value
    return TaskSpec.model_validate(data)


# ---------------------------------------------------------------------------------------------
# reading JSONL (plain or gzip) and JSON lists


@dataclass(frozen=True)
class Record:
    """One item of a JSONL file (or of a JSON list), and where it was."""

    where: str  # "line 3" or "item 3"
    value: Any


def read_records(path: Path) -> list[Record]:
    """Every item of a JSONL file (plain or gzip), or of a file holding one JSON list.

    Raises ConfigError (naming the file and line) for a missing file or a line that is not JSON.
    """
    if not path.exists():
        raise ConfigError(f"source {str(path)!r} does not exist")
    if not path.is_file():
        raise ConfigError(f"source {str(path)!r} is not a file (expected JSONL, plain or .gz)")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise ConfigError(f"{path}: not a valid gzip file ({e})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
        return [Record(f"item {i}", v) for i, v in enumerate(items, 1)]
    records = []
    # split on "\n" only: a JSON string may hold U+2028 and friends, which splitlines() splits on
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(Record(f"line {lineno}", json.loads(line)))
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
    return records


def require_fields(value: Any, names: Iterable[str]) -> dict[str, Any]:
    """The record as a dict that has every one of `names`, or a skip naming what is missing."""
    if not isinstance(value, dict):
        raise SkipItem(f"not a JSON object (got {type(value).__name__})")
    missing = [n for n in names if value.get(n) is None]
    if missing:
        raise SkipItem(f"missing field(s): {', '.join(missing)}")
    return value


def string_field(record: Mapping[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise SkipItem(f"field {name!r} is not a string")
    return value


def string_list(value: Any, name: str) -> list[str]:
    """A list of strings, given as a list or as a JSON-encoded list (SWE-bench does both)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise SkipItem(f"field {name!r} is neither a list nor a JSON-encoded list") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SkipItem(f"field {name!r} is not a list of strings")
    return value


# ---------------------------------------------------------------------------------------------
# task.toml


def _toml_string(s: str, *, multiline: bool = False) -> str:
    """A TOML string: a multi-line literal when that is exact, else a basic string."""
    plain = all(c in "\n\t" or (c >= " " and c != "\x7f") for c in s)
    if multiline and plain and "'''" not in s and s.endswith("\n"):
        return "'''\n" + s + "'''"
    # JSON's escapes are TOML's, but for DEL, which TOML wants escaped
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML for {type(v).__name__}")


def spec_toml(spec: TaskSpec) -> str:
    """task.toml for a spec: the fields that differ from the defaults (and the judge's type)."""
    data = spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["judge"] = {"type": spec.judge.type, **data.get("judge", {})}
    lines = []
    for key in ("id", "title", "family", "difficulty", "split", "tags"):
        if key in data:
            lines.append(f"{key} = {_toml_value(data[key])}")
    lines.append(f"instruction = {_toml_string(data['instruction'], multiline=True)}")
    for table in ("limits", "environment", "reward", "judge"):
        if data.get(table):
            lines.append(f"\n[{table}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in data[table].items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# writing


def _write_part(base: Path, files: Mapping[str, bytes], part: str) -> None:
    base.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        target = base / safe_path(rel, part)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def write_task(draft: TaskDraft, dest: Path) -> Imported:
    """Write one draft as `dest/<id>/`, checked by the loader first; identical content already
    there is left alone. Raises ConfigError if a different task (or anything else) is there."""
    tid = draft.spec.id
    target = dest / tid
    staging = Path(tempfile.mkdtemp(prefix=".rollbox-import-", dir=dest))
    try:
        staged = staging / tid
        staged.mkdir()
        (staged / TASK_FILE).write_text(spec_toml(draft.spec), encoding="utf-8")
        for part in ("workspace", "tests", "solution"):
            _write_part(staged / part, getattr(draft, part), part)
        try:
            task = load_task(staged)
        except TaskFormatError as e:
            raise SkipItem(f"the converted task does not load: {e.problem}") from None
        if task.spec != draft.spec:
            raise RuntimeError(f"{tid}: task.toml does not round-trip: {spec_toml(draft.spec)}")
        if not (target.exists() or target.is_symlink()):
            try:
                staged.rename(target)
                return Imported(tid, draft.source_id, "new", task.version, str(target))
            except OSError as e:
                if not target.exists():
                    raise ConfigError(f"cannot write {target}: {e.strerror}") from None
                # another import put something there meanwhile: compare with it
        existing = _existing_version(target)
        if existing != task.version:
            what = f"version {existing}" if existing else "something that is not a task"
            raise ConfigError(
                f"{target} already holds a different task ({what}; this import makes "
                f"version {task.version}); remove it or import into another directory"
            )
        return Imported(tid, draft.source_id, "unchanged", task.version, str(target))
    except UnicodeEncodeError:
        raise SkipItem("its text is not valid Unicode (lone surrogates)") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _existing_version(path: Path) -> str | None:
    try:
        return load_task(path).version
    except TaskFormatError:
        return None


def prepare_dest(dest: Path) -> Path:
    """The destination directory, created if need be."""
    if dest.exists() and not dest.is_dir():
        raise ConfigError(f"destination {str(dest)!r} exists and is not a directory")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create the destination {str(dest)!r}: {e.strerror}") from None
    if not os.access(dest, os.W_OK):
        raise ConfigError(f"destination {str(dest)!r} is not writable")
    return dest


def run_import(
    kind: str,
    source: Path,
    dest: Path,
    items: Iterable[TaskDraft | Skipped],
    options: ImportOptions,
) -> ImportReport:
    """Write every draft `items` yields (until `options.limit` tasks are imported)."""
    dest = prepare_dest(dest)
    imported: list[Imported] = []
    skipped: list[Skipped] = []
    seen: dict[str, str] = {}
    for item in items:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        tid = item.spec.id
        if tid in seen:
            skipped.append(Skipped(item.source_id, f"id {tid!r} is already {seen[tid]}'s"))
            continue
        try:
            imported.append(write_task(item, dest))
        except SkipItem as e:
            skipped.append(Skipped(item.source_id, e.reason))
            continue
        seen[tid] = item.source_id
        if options.limit is not None and len(imported) >= options.limit:
            break  # the items are made lazily: nothing more is converted
    return ImportReport(kind, str(source), str(dest), tuple(imported), tuple(skipped))
