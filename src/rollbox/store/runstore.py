"""The run directory: every episode of a run, durable, indexed, and resumable after a crash.

    <out>/run.json            what the run is: the caller's config, run_id, created, rollbox version
    <out>/trajectories.jsonl  one Trajectory per line, append-only: the source of truth
    <out>/index.sqlite        SQLite (WAL) index of the JSONL: one row per episode, with its line
    <out>/summary.json        written at the end by write_summary(), atomically

Writing. `add(traj)` appends the episode's line, flushes and fsyncs it, and only then commits the
index row; an episode is committed once `add()` returns. Adding an episode_id the run already
holds raises `DuplicateEpisodeError` (never a second line). `add()` takes a lock and is quick
(one write, one fsync, one SQLite commit), so threads and asyncio code may call it directly.

Opening repairs what a crash (SIGKILL, power loss) can leave, with the JSONL as the truth:
bytes after the last newline (a torn line: never committed) are truncated away; index rows that
point past the end of the JSONL are dropped; lines the index lacks are indexed; an index that
cannot be trusted (unreadable, another schema, holes) is rebuilt from the JSONL. What was done
is listed in `RunStore.repairs`. A complete line that is not a valid trajectory is never dropped:
opening fails and names the file and line. One process at a time may hold a run open (a `flock`
on the JSONL); the kernel drops the lock when the holder dies.

Resuming. `open_or_create(path, config)` resumes the run in `path` when its config is the same
as `config` and refuses (ConfigError naming every difference) when it is not. The config is
compared whole by default: everything the caller puts in it (tasks, versions, policy, seed,
samples, budgets) counts as defining which episodes the run holds; pass `identity_keys` to
compare only those top-level keys, and keep settings that may change between attempts (workers,
log level) out of the config or out of `identity_keys`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

from pydantic import BaseModel, ValidationError

from rollbox import __version__
from rollbox.agent.types import TRAJECTORY_SCHEMA, Trajectory
from rollbox.errors import ConfigError, DuplicateEpisodeError, StoreError

RUN_FILE = "run.json"
JSONL_FILE = "trajectories.jsonl"
INDEX_FILE = "index.sqlite"
SUMMARY_FILE = "summary.json"
RUN_SCHEMA = 1  # bump when run.json changes shape
INDEX_SCHEMA = 1  # bump when the episodes table changes; an index of another schema is rebuilt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeRow:
    """One episode as the index holds it: what reports and resumption need, without the steps."""

    episode_id: str
    task_id: str
    task_version: str
    family: str
    difficulty: str
    split: str
    sample: int
    seed: int
    reward: float | None
    passed: bool
    stop_reason: str
    terminated: bool
    truncated: bool
    infra_error: str | None
    turns: int
    prompt_tokens: int
    completion_tokens: int
    started_at: float
    wall_s: float
    schema_version: int
    line_no: int  # 1-based line of the episode in trajectories.jsonl
    line_offset: int  # byte offset of that line
    line_length: int  # bytes, the newline included

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


_COLUMNS = tuple(EpisodeRow.__dataclass_fields__)
_BOOL_COLUMNS = frozenset({"passed", "terminated", "truncated"})
_SCHEMA_SQL = """
CREATE TABLE episodes (
    episode_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    task_version TEXT NOT NULL,
    family TEXT NOT NULL,
    difficulty TEXT NOT NULL,
    split TEXT NOT NULL,
    sample INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    reward REAL,
    passed INTEGER NOT NULL,
    stop_reason TEXT NOT NULL,
    terminated INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    infra_error TEXT,
    turns INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    started_at REAL NOT NULL,
    wall_s REAL NOT NULL,
    schema_version INTEGER NOT NULL,
    line_no INTEGER NOT NULL UNIQUE,
    line_offset INTEGER NOT NULL UNIQUE,
    line_length INTEGER NOT NULL
);
CREATE INDEX episodes_task ON episodes (task_id);
"""
_INSERT_SQL = (
    f"INSERT INTO episodes ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
)


class RunStore:
    """A run directory opened for writing; build it with `create`, `open` or `open_or_create`."""

    def __init__(self, path: Path, info: dict[str, Any]) -> None:
        """Internal: use the class methods. Takes the run's lock, repairs, and indexes."""
        self.path = path
        self.info = info
        self.repairs: list[str] = []  # what opening had to fix, one line each
        self._lock = threading.Lock()
        self._jsonl = path / JSONL_FILE
        self._db: sqlite3.Connection | None = None
        self._ids: set[str] = set()
        self._lines = 0
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            self._fd = os.open(self._jsonl, flags, 0o644)
        except OSError as e:
            raise StoreError(f"{self._jsonl}: cannot open: {e}") from e
        try:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreError(f"{path}: the run is open in another process") from None
            self._size = self._repair_tail()
            self._db = self._open_index()
            self._reconcile()
        except OSError as e:
            self._close_handles()
            raise StoreError(f"{path}: cannot open the run: {e}") from e
        except BaseException:
            self._close_handles()
            raise

    # ---- building ------------------------------------------------------------------------

    @classmethod
    def create(
        cls, path: Path | str, config: Mapping[str, Any], *, run_id: str | None = None
    ) -> Self:
        """Start a new run in `path` (made if missing). Refuses when a run is already there:
        resume that one with `open` / `open_or_create`, or choose another directory."""
        path = Path(path)
        cfg = _normalize_config(config)
        _check_dir(path)
        if (path / RUN_FILE).exists():
            info = read_run_info(path)
            diff = _config_diff(info["config"], cfg, None)
            if diff:
                raise _mismatch(path, info, diff)
            raise ConfigError(
                f"{path} already holds run {info['run_id']} with this config; "
                "resume it (open_or_create) instead of creating it again"
            )
        leftovers = [n for n in (JSONL_FILE, INDEX_FILE) if (path / n).exists()]
        if leftovers:
            raise ConfigError(
                f"{path} holds {', '.join(leftovers)} but no {RUN_FILE}: not a rollbox run, or a "
                "damaged one; choose a new output directory (--out)"
            )
        info = {
            "run_schema": RUN_SCHEMA,
            "run_id": run_id or _new_run_id(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "rollbox_version": __version__,
            "config": cfg,
        }
        try:
            path.mkdir(parents=True, exist_ok=True)
            _write_json_exclusive(path / RUN_FILE, info)
        except OSError as e:
            raise ConfigError(f"cannot create a run in {path}: {e}") from e
        return cls(path, info)

    @classmethod
    def open(cls, path: Path | str) -> Self:
        """Open the existing run in `path` (to resume or read it), repairing what a crash left."""
        path = Path(path)
        _check_dir(path)
        if not (path / RUN_FILE).exists():
            raise ConfigError(f"{path}: no rollbox run here (no {RUN_FILE})")
        return cls(path, read_run_info(path))

    @classmethod
    def open_or_create(
        cls,
        path: Path | str,
        config: Mapping[str, Any],
        *,
        resume: bool = True,
        identity_keys: Collection[str] | None = None,
        run_id: str | None = None,
    ) -> Self:
        """Resume the run in `path` if it has the same config, else create it.

        The configs are compared whole, or on `identity_keys` (top-level keys) when given; a
        difference raises ConfigError naming each one. With `resume=False` an existing run is
        refused whatever its config (nothing is ever overwritten). `run_id` is used on creation.
        """
        path = Path(path)
        cfg = _normalize_config(config)
        _check_dir(path)
        if not (path / RUN_FILE).exists():
            return cls.create(path, cfg, run_id=run_id)
        info = read_run_info(path)
        diff = _config_diff(info["config"], cfg, identity_keys)
        if diff:
            raise _mismatch(path, info, diff)
        if not resume:
            raise ConfigError(
                f"{path} already holds run {info['run_id']}; resume it or choose a new output "
                "directory (--out)"
            )
        return cls(path, info)

    # ---- properties ----------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return str(self.info["run_id"])

    @property
    def config(self) -> dict[str, Any]:
        """The run's config as stored in run.json (a copy)."""
        return cast(dict[str, Any], json.loads(json.dumps(self.info["config"])))

    # ---- writing -------------------------------------------------------------------------

    def add(self, traj: Trajectory) -> None:
        """Append one finished episode: its line is on disk (fsynced) before its index row.

        Raises DuplicateEpisodeError if the run already holds `traj.episode_id`, and StoreError
        if the trajectory belongs to another run or the write fails (nothing is then kept).
        """
        if traj.run_id != self.run_id:
            raise StoreError(
                f"episode {traj.episode_id} belongs to run {traj.run_id}, not {self.run_id}"
            )
        if traj.schema_version > TRAJECTORY_SCHEMA:
            raise StoreError(
                f"episode {traj.episode_id} has schema_version {traj.schema_version}; this "
                f"rollbox writes {TRAJECTORY_SCHEMA}"
            )
        data = traj.model_dump_json().encode() + b"\n"
        with self._lock:
            db = self._live()
            if traj.episode_id in self._ids:
                raise DuplicateEpisodeError(f"run {self.run_id} already holds {traj.episode_id}")
            offset, line_no = self._size, self._lines + 1
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
                os.fsync(self._fd)
            except OSError as e:
                try:
                    os.ftruncate(self._fd, offset)  # no partial line for the next add to extend
                except OSError:
                    self._close_handles()  # cannot undo it: no more writes (reopen repairs)
                raise StoreError(f"{self._jsonl}: cannot write {traj.episode_id}: {e}") from e
            self._size, self._lines = offset + len(data), line_no
            self._ids.add(traj.episode_id)
            try:
                with _transaction(db):
                    db.execute(_INSERT_SQL, _row_values(traj, line_no, offset, len(data)))
            except sqlite3.Error as e:
                raise StoreError(
                    f"{traj.episode_id} is saved in {JSONL_FILE} but not indexed ({e}); "
                    "reopening the run indexes it"
                ) from e

    def write_summary(self, summary: Mapping[str, Any]) -> Path:
        """Write summary.json atomically (a reader sees the old file or the new, never half)."""
        target = self.path / SUMMARY_FILE
        _write_json_atomic(target, dict(summary))
        return target

    def read_summary(self) -> dict[str, Any] | None:
        """summary.json, or None when it was not written yet."""
        target = self.path / SUMMARY_FILE
        try:
            data = json.loads(target.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise StoreError(f"{target}: cannot read: {e}") from e
        if not isinstance(data, dict):
            raise StoreError(f"{target}: not a JSON object")
        return data

    # ---- reading -------------------------------------------------------------------------

    def done_ids(self) -> set[str]:
        """The episode_ids the run holds (finished, whatever their outcome): a resume skips them."""
        with self._lock:
            self._live()
            return set(self._ids)

    def count(self) -> int:
        with self._lock:
            self._live()
            return len(self._ids)

    def __len__(self) -> int:
        return self.count()

    def __contains__(self, episode_id: object) -> bool:
        with self._lock:
            self._live()
            return episode_id in self._ids

    def rows(self) -> list[EpisodeRow]:
        """Every episode's index row, in the order they were added."""
        with self._lock:
            cur = self._live().execute(
                f"SELECT {', '.join(_COLUMNS)} FROM episodes ORDER BY line_offset"
            )
            return [_to_row(r) for r in cur.fetchall()]

    def get(self, episode_id: str) -> Trajectory:
        """One episode, read back from the JSONL through its index row (KeyError if absent)."""
        with self._lock:
            hit = (
                self._live()
                .execute(
                    "SELECT line_offset, line_length, line_no FROM episodes WHERE episode_id = ?",
                    (episode_id,),
                )
                .fetchone()
            )
        if hit is None:
            raise KeyError(episode_id)
        offset, length, line_no = hit
        with open(self._jsonl, "rb") as f:
            f.seek(offset)
            return self._parse(f.read(length), line_no)

    def trajectories(self) -> Iterator[Trajectory]:
        """Every episode, parsed back into Trajectory, in the order they were added.

        Reads the JSONL as it was when called; episodes added meanwhile are not included.
        """
        with self._lock:
            self._live()
            end = self._size
        with open(self._jsonl, "rb") as f:
            pos, line_no = 0, 0
            while pos < end:
                raw = f.readline()
                pos += len(raw)
                line_no += 1
                yield self._parse(raw, line_no)

    # ---- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the index and release the run (idempotent)."""
        with self._lock:
            self._close_handles()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r}, run_id={self.info.get('run_id')!r})"

    # ---- internals -----------------------------------------------------------------------

    def _live(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"{self.path}: the run store is closed")
        return self._db

    def _close_handles(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._fd >= 0:
            os.close(self._fd)  # drops the flock
            self._fd = -1

    def _parse(self, raw: bytes, line_no: int) -> Trajectory:
        where = f"{self._jsonl}:{line_no}"
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise StoreError(f"{where}: not valid JSON ({e}); the file is damaged") from None
        if not isinstance(data, dict):
            raise StoreError(f"{where}: not a JSON object; the file is damaged")
        version = data.get("schema_version", TRAJECTORY_SCHEMA)
        if isinstance(version, int) and version > TRAJECTORY_SCHEMA:
            raise StoreError(
                f"{where}: trajectory schema_version {version} is newer than this rollbox "
                f"knows ({TRAJECTORY_SCHEMA}); upgrade rollbox to read this run"
            )
        try:
            return Trajectory.model_validate(data)
        except ValidationError as e:
            raise StoreError(f"{where}: not a valid trajectory: {e}") from None

    def _repair_tail(self) -> int:
        """Truncate a torn last line (bytes after the last newline); returns the new size."""
        size = os.fstat(self._fd).st_size
        end = _after_last_newline(self._fd, size)
        if end < size:
            os.ftruncate(self._fd, end)
            os.fsync(self._fd)
            self._note(f"dropped a torn last line of {JSONL_FILE} ({size - end} bytes)")
        return end

    def _open_index(self) -> sqlite3.Connection:
        target = self.path / INDEX_FILE
        if not target.exists():
            _remove_index(target)  # a stale -wal of a deleted index must not be replayed
        for attempt in (1, 2):
            db: sqlite3.Connection | None = None
            try:
                db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # the JSONL is fsynced; this is a cache
                version = db.execute("PRAGMA user_version").fetchone()[0]
                tables = db.execute("SELECT name FROM sqlite_master WHERE name = 'episodes'")
                if version != INDEX_SCHEMA or tables.fetchone() is None:
                    db.executescript(
                        f"BEGIN; DROP TABLE IF EXISTS episodes; {_SCHEMA_SQL}"
                        f"PRAGMA user_version = {INDEX_SCHEMA}; COMMIT;"
                    )
                return db
            except sqlite3.DatabaseError as e:
                if db is not None:
                    db.close()
                if attempt == 2:
                    raise StoreError(f"{target}: cannot open the index: {e}") from e
                _remove_index(target)
                self._note(f"removed an unreadable {INDEX_FILE} ({e})")
        raise AssertionError("unreachable")

    def _reconcile(self) -> None:
        """Bring the index in line with the JSONL; the JSONL wins every disagreement."""
        db = self._live()
        with _transaction(db):
            dropped = db.execute(
                "DELETE FROM episodes WHERE line_offset + line_length > ?", (self._size,)
            ).rowcount
        if dropped:
            self._note(f"dropped {dropped} index rows past the end of {JSONL_FILE}")
        rows = db.execute(
            "SELECT line_offset, line_length, line_no, episode_id FROM episodes "
            "ORDER BY line_offset"
        ).fetchall()
        end, lines, trusted = 0, 0, True
        for offset, length, line_no, _ in rows:
            if offset != end or line_no != lines + 1:
                trusted = False
                break
            end, lines = offset + length, line_no
        if trusted and rows and not self._line_is(rows[-1][0], rows[-1][1], rows[-1][3]):
            trusted = False
        if not trusted:
            self._note(f"rebuilt {INDEX_FILE} from {JSONL_FILE} (it did not match)")
            with _transaction(db):
                db.execute("DELETE FROM episodes")
            end, lines, rows = 0, 0, []
        self._ids = {r[3] for r in rows}
        self._lines = lines
        added = self._index_from(end, lines)
        if added and trusted:
            self._note(f"indexed {added} episodes missing from {INDEX_FILE}")

    def _line_is(self, offset: int, length: int, episode_id: str) -> bool:
        raw = os.pread(self._fd, length, offset)
        if not raw.endswith(b"\n"):
            return False
        try:
            return bool(json.loads(raw).get("episode_id") == episode_id)
        except (ValueError, AttributeError):
            return False

    def _index_from(self, start: int, lines: int) -> int:
        """Index every JSONL line from byte `start` (line `lines + 1`); all or nothing."""
        db = self._live()
        added: list[str] = []
        with open(self._jsonl, "rb") as f, _transaction(db):
            f.seek(start)
            pos = start
            while pos < self._size:
                raw = f.readline()
                lines += 1
                traj = self._parse(raw, lines)
                if traj.episode_id in self._ids or traj.episode_id in added:
                    raise StoreError(
                        f"{self._jsonl}:{lines}: episode {traj.episode_id} appears a second time; "
                        "the file is damaged (written by two processes?)"
                    )
                db.execute(_INSERT_SQL, _row_values(traj, lines, pos, len(raw)))
                added.append(traj.episode_id)
                pos += len(raw)
        self._ids.update(added)
        self._lines = lines
        return len(added)

    def _note(self, what: str) -> None:
        log.warning("%s: %s", self.path, what)
        self.repairs.append(what)


# ---- helpers -----------------------------------------------------------------------------


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One explicit transaction (the connection is in autocommit mode otherwise)."""
    db.execute("BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _row_values(traj: Trajectory, line_no: int, offset: int, length: int) -> tuple[Any, ...]:
    values: dict[str, Any] = {
        "turns": traj.turns,
        "line_no": line_no,
        "line_offset": offset,
        "line_length": length,
    }
    for name in _COLUMNS:
        if name not in values:
            values[name] = getattr(traj, name)
    return tuple(int(values[c]) if c in _BOOL_COLUMNS else values[c] for c in _COLUMNS)


def _to_row(values: tuple[Any, ...]) -> EpisodeRow:
    fields: dict[str, Any] = {
        c: bool(v) if c in _BOOL_COLUMNS else v for c, v in zip(_COLUMNS, values, strict=True)
    }
    return EpisodeRow(**fields)


def _after_last_newline(fd: int, size: int, chunk: int = 1 << 16) -> int:
    """The byte just after the file's last newline (0 when it has none)."""
    pos = size
    while pos > 0:
        start = max(0, pos - chunk)
        found = os.pread(fd, pos - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        pos = start
    return 0


def _check_dir(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path} is a file, not a run directory; choose a directory (--out)")


def read_run_info(path: Path) -> dict[str, Any]:
    """A run directory's run.json, checked (read-only: no lock, no repair)."""
    target = path / RUN_FILE
    try:
        info = json.loads(target.read_bytes())
    except OSError as e:
        raise StoreError(f"{target}: cannot read: {e}") from e
    except ValueError as e:
        raise StoreError(f"{target}: corrupt (not valid JSON: {e})") from None
    if not isinstance(info, dict):
        raise StoreError(f"{target}: corrupt (not a JSON object)")
    version = info.get("run_schema")
    if not isinstance(version, int):
        raise StoreError(f"{target}: corrupt (no run_schema)")
    if version > RUN_SCHEMA:
        raise StoreError(
            f"{target}: run_schema {version} is newer than this rollbox knows ({RUN_SCHEMA}); "
            "upgrade rollbox to open this run"
        )
    if not isinstance(info.get("run_id"), str) or not isinstance(info.get("config"), dict):
        raise StoreError(f"{target}: corrupt (run_id or config missing)")
    return info


def _normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config as JSON will store it (paths as strings, tuples as lists, models dumped)."""

    def default(value: object) -> object:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        if isinstance(value, set | frozenset):
            return sorted(value)
        raise TypeError(f"{type(value).__name__} is not JSON-serializable")

    if not isinstance(config, Mapping):
        raise ConfigError(f"a run's config must be a mapping, not {type(config).__name__}")
    try:
        out = json.loads(json.dumps(dict(config), default=default))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"the run's config cannot be stored as JSON: {e}") from None
    return cast(dict[str, Any], out)


def _config_diff(
    stored: dict[str, Any], given: dict[str, Any], keys: Collection[str] | None, prefix: str = ""
) -> list[str]:
    """Each difference as one line, nested dicts compared key by key (dotted names)."""
    names = sorted(set(stored) | set(given)) if keys is None else sorted(keys)
    out: list[str] = []
    for key in names:
        name, old, new = f"{prefix}{key}", stored.get(key), given.get(key)
        if key not in stored and key not in given:
            continue
        if key not in given:
            out.append(f"{name}: the run has {old!r}, the new config lacks it")
        elif key not in stored:
            out.append(f"{name}: the run lacks it, the new config has {new!r}")
        elif isinstance(old, dict) and isinstance(new, dict):
            out.extend(_config_diff(old, new, None, f"{name}."))
        elif old != new:
            out.append(f"{name}: the run has {old!r}, the new config has {new!r}")
    return out


def _mismatch(path: Path, info: dict[str, Any], diff: list[str]) -> ConfigError:
    return ConfigError(
        f"{path} holds run {info['run_id']} with a different config ("
        + "; ".join(diff)
        + "); choose a new output directory (--out) for this config, or resume with the run's own"
    )


def _new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def _dump(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode()


def _write_tmp(target: Path, data: bytes) -> Path:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json_atomic(target: Path, obj: dict[str, Any]) -> None:
    tmp = _write_tmp(target, _dump(obj))
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _write_json_exclusive(target: Path, obj: dict[str, Any]) -> None:
    """Write `target` whole, failing if it exists (two creators of one run: one wins)."""
    tmp = _write_tmp(target, _dump(obj))
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise ConfigError(f"{target.parent}: another process created a run here") from None
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(target.parent)


def _remove_index(target: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
