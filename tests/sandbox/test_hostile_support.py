"""Shared helpers for the hostile-code suite (THREATS.md part A); holds no tests itself.

Every hostile test checks four things: the machinery survived (or failed with a documented
SandboxError), the result reports what happened, the host is untouched, and the next sandbox
starts clean. The host-side checks live here:

- `host_processes()` scans the host's /proc (uid, state, cmdline, cgroup, PID namespace);
- `Tracked` remembers, before a sandbox closes, what must be gone after it (its PID namespace,
  cgroup directories, state directory, mounts) and `assert_gone()` checks all of it, plus that
  no process of the sandbox user that appeared during the test is left over;
- `sandboxes` is a fixture that opens sandboxes and, at teardown, closes each and checks it.

Other people's sandboxes may run on the same host at the same time (same uid 65534), so the
process checks are scoped: a process is "ours" if it is in our sandbox's PID namespace, carries
our marker, or is an orphan of the sandbox user that appeared after the test started and that
no live rollbox cgroup holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.sandbox import BwrapConfig, ExecResult, Limits, Sandbox, agentbuild, make_sandbox

SANDBOX_HOST_UID = 65534  # BwrapConfig().uid default when running as root


def _why_skip() -> str | None:
    if sys.platform != "linux":
        return "the bwrap sandbox is Linux only"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if os.geteuid() != 0:
        return "the hostile suite checks the host as root (cgroups, other users' /proc)"
    try:
        from rollbox.sandbox.bwrap import detect_host

        missing = detect_host(BwrapConfig()).unenforced()
    except SandboxError as e:  # pragma: no cover - depends on the host
        return str(e)
    if missing:
        return "this host cannot enforce: " + "; ".join(missing)
    return None


WHY_SKIP = _why_skip()
needs_bwrap = pytest.mark.skipif(WHY_SKIP is not None, reason=WHY_SKIP or "")


def new_marker(tag: str = "m") -> str:
    """A unique word to find a test's files and processes by."""
    return f"rbhostile{tag}{uuid.uuid4().hex[:10]}"


# ---- the host's processes ---------------------------------------------------------------


@dataclass(frozen=True)
class HostProc:
    pid: int
    ppid: int
    uid: int
    state: str
    cmdline: str
    cgroup: str
    pidns: str | None
    start: str

    @property
    def zombie(self) -> bool:
        return self.state.startswith(("Z", "X"))


def processes_naming(directory: Path) -> dict[int, str]:
    """Live host processes whose command line names `directory` (a rollbox process's state
    directory: its sandboxes' bubblewraps and launchers), pid -> command line."""
    return {
        p.pid: p.cmdline for p in host_processes() if str(directory) in p.cmdline and not p.zombie
    }


