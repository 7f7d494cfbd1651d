"""Task versions, kept: a content-addressed registry, and diffs between task sets.

A task's version is the hash of its files (`loader.content_version`), so a version names one
exact content. The registry keeps that content, so a version seen once (in a run, in a
training log) can be looked at, diffed and rebuilt later, whatever happened to the directory:

    <root>/blobs/<2 hex>/<sha256>   every file's bytes, stored once, named by their sha256
    <root>/tasks/<version>.json     a manifest per task version: id, version, files (path ->
                                    sha256, paths as in the task: task.toml, workspace/...), spec
    <root>/sets/<hash>.json         a manifest per task-set version: {task_id: version}, whose
                                    hash (16 hex) is computed from that mapping alone

The root is `$ROLLBOX_HOME/registry`, else `$XDG_DATA_HOME/rollbox/registry`, else
`~/.local/share/rollbox/registry`. Files are written to a temporary name and renamed, and an
existing blob or manifest is not rewritten, so registering again is idempotent (a set keeps
the time and source of its first registration) and two processes registering at once do no harm.
Nothing is fsynced: a file a crash left short is written again by the next registration of the
same tasks, and every file read back is checked against its hash.

Diffs compare two task sets given as a task directory (or `bundled`), a run directory (the task
versions its run.json records), or a registered version (a task set's hash, or a task's version,
or a unique prefix of at least 6 hex digits): tasks added, removed, changed (which files, which
spec fields), and how many are unchanged. A run's task versions that are in the registry diff
file by file; otherwise only the version is known to have changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rollbox.errors import ConfigError, StoreError, TaskError
from rollbox.store.runstore import RUN_FILE, read_run_info
from rollbox.tasks.loader import (
    BUNDLED,
    TASK_FILE,
    content_version,
    load_tasks,
    read_tree,
)
from rollbox.tasks.model import Task

PARTS = ("workspace", "tests", "visible_tests", "solution")  # as content_version reads them
_HEX = re.compile(r"^[0-9a-f]{6,64}$")
_MIN_PREFIX = 6


def rollbox_home() -> Path:
    """Where rollbox keeps its data: $ROLLBOX_HOME, $XDG_DATA_HOME/rollbox or ~/.local/share."""
    if home := os.environ.get("ROLLBOX_HOME"):
        return Path(home).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "rollbox"


def default_registry_root() -> Path:
    return rollbox_home() / "registry"


class _Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TaskVersion(_Manifest):
    """One registered version of a task: its files (path -> sha256) and its spec."""

    id: str
    version: str
    files: dict[str, str]
    spec: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.id}@{self.version}"


class TaskSetVersion(_Manifest):
    """One registered task set: which version of each task; `hash` is computed from `tasks`."""

    hash: str
    tasks: dict[str, str]
    source: str | None = None  # where it was registered from, as given (not part of the hash)
    created: str = ""  # when it was first registered (UTC)


def task_set_hash(tasks: Mapping[str, str]) -> str:
    """The hash of a {task_id: version} mapping (16 hex digits, order does not matter)."""
    canonical = json.dumps(dict(sorted(tasks.items())), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def task_files(task: Task) -> dict[str, bytes]:
    """Every file that makes up the task's version, by path in the task (task.toml first).

    Raises TaskError when the files no longer give the version the task was loaded with.
    """
    toml = (task.root / TASK_FILE).read_bytes()
    parts = {part: read_tree(task.root / part) for part in PARTS}
    if content_version(toml, parts) != task.version:
        raise TaskError(
            f"{task.root}: the task changed on disk since it was loaded (version "
            f"{task.version}); load it again"
        )
    files = {TASK_FILE: toml}
    for part in PARTS:
        files.update({f"{part}/{rel}": data for rel, data in parts[part].items()})
    return files


def _version_of(files: Mapping[str, bytes]) -> str:
    parts: dict[str, dict[str, bytes]] = {p: {} for p in PARTS}
    for path in sorted(files):
        part, _, rel = path.partition("/")
        if part in parts:
            parts[part][rel] = files[path]
    return content_version(files.get(TASK_FILE, b""), parts)


def _write_once(target: Path, data: bytes) -> None:
    """Write `target` unless it holds as many bytes already (same name, same content: a file
    left short or empty by a crash is written again)."""
    try:
        if target.stat().st_size == len(data):
            return
    except FileNotFoundError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


class TaskRegistry:
    """Task versions by content: register task sets, read versions back, rebuild them."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_registry_root()

    def __repr__(self) -> str:
        return f"TaskRegistry({str(self.root)!r})"

    # ---- writing -----------------------------------------------------------------------

    def register_task(self, task: Task) -> TaskVersion:
        """Store one task's files and manifest (what is already there is not rewritten)."""
        files = task_files(task)
        for data in files.values():
            sha = _sha256(data)
            _write_once(self._blob(sha), data)
        manifest = TaskVersion(
            id=task.id,
            version=task.version,
            files={path: _sha256(data) for path, data in files.items()},
            spec=task.spec.model_dump(mode="json", by_alias=True),
        )
        _write_once(self._task_path(task.version), _dump(manifest.model_dump()))
        return manifest

    def register(self, tasks: Iterable[Task], *, source: str | None = None) -> TaskSetVersion:
        """Store every task's version and the set's manifest; returns the set's version."""
        versions: dict[str, str] = {}
        for t in tasks:
            if versions.get(t.id, t.version) != t.version:
                raise ConfigError(f"two different tasks with id {t.id!r} in one task set")
            self.register_task(t)
            versions[t.id] = t.version
        h = task_set_hash(versions)
        try:
            existing = self._read_set(h)
        except StoreError:  # left damaged by a crash: written again below
            existing = None
        if existing is not None:
            return existing
        tsv = TaskSetVersion(
            hash=h,
            tasks=dict(sorted(versions.items())),
            source=source,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        _write_once(self._set_path(h), _dump(tsv.model_dump()))
        return tsv

    # ---- reading -----------------------------------------------------------------------

    def get(self, version: str) -> TaskVersion:
        """A registered task version (KeyError when it is not registered)."""
        found = self._read_task(version)
        if found is None:
            raise KeyError(version)
        return found

    def get_set(self, hash_: str) -> TaskSetVersion:
        """A registered task-set version (KeyError when it is not registered)."""
        found = self._read_set(hash_)
        if found is None:
            raise KeyError(hash_)
        return found

    def resolve(self, ref: str) -> TaskVersion | TaskSetVersion:
        """A task-set hash or task version, whole or a unique prefix (at least 6 hex digits)."""
        if not _HEX.match(ref):
            raise ConfigError(f"{ref!r} is not a version (6 to 64 hex digits)")
        hits = [("set", n) for n in self._names("sets", ref)]
        hits += [("task", n) for n in self._names("tasks", ref)]
        if not hits:
            raise ConfigError(f"no task or task-set version {ref!r} in the registry {self.root}")
        if len(hits) > 1:
            names = ", ".join(n for _, n in hits[:5])
            raise ConfigError(f"{ref!r} is ambiguous in the registry: {names}")
        kind, name = hits[0]
        return self.get_set(name) if kind == "set" else self.get(name)

    def read_blob(self, sha: str) -> bytes:
        """A stored file's bytes, checked against their hash."""
        path = self._blob(sha)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"{path}: missing from the registry (damaged?)") from None
        if _sha256(data) != sha:
            raise StoreError(f"{path}: the bytes do not match their hash (damaged)")
        return data

    def materialize(self, version: str, dest: Path | str) -> Path:
        """Rebuild a registered task version, or every task of a task-set version, as task
        directories `dest/<id>/` (checked against their versions); returns `dest`."""
        dest = Path(dest)
        found = self.resolve(version)
        manifests = (
            [found]
            if isinstance(found, TaskVersion)
            else [self.get(v) for _, v in sorted(found.tasks.items())]
        )
        for m in manifests:
            if (dest / m.id).exists():
                raise ConfigError(f"{dest / m.id} already exists; choose an empty destination")
        for m in manifests:
            files = {path: self.read_blob(sha) for path, sha in m.files.items()}
            if _version_of(files) != m.version:
                raise StoreError(f"the registry's files for {m.key} do not give that version")
            for path, data in files.items():
                target = dest / m.id / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            for part in ("workspace", "tests", "solution"):  # may be empty, must exist
                (dest / m.id / part).mkdir(parents=True, exist_ok=True)
        return dest

    # ---- internals ---------------------------------------------------------------------

    def _blob(self, sha: str) -> Path:
        return self.root / "blobs" / sha[:2] / sha

    def _task_path(self, version: str) -> Path:
        return self.root / "tasks" / f"{version}.json"

    def _set_path(self, hash_: str) -> Path:
        return self.root / "sets" / f"{hash_}.json"

    def _names(self, kind: str, prefix: str) -> list[str]:
        d = self.root / kind
        if not d.is_dir():
            return []
        names = sorted(p.stem for p in d.glob(f"{prefix}*.json"))
        return [prefix] if prefix in names else names

    def _read_task(self, version: str) -> TaskVersion | None:
        return (
            _read_manifest(self._task_path(version), TaskVersion) if _HEX.match(version) else None
        )

    def _read_set(self, hash_: str) -> TaskSetVersion | None:
        return _read_manifest(self._set_path(hash_), TaskSetVersion) if _HEX.match(hash_) else None


