"""Per-sandbox control groups, v1 and v2, through the kernel's own files.

A sandbox's processes all live in one group (one per controller on v1). The group enforces
memory and process limits for the whole sandbox, accounts its CPU time and peak memory, counts
out-of-memory kills, and is how everything in it is killed at the end.
"""

from __future__ import annotations

import abc
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from rollbox.errors import SandboxError

GROUP = "rollbox"
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer", "cpu")
CFS_PERIOD_US = 100_000
V2_CONTROLLERS = ("memory", "pids", "cpu")


def _swap_total() -> int:
    with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/meminfo") as f:
        return int(next(line for line in f if line.startswith("SwapTotal:")).split()[1])
    return 1  # unknown: assume there is swap, and limit it too


_HAS_SWAP = _swap_total() > 0


def _write(path: Path | str, value: str) -> None:
    # raw system calls: these run several times per command, and a file object costs more
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read(path: Path | str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _kv(path: Path | str) -> dict[str, int]:
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in _read(path).splitlines():
            k, _, v = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[k] = int(v)
    return out


class Cgroup(abc.ABC):
    """The control group of one sandbox."""

    name: str

    @abc.abstractmethod
    def add(self, pid: int) -> None:
        """Move a process (and later its children) into the group."""

    @abc.abstractmethod
    def procs(self) -> list[int]:
        """Host pids of every process in the group."""

    @abc.abstractmethod
    def cpu_s(self) -> float:
        """CPU seconds used by the group so far."""

    @abc.abstractmethod
    def peak_memory_kb(self) -> int | None:
        """Peak memory since the last reset_peak()."""

    @abc.abstractmethod
    def reset_peak(self) -> None: ...

    @abc.abstractmethod
    def oom_kills(self) -> int:
        """Processes killed by the kernel for lack of memory in this group so far."""

    @abc.abstractmethod
    def set_frozen(self, frozen: bool) -> None: ...

    @abc.abstractmethod
    def _remove_dirs(self) -> None: ...

    def kill_all(self, timeout_s: float = 5.0) -> None:
        """Kill every process in the group, frozen first so that none can fork away."""
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.procs()
            if not pids:
                return
            with contextlib.suppress(OSError):
                self.set_frozen(True)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.set_frozen(False)
            if time.monotonic() > deadline:
                raise SandboxError(f"processes of cgroup {self.name} survive SIGKILL: {pids}")
            time.sleep(0.002)

    def remove_if_empty(self) -> bool:
        """Remove the group unless a process is still in it (the kernel refuses then)."""
        try:
            self._remove_dirs()
        except OSError:
            return False
        return True

    def destroy(self) -> None:
        """Kill what is left, then remove the group. Idempotent."""
        if self.remove_if_empty():
            return
        with contextlib.suppress(FileNotFoundError):
            self.kill_all()
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self._remove_dirs()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)  # the kernel releases a group a moment after its last exit


@dataclass(frozen=True)
class Limits:
    memory_bytes: int
    pids: int
    cpus: float = 1.0  # a CFS quota: cores' worth of CPU time per period