def host_processes() -> list[HostProc]:
    """Every process on the host, as root sees it (races with exits are skipped)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        base = f"/proc/{name}"
        try:
            with open(f"{base}/status") as f:
                status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
            with open(f"{base}/cmdline", "rb") as fb:
                cmdline = fb.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"{base}/cgroup") as f:
                cgroup = f.read()
            with open(f"{base}/stat") as f:
                start = f.read().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError, ValueError):
            continue
        try:
            pidns: str | None = os.readlink(f"{base}/ns/pid")
        except OSError:
            pidns = None
        out.append(
            HostProc(
                pid=int(name),
                ppid=int(status.get("PPid", "0").strip() or 0),
                uid=int(status["Uid"].split()[0]),
                state=status.get("State", "?").strip(),
                cmdline=cmdline,
                cgroup=cgroup,
                pidns=pidns,
                start=start,
            )
        )
    return out


def host_pid_alive(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return not line.split()[1].startswith(("Z", "X"))
    except OSError:
        return False
    return False


def host_can_fork(timeout_s: float = 5.0) -> float:
    """Run `true` on the host; the seconds it took (fails the test if it cannot)."""
    t0 = time.monotonic()
    subprocess.run(["true"], check=True, timeout=timeout_s)
    return time.monotonic() - t0


# ---- what a sandbox leaves behind ------------------------------------------------------


def _group_dirs(sb: object) -> list[Path]:
    group = getattr(sb, "_group", None)
    if group is None:
        return []
    dirs = getattr(group, "dirs", None)
    if isinstance(dirs, dict):
        return [Path(d) for d in dirs.values()]
    one = getattr(group, "dir", None)
    return [Path(one)] if one is not None else []


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f]


@dataclass
class Tracked:
    """What a live sandbox holds on the host, captured before it is closed."""

    sb: object
    markers: list[str] = field(default_factory=list)
    pidns: str | None = None
    group_name: str | None = None
    group_dirs: list[Path] = field(default_factory=list)
    state_dir: Path | None = None
    workspace: Path | None = None

    @classmethod
    def of(cls, sb: object, *markers: str) -> Tracked:
        agent = getattr(sb, "_agent_pid", None)
        pidns = None
        if agent is not None:
            with contextlib.suppress(OSError):
                pidns = os.readlink(f"/proc/{agent}/ns/pid")
        group = getattr(sb, "_group", None)
        return cls(
            sb=sb,
            markers=list(markers),
            pidns=pidns,
            group_name=getattr(group, "name", None),
            group_dirs=_group_dirs(sb),
            state_dir=getattr(sb, "_dir", None),
            workspace=Path(sb.workspace),  # type: ignore[attr-defined]
        )

    def refresh(self) -> None:
        """Capture again (after the sandbox started, or when a marker was added)."""
        fresh = Tracked.of(self.sb, *self.markers)
        self.pidns = fresh.pidns or self.pidns
        self.group_name = fresh.group_name or self.group_name
        self.group_dirs = fresh.group_dirs or self.group_dirs

    def leftovers(self, procs: list[HostProc]) -> list[HostProc]:
        """Host processes that belong to this sandbox (by namespace, cgroup or marker)."""
        found = []
        for p in procs:
            if (
                (self.pidns is not None and p.pidns == self.pidns)
                or (self.group_name and f"/{self.group_name}" in p.cgroup)
                or any(m in p.cmdline for m in self.markers)
            ):
                found.append(p)
        return found


def _orphans_of_the_sandbox_user(
    before: set[tuple[int, str]], allowed: set[int], procs: list[HostProc]
) -> list[HostProc]:
    """Processes of the sandbox user that appeared since `before` and are nobody else's.

    Skipped: processes in a rollbox cgroup (live sandboxes; ours are checked by name in
    Tracked.leftovers), processes that descend from `allowed` (the test's own host processes
    and the bubblewrap of its sandboxes that are still open), and processes started by a live
    process of another user (another session's sandbox starting up). Left: those that descend
    from this test process or were orphaned to init.
    """
    by_pid = {p.pid: p for p in procs}
    me = os.getpid()
    out = []
    for p in procs:
        if p.uid != SANDBOX_HOST_UID or (p.pid, p.start) in before or "/rollbox/" in p.cgroup:
            continue
        q, chain = p, [p.pid]
        while q.uid == SANDBOX_HOST_UID and q.ppid in by_pid and q.ppid not in chain:
            q = by_pid[q.ppid]
            chain.append(q.pid)
        if any(pid in allowed for pid in chain):
            continue
        if q.uid == SANDBOX_HOST_UID or q.pid in (me, 1):
            out.append(p)  # ours, or orphaned to init: left behind
    return out


def snapshot_sandbox_user() -> set[tuple[int, str]]:
    return {(p.pid, p.start) for p in host_processes() if p.uid == SANDBOX_HOST_UID}


async def assert_gone(
    tracked: Tracked,
    before: set[tuple[int, str]] | None = None,
    allowed: set[int] | None = None,
    settle_s: float = 5.0,
) -> None:
    """After close(): nothing of the sandbox is left on the host (polls while zombies go)."""
    deadline = time.monotonic() + settle_s
    while True:
        # zombies are dead already: they wait for the host's init to reap them (which this
        # host's init does only every few seconds); only living processes count
        procs = [p for p in host_processes() if not p.zombie]
        mine = tracked.leftovers(procs)
        orphans = (
            _orphans_of_the_sandbox_user(before, allowed or set(), procs)
            if before is not None
            else []
        )
        if not mine and not orphans:
            break
        if time.monotonic() > deadline:
            raise AssertionError(
                "processes left on the host after close():\n"
                + "\n".join(f"  {p}" for p in [*mine, *orphans])
            )
        await asyncio.sleep(0.05)
    group = getattr(tracked.sb, "_group", None)
    if group is not None:
        assert group.procs() == [], "the sandbox's cgroup still holds processes"
    for d in tracked.group_dirs:
        assert not d.exists(), f"cgroup directory {d} was not removed"
    if tracked.state_dir is not None:
        assert not tracked.state_dir.exists(), f"state directory {tracked.state_dir} remains"
        prefix = str(tracked.state_dir).rstrip("/") + "/"
        stale = [m for m in _mount_points() if m == str(tracked.state_dir) or m.startswith(prefix)]
        assert not stale, f"mounts left after close(): {stale}"


# ---- opening sandboxes -------------------------------------------------------------------


@dataclass
class Sandboxes:
    """Opens sandboxes for a test; closes and checks every one at teardown."""

    opened: list[Tracked] = field(default_factory=list)
    before: set[tuple[int, str]] = field(default_factory=set)
    allowed: set[int] = field(default_factory=set)  # host processes the test made on purpose
    agent: str = "auto"  # the sandboxes' agent (BwrapConfig.agent)

    async def open(self, workspace: Path | None = None, **limits: float) -> Sandbox:
        base = dict(wall_s=30.0, cpu_s=30.0, memory_mb=256, pids=128, disk_mb=64)
        base.update(limits)
        if self.agent == "compiled" and agentbuild.compiler() is None:
            pytest.skip("no C compiler here: only the bash agent")
        config = BwrapConfig(agent=self.agent)  # type: ignore[arg-type]
        sb = await make_sandbox(config, workspace, limits=Limits(**base))
        self.opened.append(Tracked.of(sb))
        return sb

    def adopt(self, sb: Sandbox) -> Sandbox:
        """Track a sandbox made some other way (a fork, say) like the ones opened here."""
        self.opened.append(Tracked.of(sb))
        return sb

    def tracked(self, sb: Sandbox) -> Tracked:
        for t in self.opened:
            if t.sb is sb:
                return t
        raise KeyError(sb)

    async def close_and_check(self, sb: Sandbox, *markers: str) -> None:
        """close() (twice: it is idempotent), then check nothing of it is left on the host."""
        t = self.tracked(sb)
        t.markers += markers
        t.refresh()
        await sb.close()
        await sb.close()
        await assert_gone(t, self.before, self.allowed | self.still_open())

    def still_open(self) -> set[int]:
        """Host pids of the bubblewrap processes of this test's sandboxes not yet closed."""
        out = set()
        for t in self.opened:
            proc = getattr(t.sb, "_proc", None)
            if proc is not None and not getattr(t.sb, "_closed", True):
                out.add(proc.pid)
        return out


@pytest.fixture
async def sandboxes() -> AsyncIterator[Sandboxes]:
    box = Sandboxes(before=snapshot_sandbox_user())
    try:
        yield box
    finally:
        errors = []
        for t in box.opened:
            with contextlib.suppress(Exception):
                t.refresh()
            try:
                await t.sb.close()  # type: ignore[attr-defined]
            except Exception as e:  # pragma: no cover - reported below
                errors.append(f"close() raised {type(e).__name__}: {e}")
        for t in box.opened:
            try:
                await assert_gone(t, box.before, box.allowed)
            except AssertionError as e:
                errors.append(str(e))
        if errors:
            raise AssertionError("sandbox teardown:\n" + "\n".join(errors))


@dataclass
class Canaries:
    """Host processes the sandbox must not be able to touch: one as root, one as its own uid."""

    root: subprocess.Popen[bytes]
    same_uid: subprocess.Popen[bytes]
    marker: str

    @property
    def pids(self) -> set[int]:
        return {self.root.pid, self.same_uid.pid}

    def alive(self) -> bool:
        return all(p.poll() is None and host_pid_alive(p.pid) for p in (self.root, self.same_uid))


@pytest.fixture
def canaries(sandboxes: Sandboxes) -> Iterator[Canaries]:
    marker = new_marker("canary")
    argv = ["bash", "-c", f"sleep 300; : {marker}"]
    root = subprocess.Popen(argv, start_new_session=True)
    same = subprocess.Popen(
        argv, user=SANDBOX_HOST_UID, group=SANDBOX_HOST_UID, extra_groups=[], cwd="/",
        start_new_session=True,
    )  # fmt: skip
    sandboxes.allowed |= {root.pid, same.pid}
    c = Canaries(root, same, marker)
    try:
        deadline = time.monotonic() + 5
        while not c.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert c.alive(), "could not start the host canaries"
        yield c
    finally:
        for p in (root, same):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 9)
            p.wait()