_M = TypeVar("_M", bound=_Manifest)


def _dump(obj: Mapping[str, Any]) -> bytes:
    return (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode()


def _read_manifest(path: Path, cls: type[_M]) -> _M | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return cls.model_validate_json(raw)
    except ValidationError as e:
        raise StoreError(f"{path}: not a valid manifest ({e.error_count()} problems)") from None


# ---- diffs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskState:
    """One task in a task set, as far as it is known: files and spec may be unknown (None)."""

    id: str
    version: str
    files: Mapping[str, str] | None = None  # path -> sha256
    spec: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class TaskSetState:
    """A task set to diff: what it is called, its tasks, and the tasks that failed to load."""

    label: str
    tasks: Mapping[str, TaskState]
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskChange:
    """A task in both sets, at different versions."""

    id: str
    a_version: str
    b_version: str
    files_added: tuple[str, ...] = ()
    files_removed: tuple[str, ...] = ()
    files_changed: tuple[str, ...] = ()
    spec_fields: tuple[str, ...] = ()  # dotted names of the task.toml fields that differ
    known: bool = True  # False: one side's files are unknown (a run's unregistered version)


@dataclass(frozen=True)
class TaskSetDiff:
    """What changed from set `a` to set `b`."""

    a: str
    b: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[TaskChange, ...] = ()
    unchanged: int = 0
    warnings: tuple[str, ...] = field(default=())

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """The diff for people, one line each."""
        out = [f"a: {self.a}", f"b: {self.b}"]
        out += [f"warning: {w}" for w in self.warnings]
        out += [f"+ {t}  (added)" for t in self.added]
        out += [f"- {t}  (removed)" for t in self.removed]
        for c in self.changed:
            out.append(f"~ {c.id}  {c.a_version} -> {c.b_version}")
            if not c.known:
                out.append("    files unknown (a version that is not in the registry)")
            for what, paths in (
                ("added", c.files_added),
                ("removed", c.files_removed),
                ("changed", c.files_changed),
            ):
                if paths:
                    out.append(f"    files {what}: {', '.join(paths)}")
            if c.spec_fields:
                out.append(f"    task.toml fields changed: {', '.join(c.spec_fields)}")
        out.append(
            f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed, "
            f"{self.unchanged} unchanged"
        )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": [
                {
                    "id": c.id,
                    "a_version": c.a_version,
                    "b_version": c.b_version,
                    "files_added": list(c.files_added),
                    "files_removed": list(c.files_removed),
                    "files_changed": list(c.files_changed),
                    "spec_fields": list(c.spec_fields),
                    "known": c.known,
                }
                for c in self.changed
            ],
            "unchanged": self.unchanged,
            "warnings": list(self.warnings),
        }