class CgroupV1(Cgroup):
    def __init__(self, roots: dict[str, Path], name: str, limits: Limits) -> None:
        self._name(roots, name)
        try:
            for d in self.dirs.values():
                d.mkdir(parents=True, exist_ok=True)
            mem = self.dirs["memory"]
            _write(mem / "memory.limit_in_bytes", str(limits.memory_bytes))
            if _HAS_SWAP and (mem / "memory.memsw.limit_in_bytes").exists():
                _write(mem / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
            _write(self.dirs["pids"] / "pids.max", str(limits.pids))
            # the period is the kernel's default (100 ms): only the quota needs writing
            _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(int(limits.cpus * CFS_PERIOD_US)))
        except OSError as e:
            self._remove_dirs_quietly()
            raise SandboxError(f"could not set up cgroup {name}: {e}") from e

    def _name(self, roots: dict[str, Path], name: str) -> None:
        self.name = name
        self.dirs = {c: roots[c] / GROUP / name for c in V1_CONTROLLERS}
        # the files read or written around every command, as strings made once
        self._usage = str(self.dirs["cpuacct"] / "cpuacct.usage")
        self._peak = str(self.dirs["memory"] / "memory.max_usage_in_bytes")
        self._oom = str(self.dirs["memory"] / "memory.oom_control")

    def add(self, pid: int) -> None:
        for d in self.dirs.values():
            _write(d / "cgroup.procs", str(pid))

    def procs(self) -> list[int]:
        seen: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(FileNotFoundError):
                seen.update(int(x) for x in _read(d / "cgroup.procs").split())
        return sorted(seen)

    def cpu_s(self) -> float:
        return int(_read(self._usage)) / 1e9

    def peak_memory_kb(self) -> int | None:
        return int(_read(self._peak)) // 1024

    def reset_peak(self) -> None:
        with contextlib.suppress(OSError):
            _write(self._peak, "0")

    def oom_kills(self) -> int:
        return _kv(self._oom).get("oom_kill", 0)

    def memory_kb(self) -> int:
        return int(_read(self.dirs["memory"] / "memory.usage_in_bytes")) // 1024

    def set_frozen(self, frozen: bool) -> None:
        state = self.dirs["freezer"] / "freezer.state"
        _write(state, "FROZEN" if frozen else "THAWED")
        if frozen:
            deadline = time.monotonic() + 1.0
            while _read(state).strip() != "FROZEN" and time.monotonic() < deadline:
                time.sleep(0.001)

    def _remove_dirs(self) -> None:
        for d in self.dirs.values():
            with contextlib.suppress(FileNotFoundError):
                d.rmdir()

    def _remove_dirs_quietly(self) -> None:
        with contextlib.suppress(OSError):
            self._remove_dirs()