# the processes a fresh sandbox has: its agent (PID 1), a helper per running command, and the
# command itself; anything beyond a handful was planted by someone else
CLEAN_PROCESS_COUNT = 6


async def assert_next_sandbox_clean(
    box: Sandboxes, *markers: str, workspace: Path | None = None
) -> None:
    """A fresh sandbox sees no file and no process that carries any of the markers."""
    sb = await box.open(workspace)
    # each marker is put together inside, so that the command's own text does not hold it
    parts = " ".join(f"'{m[: len(m) // 2]}''{m[len(m) // 2 :]}'" for m in markers)
    res = await sb.exec(
        f"pat=; for m in {parts}; do pat=$pat${{pat:+|}}$m; done; "
        "ls -A / /workspace /tmp /run /dev /dev/shm 2>/dev/null; "
        'grep -rlE "$pat" /workspace /tmp /dev/shm 2>/dev/null; '
        "echo ---; ps -eww -o pid=,args=",
        timeout_s=10,
    )
    assert res.exit_code == 0 and not res.timed_out, describe(res)
    _, _, ps = res.stdout.partition("---\n")
    for m in markers:
        assert m not in res.stdout, f"the next sandbox sees {m!r}:\n{res.stdout}"
    procs = [line for line in ps.splitlines() if line.strip()]
    assert 1 <= len(procs) <= CLEAN_PROCESS_COUNT, f"a fresh sandbox runs: {procs}"
    await box.close_and_check(sb)


def describe(res: ExecResult) -> str:
    """An ExecResult in one assertion message, with its output shortened."""
    return (
        f"exit={res.exit_code} signal={res.signal} timed_out={res.timed_out} "
        f"oom={res.oom_killed} truncated={res.output_truncated} wall={res.wall_s:.2f}s "
        f"cpu={res.cpu_s:.2f}s\nstdout: {res.stdout[-1500:]!r}\nstderr: {res.stderr[-1500:]!r}"
    )