def state_of_tasks(tasks: Iterable[Task], label: str) -> TaskSetState:
    """A loaded task set, with every file's hash and the spec."""
    states = {}
    for t in tasks:
        files = task_files(t)
        states[t.id] = TaskState(
            t.id,
            t.version,
            {path: _sha256(data) for path, data in files.items()},
            t.spec.model_dump(mode="json", by_alias=True),
        )
    return TaskSetState(label, states)


def _state_of_versions(
    versions: Mapping[str, str], label: str, registry: TaskRegistry
) -> TaskSetState:
    states = {}
    for task_id, version in versions.items():
        try:
            m: TaskVersion | None = registry.get(version)
        except KeyError:
            m = None
        if m is not None and m.id == task_id:
            states[task_id] = TaskState(task_id, version, m.files, m.spec)
        else:
            states[task_id] = TaskState(task_id, version)
    return TaskSetState(label, states)


def run_task_versions(run_dir: Path) -> tuple[str, dict[str, str]]:
    """(run_id, {task_id: version}) as a run directory's run.json records them."""
    info = read_run_info(run_dir)
    versions = info["config"].get("task_versions")
    if not isinstance(versions, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in versions.items()
    ):
        raise ConfigError(f"{run_dir / RUN_FILE}: the run does not record its task versions")
    return str(info["run_id"]), dict(versions)