class CgroupV2(Cgroup):
    def __init__(self, root: Path, name: str, limits: Limits) -> None:
        self.name = name
        self.dir = root / GROUP / name
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _write(self.dir / "memory.max", str(limits.memory_bytes))
            if (self.dir / "memory.swap.max").exists():
                _write(self.dir / "memory.swap.max", "0")
            _write(self.dir / "pids.max", str(limits.pids))
            _write(self.dir / "cpu.max", f"{int(limits.cpus * CFS_PERIOD_US)} {CFS_PERIOD_US}")
        except OSError as e:
            with contextlib.suppress(OSError):
                self.dir.rmdir()
            raise SandboxError(f"could not set up cgroup {name}: {e}") from e

    def add(self, pid: int) -> None:
        _write(self.dir / "cgroup.procs", str(pid))

    def procs(self) -> list[int]:
        try:
            return sorted(int(x) for x in _read(self.dir / "cgroup.procs").split())
        except FileNotFoundError:
            return []

    def cpu_s(self) -> float:
        return _kv(self.dir / "cpu.stat").get("usage_usec", 0) / 1e6

    def peak_memory_kb(self) -> int | None:
        try:
            return int(_read(self.dir / "memory.peak")) // 1024
        except (OSError, ValueError):
            return None

    def reset_peak(self) -> None:
        with contextlib.suppress(OSError):
            _write(self.dir / "memory.peak", "0")  # resettable since Linux 6.12

    def oom_kills(self) -> int:
        return _kv(self.dir / "memory.events").get("oom_kill", 0)

    def memory_kb(self) -> int:
        return int(_read(self.dir / "memory.current")) // 1024

    def set_frozen(self, frozen: bool) -> None:
        _write(self.dir / "cgroup.freeze", "1" if frozen else "0")

    def kill_all(self, timeout_s: float = 5.0) -> None:
        if (self.dir / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(self.dir / "cgroup.kill", "1")
        super().kill_all(timeout_s)

    def _remove_dirs(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.dir.rmdir()


@dataclass(frozen=True)
class CgroupHost:
    """What this host offers: a v1 root per controller, or one v2 root, or nothing."""

    version: int  # 0: none usable
    v1_roots: dict[str, Path]
    v2_root: Path | None
    why_not: str = ""

    def create(self, name: str, limits: Limits) -> Cgroup:
        if self.version == 1:
            return CgroupV1(self.v1_roots, name, limits)
        if self.version == 2 and self.v2_root is not None:
            return CgroupV2(self.v2_root, name, limits)
        raise SandboxError(f"no usable cgroups on this host: {self.why_not}")

    def existing(self) -> list[str]:
        """Names of rollbox groups that exist now (for the sweep after a crash)."""
        if self.version == 1:
            base = self.v1_roots["pids"] / GROUP
        elif self.version == 2 and self.v2_root is not None:
            base = self.v2_root / GROUP
        else:
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []

    def entry_files(self, name: str) -> list[Path]:
        """The files a process writes "0" to, to move itself into group `name` (a process that
        moves itself skips the kernel's global threadgroup lock; see launch.c)."""
        if self.version == 1:
            return [self.v1_roots[c] / GROUP / name / "tasks" for c in V1_CONTROLLERS]
        if self.version == 2 and self.v2_root is not None:
            return [self.v2_root / GROUP / name / "cgroup.procs"]
        raise SandboxError(f"no usable cgroups on this host: {self.why_not}")

    def attach(self, name: str) -> Cgroup:
        """A handle on an existing group, without changing its limits."""
        obj: Cgroup
        if self.version == 1:
            obj = CgroupV1.__new__(CgroupV1)
            obj._name(self.v1_roots, name)
        else:
            assert self.v2_root is not None
            obj = CgroupV2.__new__(CgroupV2)
            obj.name = name
            obj.dir = self.v2_root / GROUP / name
        return obj


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, fs type, super options) of every cgroup mount, from mountinfo."""
    out = []
    with contextlib.suppress(OSError):
        for line in _read(Path("/proc/self/mountinfo")).splitlines():
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
                out.append((fields[4], rfields[0], rfields[2].split(",")))
    return out


def detect() -> CgroupHost:
    """Find usable cgroups: v2 with the controllers delegated to us, else v1, else none."""
    mounts = _mounts()
    for point, fstype, _ in mounts:
        if fstype != "cgroup2":
            continue
        root = Path(point)
        controllers = (
            set(_read(root / "cgroup.controllers").split())
            if (root / "cgroup.controllers").exists()
            else set()
        )
        if set(V2_CONTROLLERS) <= controllers and _can_make(root):
            with contextlib.suppress(OSError):
                (root / GROUP).mkdir(exist_ok=True)
                _write(root / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
                _write(
                    root / GROUP / "cgroup.subtree_control",
                    " ".join(f"+{c}" for c in V2_CONTROLLERS),
                )
                return CgroupHost(2, {}, root)
    roots: dict[str, Path] = {}
    for point, fstype, opts in mounts:
        if fstype == "cgroup":
            for c in V1_CONTROLLERS:
                if c in opts and c not in roots:
                    roots[c] = Path(point)
    missing = [c for c in V1_CONTROLLERS if c not in roots]
    if missing:
        return CgroupHost(0, {}, None, f"cgroup v1 controllers not mounted: {', '.join(missing)}")
    unwritable = [c for c, r in roots.items() if not _can_make(r)]
    if unwritable:
        return CgroupHost(
            0, {}, None, f"no permission to create cgroups ({', '.join(unwritable)}); run as root"
        )
    return CgroupHost(1, roots, None)


def _can_make(root: Path) -> bool:
    try:
        (root / GROUP).mkdir(exist_ok=True)
    except OSError:
        return False
    return os.access(root / GROUP, os.W_OK)
