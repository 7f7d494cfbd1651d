"""Where live sandboxes keep their state, and the sweep that cleans up after a crash.

    <root>/                         one per host user, e.g. /tmp/rollbox-sandboxes-0
      p<pid>-<start>/               one per rollbox process (its owner tag)
        owner                       "<pid> <start time>": how the sweep knows the owner is gone
        layers…                     workspaces and snapshots (see layers.py)
        s<n>/                       one per live sandbox: rw/ (tmpfs), ws/ (overlay), ctl/

Cgroups are named `<owner tag>.s<n>`, so the sweep finds those too. A process killed with
SIGKILL leaves its directory, mounts and cgroups; the next rollbox process that starts a
sandbox (or `rollbox doctor --sweep`) removes everything whose owner is no longer alive.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from rollbox.sandbox import cgroups, layers


def default_root() -> Path:
    """On a tmpfs where there is one (control FIFOs and small files are hot), else in /tmp."""
    shm = Path("/dev/shm")
    base = (
        shm if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else Path(tempfile.gettempdir())
    )
    return base / f"rollbox-sandboxes-{os.geteuid()}"


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot): with the pid, a unique identity."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def alive(pid: int, start: str) -> bool:
    return _start_time(pid) == start


@dataclass
class Owner:
    """This process's directory under the state root."""

    root: Path
    dir: Path
    tag: str


_owner: Owner | None = None
_owner_lock = threading.Lock()


def owner(root: Path | None = None) -> Owner:
    """This process's state directory, made (after a sweep of dead owners) on first use."""
    global _owner
    with _owner_lock:
        root = root or default_root()
        if _owner is not None and _owner.root == root and _owner.dir.exists():
            return _owner
        sweep(root)
        pid = os.getpid()
        start = _start_time(pid) or "0"
        tag = f"p{pid}-{start}"
        d = root / tag
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o711)
        os.chmod(d, 0o711)
        (d / "owner").write_text(f"{pid} {start}\n")
        _owner = Owner(root, d, tag)
        atexit.register(_remove_owner, d, None)
        return _owner


@dataclass(frozen=True)
class SweepReport:
    owners: int
    mounts: int
    cgroups: int


def sweep(root: Path | None = None, host: cgroups.CgroupHost | None = None) -> SweepReport:
    """Remove every sandbox whose owning process is gone: processes, mounts, cgroups, files."""
    root = root or default_root()
    n_owners = n_mounts = n_groups = 0
    dead: set[str] = set()
    if root.is_dir():
        for d in root.iterdir():
            if not d.is_dir() or not d.name.startswith("p"):
                continue
            try:
                pid_s, start = (d / "owner").read_text().split()
                is_alive = alive(int(pid_s), start)
            except (OSError, ValueError):
                is_alive = False
            if is_alive:
                continue
            dead.add(d.name)
            n_owners += 1
            groups, mounts = _remove_owner(d, host)
            n_groups += groups
            n_mounts += mounts
    # cgroups whose owner directory is already gone
    host = host or cgroups.detect()
    for name in host.existing():
        tag = name.split(".", 1)[0]
        if tag in dead:
            continue
        try:
            pid_s, start = tag[1:].split("-", 1)
            if alive(int(pid_s), start):
                continue
        except ValueError:
            continue
        with contextlib.suppress(OSError):
            host.attach(name).destroy()
            n_groups += 1
    return SweepReport(n_owners, n_mounts, n_groups)


def _remove_owner(d: Path, host: cgroups.CgroupHost | None) -> tuple[int, int]:
    """Everything of one owner: its cgroups (and their processes), its mounts, its files.

    Runs for dead owners in a sweep, and for this process at exit (atexit).
    """
    n_groups = _remove_groups(host, d.name)
    n_mounts = 0
    for point in layers.mounts_beneath(d):
        with contextlib.suppress(OSError):
            layers.umount(point)
            n_mounts += 1
    shutil.rmtree(d, ignore_errors=True)
    return n_groups, n_mounts


def _remove_groups(host: cgroups.CgroupHost | None, tag: str) -> int:
    host = host or cgroups.detect()
    n = 0
    for name in host.existing():
        if name.startswith(tag + "."):
            with contextlib.suppress(OSError):
                host.attach(name).destroy()
                n += 1
    return n