def state_of(ref: str, registry: TaskRegistry | None = None) -> TaskSetState:
    """A task set named by a task directory or `bundled`, a run directory, or a registered
    version (a task set's hash or a task's version, or a unique prefix of one)."""
    registry = registry or TaskRegistry()
    path = Path(ref).expanduser()
    if ref == BUNDLED or path.is_dir():
        if path.is_dir() and (path / RUN_FILE).is_file():
            run_id, versions = run_task_versions(path)
            return _state_of_versions(versions, f"run {run_id} ({ref})", registry)
        ts = load_tasks(ref)
        state = state_of_tasks(ts, ref)
        return TaskSetState(state.label, state.tasks, tuple(str(e) for e in ts.errors))
    if path.exists():
        raise ConfigError(f"{ref!r} is a file: give a task directory, a run directory or a version")
    if not _HEX.match(ref):
        raise ConfigError(
            f"{ref!r} is not a task directory, a run directory, 'bundled' or a registered version"
        )
    found = registry.resolve(ref)
    if isinstance(found, TaskSetVersion):
        return _state_of_versions(found.tasks, f"task set {found.hash}", registry)
    return TaskSetState(
        f"task {found.key}",
        {found.id: TaskState(found.id, found.version, found.files, found.spec)},
    )


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def _change(a: TaskState, b: TaskState) -> TaskChange:
    if a.files is None or b.files is None:
        return TaskChange(a.id, a.version, b.version, known=False)
    fa, fb = a.files, b.files
    spec_fields: tuple[str, ...] = ()
    if a.spec is not None and b.spec is not None:
        sa, sb = _flatten(a.spec), _flatten(b.spec)
        spec_fields = tuple(sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k)))
    return TaskChange(
        a.id,
        a.version,
        b.version,
        files_added=tuple(sorted(set(fb) - set(fa))),
        files_removed=tuple(sorted(set(fa) - set(fb))),
        files_changed=tuple(sorted(p for p in set(fa) & set(fb) if fa[p] != fb[p])),
        spec_fields=spec_fields,
    )


def diff(a: TaskSetState, b: TaskSetState) -> TaskSetDiff:
    """What changed from `a` to `b`: tasks added, removed, changed (files, spec fields)."""
    ids_a, ids_b = set(a.tasks), set(b.tasks)
    changed = []
    unchanged = 0
    for task_id in sorted(ids_a & ids_b):
        ta, tb = a.tasks[task_id], b.tasks[task_id]
        if ta.version == tb.version:
            unchanged += 1
        else:
            changed.append(_change(ta, tb))
    warnings = tuple(f"{s.label}: {e}" for s in (a, b) for e in s.errors)
    return TaskSetDiff(
        a=f"{a.label} ({len(a.tasks)} tasks)",
        b=f"{b.label} ({len(b.tasks)} tasks)",
        added=tuple(sorted(ids_b - ids_a)),
        removed=tuple(sorted(ids_a - ids_b)),
        changed=tuple(changed),
        unchanged=unchanged,
        warnings=warnings,
    )
