"""The bwrap sandbox: start, exec, fork and idle memory, each against a bare baseline.

    rollbox bench sandbox [--quick] [--json]

Every figure is measured beside a baseline in the same run (interleaved where it is a time), so
that the noise of this machine hits both alike:

1. create + exec `true` + close, p50 and p95, against a bare `bwrap ... true` subprocess. Its
   command line is the backend's own, seen as a real sandbox starts (so it follows the backend
   as that changes, and is checked to hold `rollbox.sandbox.bwrap._system_binds()`): the same
   launcher, unshare flags, system, /etc, interpreter, /proc, /dev, /tmp, workspace and control
   binds and seccomp filter, with `true` in place of the agent and without the agent's
   --info-fd/--block-fd handshake. What the baseline lacks is the backend's own work: cgroup,
   tmpfs + overlay workspace, agent, close. Target: ratio <= 1.5.
2. exec of `true` in a live sandbox, p50, against `subprocess.run(["/bin/true"])`. Target: ratio
   <= 5.
3. fork() of a sandbox whose workspace holds 10 MiB in 1,000 files, p50 of the fork alone (the
   child's close is not timed), against `shutil.copytree` of the same tree. Target: <= 20 ms.
   The first fork is checked: it sees all 1,000 files and runs `true`.
4. 1,000 live idle sandboxes at once (100 with --quick, in 3 rounds): all created (concurrently,
   in batches of 50), all checked usable (each runs `true`), memory per sandbox from the host's
   own accounting (the drop of MemAvailable in /proc/meminfo, divided by the count), against
   1,000 idle `sleep` processes measured the same way, in rounds before and after the
   sandboxes (medians). Target: <= 2048 KiB per sandbox. Also reported: the sum of the
   sandboxes' own cgroup memory (which misses the kernel's memory outside the cgroups:
   namespaces, mounts, the bwrap monitor process). MemAvailable is host-wide, so others' work
   on the machine is noise in it: 1,000 sandboxes keep that small, 100 (--quick) do not.

At the end, after everything is closed, the run checks that nothing of it is left: processes,
mounts, sandbox directories, snapshot layers and cgroups. A part that fails is reported as a
figure whose name says what failed, with met = no (and value NaN if there is none); the other
parts still run. Progress notes (create and close times, memory per round) go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import math
import os
import resource
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from rollbox.bench import Figure, p50, p95
from rollbox.sandbox import BwrapConfig, make_sandbox

BENCH = "sandbox"
BATCH = 50  # sandboxes created (and checked, and closed) concurrently at once
FORK_FILES = 1000
FORK_FILE_BYTES = 10 * 1024  # 1,000 x 10 KiB = 10 MiB
SETTLE_MAX_S = 5.0  # the longest to wait for MemAvailable to settle
MEMORY_ROUNDS = 1  # rounds of n idle sandboxes (3 with --quick): 1,000 take over a minute
SLEEP_ROUNDS = 3  # rounds of n `sleep` processes before the sandboxes, and again after (2: quick)


def _note(msg: str) -> None:
    print(f"  [bench sandbox] {msg}", file=sys.stderr, flush=True)


def _failed(name: str, unit: str, err: BaseException | str, **kw: Any) -> Figure:
    """A figure for a part that could not be measured: no value, target not met."""
    why = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    why = " ".join(str(why).split())[:300]
    fig = Figure.make(BENCH, f"{name} -- FAILED: {why}", math.nan, unit, **kw)
    return dataclasses.replace(fig, met=False)


def _raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ---- host accounting --------------------------------------------------------------------------


def _mem_available_kb() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def _mem_available_now_kb() -> float:
    """MemAvailable now: the median of a few readings over half a second."""
    readings = []
    for _ in range(5):
        readings.append(_mem_available_kb())
        time.sleep(0.1)
    return statistics.median(readings)


def _settled_mem_available_kb() -> float:
    """MemAvailable once the kernel has finished freeing what it frees lazily (namespaces go
    some time after their last process): one-second windows until one moves by under 2 MiB,
    or SETTLE_MAX_S; the median of the last window's readings."""
    gc.collect()
    deadline = time.monotonic() + SETTLE_MAX_S
    while True:
        readings = []
        for _ in range(10):
            readings.append(_mem_available_kb())
            time.sleep(0.1)
        if max(readings) - min(readings) < 2048 or time.monotonic() > deadline:
            return statistics.median(readings)


def _children() -> list[int]:
    """Pids of this process's live (non-zombie) children."""
    me = str(os.getpid())
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == me and fields[0] != "Z":
            out.append(int(entry))
    return out


def _is_agent(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"rollbox-agent" in f.read()
    except OSError:
        return False


# ---- timing -----------------------------------------------------------------------------------


async def _paired(
    subject: Callable[[], Awaitable[object]], baseline: Callable[[], object], repeat: int
) -> tuple[list[float], list[float]]:
    """Like rollbox.bench.paired_times, for an async subject and a blocking baseline."""
    await subject()
    baseline()  # warm both up
    s_times: list[float] = []
    b_times: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await subject()
        s_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        baseline()
        b_times.append(time.perf_counter() - t0)
    return s_times, b_times


# ---- the bare bwrap baseline ------------------------------------------------------------------

# bubblewrap 0.8's options and how many arguments each takes, to find where its command starts
_ARITY: dict[str, int] = {
    **dict.fromkeys(
        [
            "--unshare-all",
            "--share-net",
            "--unshare-user",
            "--unshare-user-try",
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--assert-userns-disabled",
            "--clearenv",
            "--new-session",
            "--die-with-parent",
            "--as-pid-1",
            "--level-prefix",
        ],
        0,
    ),
    **dict.fromkeys(
        [
            "--args",
            "--argv0",
            "--userns",
            "--userns2",
            "--pidns",
            "--uid",
            "--gid",
            "--hostname",
            "--chdir",
            "--unsetenv",
            "--lock-file",
            "--sync-fd",
            "--remount-ro",
            "--proc",
            "--dev",
            "--tmpfs",
            "--mqueue",
            "--dir",
            "--seccomp",
            "--add-seccomp-fd",
            "--block-fd",
            "--userns-block-fd",
            "--info-fd",
            "--json-status-fd",
            "--cap-add",
            "--cap-drop",
            "--perms",
            "--size",
            "--exec-label",
            "--file-label",
            "--overlay-src",
            "--tmp-overlay",
            "--ro-overlay",
        ],
        1,
    ),
    **dict.fromkeys(
        [
            "--setenv",
            "--bind",
            "--bind-try",
            "--dev-bind",
            "--dev-bind-try",
            "--ro-bind",
            "--ro-bind-try",
            "--bind-fd",
            "--ro-bind-fd",
            "--file",
            "--bind-data",
            "--ro-bind-data",
            "--symlink",
            "--chmod",
        ],
        2,
    ),
    "--overlay": 3,
}
# the backend's handshake with bwrap: dropped, since `true` needs no agent to be released
_HANDSHAKE = {"--info-fd", "--block-fd", "--userns-block-fd", "--json-status-fd", "--sync-fd"}
# options that carry data through a file descriptor of the backend's: cannot be replayed
# (except --seccomp, whose program the baseline is given: it feeds it through a pipe of its own)
_UNREPLAYABLE = {
    "--args", "--userns", "--userns2", "--pidns", "--seccomp", "--add-seccomp-fd", "--file",
    "--bind-data", "--ro-bind-data", "--bind-fd", "--ro-bind-fd",
}  # fmt: skip


def _replicate(src: Path, dst: Path) -> None:
    """Copy a file or directory tree with its modes and owners (links as links)."""
    st = os.lstat(src)
    if stat.S_ISDIR(st.st_mode):
        dst.mkdir(exist_ok=True)
        for entry in os.listdir(src):
            _replicate(src / entry, dst / entry)
    elif stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISREG(st.st_mode):
        shutil.copyfile(src, dst)
    else:
        raise RuntimeError(f"cannot replicate {src} for the baseline: not a file or directory")
    os.lchown(dst, st.st_uid, st.st_gid)
    if not stat.S_ISLNK(st.st_mode):
        os.chmod(dst, stat.S_IMODE(st.st_mode))


# the launcher's options and how many arguments each takes
_LAUNCHER_ARITY = {"--wait-fd": 1, "--cgroup": 1, "--user": 1, "--private-mounts": 0,
                   "--mount": 3, "--mkdir": 3}  # fmt: skip


def _user_switch(prefix: list[str]) -> list[str]:
    """What runs bwrap, for the baseline: rollbox's launcher (`rollbox-launch [--wait-fd FD]
    [--cgroup FILE]... [--private-mounts] [--mount|--mkdir A B C]... [--user UID:GID] --`)
    becomes just its switch of user, as coreutils' chroot does it (its cgroups and workspace
    mounts are the backend's own work); anything else is kept as it is."""
    if not prefix or not Path(prefix[0]).name.startswith("rollbox-launch"):
        return prefix
    user = None
    i = 1
    while i < len(prefix) and prefix[i] != "--":
        if prefix[i] not in _LAUNCHER_ARITY:
            raise RuntimeError(
                f"the launcher is given {prefix[i]!r}, which the baseline cannot read"
            )
        if prefix[i] == "--user":
            user = prefix[i + 1]
        i += 1 + _LAUNCHER_ARITY[prefix[i]]
    if user is None:
        return []
    chroot = shutil.which("chroot", path="/usr/sbin:/sbin:/usr/bin:/bin") or "chroot"
    return [chroot, f"--userspec={user}", f"--groups={user.split(':')[1]}", "/"]


class BareBwrap:
    """The backend's own bwrap command line, with `true` in place of its agent.

    It is taken from a real sandbox's start (so it follows the backend as it changes): the
    same switch to the sandbox's uid (as root: rollbox's own launcher, which also enters the
    sandbox's cgroups, becomes the `chroot --userspec` it replaced), the same namespace
    flags, the same system binds (`bwrap._system_binds()`), /etc, interpreter, /proc, /dev,
    /tmp, workspace and control binds. What it lacks is the backend's own work: no cgroup, no
    tmpfs + overlay workspace, no agent and its handshake (--info-fd/--block-fd are dropped).
    The sandbox's own directories that it binds are replaced by copies in `root` (those the
    launcher mounted in its own namespace are read through `view`, the /proc/PID/root of the
    sandbox's bubblewrap). A seccomp
    filter (`--seccomp FD`) is replayed when its program is given: each run writes it into a
    pipe of its own, as the backend does.
    """

    def __init__(
        self,
        argv: list[str],
        bwrap_path: str,
        sandbox_dir: Path,
        root: Path,
        seccomp_program: bytes | None = None,
        view: Path | None = None,
    ) -> None:
        try:
            at = next(i for i, a in enumerate(argv) if a == bwrap_path or Path(a).name == "bwrap")
        except StopIteration:
            raise RuntimeError(f"no bwrap in the backend's command line: {argv[:8]}") from None
        out = [*_user_switch(argv[:at]), argv[at]]
        self._seccomp = seccomp_program
        self._seccomp_at: int | None = None
        i = at + 1
        while i < len(argv):
            a = argv[i]
            if a == "--" or not a.startswith("--"):
                break
            if a not in _ARITY:
                raise RuntimeError(
                    f"the backend passes bwrap {a!r}, which this baseline cannot parse"
                )
            n = _ARITY[a]
            if a == "--seccomp" and seccomp_program is not None:
                self._seccomp_at = len(out) + 1  # where the descriptor goes, run by run
                out += [a, "-1"]
                i += 2
                continue
            if a in _UNREPLAYABLE:
                raise RuntimeError(
                    f"the backend passes bwrap {a} (data through a descriptor), "
                    "which a bare command line cannot replay"
                )
            if a not in _HANDSHAKE:
                out += argv[i : i + 1 + n]
            i += 1 + n
        if i >= len(argv):
            raise RuntimeError("found no command at the end of the backend's bwrap arguments")
        self.agent = argv[i:]
        # the sandbox's own directories go with it: bind copies of them instead
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o711)
        prefix = str(sandbox_dir)
        # what the launcher mounted in its own namespace is seen through `view` (the
        # /proc/PID/root of the sandbox's bubblewrap), the rest directly

        def seen(p: Path) -> Path:
            return p if p.exists() or view is None else Path(f"{view}{p}")

        for k, a in enumerate(out):
            if a == prefix or a.startswith(prefix + "/"):
                rel = Path(a).relative_to(sandbox_dir)
                src, dst = sandbox_dir, root
                for part in rel.parts[:-1]:
                    src, dst = src / part, dst / part
                    if not dst.exists():
                        st = os.stat(seen(src))
                        dst.mkdir()
                        os.chown(dst, st.st_uid, st.st_gid)
                        os.chmod(dst, stat.S_IMODE(st.st_mode))
                target = root / rel
                if not target.exists() and not target.is_symlink():
                    _replicate(seen(Path(a)), target)
                out[k] = str(target)
        st = os.stat(sandbox_dir)
        os.chown(root, st.st_uid, st.st_gid)
        os.chmod(root, stat.S_IMODE(st.st_mode))
        self.argv = [*out, "/bin/true"]

    def __call__(self) -> None:
        argv, fds = self.argv, cast(tuple[int, ...], ())
        if self._seccomp_at is not None and self._seccomp is not None:
            r, w = os.pipe()
            os.write(w, self._seccomp)  # a few hundred bytes: fits the pipe's buffer
            os.close(w)
            argv, fds = list(self.argv), (r,)
            argv[self._seccomp_at] = str(r)
        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                timeout=30,
            )
        finally:
            for fd in fds:
                os.close(fd)
        if proc.returncode != 0:
            raise RuntimeError(
                f"the bare bwrap baseline failed (exit {proc.returncode}): "
                f"{proc.stderr.decode(errors='replace').strip()[:300]}"
            )


async def _bare_bwrap(config: BwrapConfig, root: Path) -> BareBwrap:
    """Start one real sandbox, watching what it runs; make the baseline from its bwrap."""
    from rollbox.sandbox import bwrap, seccomp

    bwrap_path = bwrap.detect_host(config).bwrap
    seen: list[list[str]] = []

    def note(args: Any) -> None:
        argv = [str(a) for a in ([args] if isinstance(args, (str, bytes, os.PathLike)) else args)]
        if not seen and any(a == bwrap_path or Path(a).name == "bwrap" for a in argv):
            seen.append(argv)

    real_popen = subprocess.Popen
    real_exec = asyncio.create_subprocess_exec

    class SpyPopen(real_popen):  # type: ignore[valid-type,misc]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            note(args)
            super().__init__(args, *rest, **kwargs)

    async def spy_exec(program: Any, *args: Any, **kwargs: Any) -> Any:
        note([program, *args])
        return await real_exec(program, *args, **kwargs)

    subprocess.Popen = SpyPopen  # type: ignore[misc]
    asyncio.create_subprocess_exec = spy_exec
    try:
        sb = await make_sandbox(config, None)
    finally:
        subprocess.Popen = real_popen  # type: ignore[misc]
        asyncio.create_subprocess_exec = real_exec
    try:
        if not seen:
            raise RuntimeError("could not see the backend start bwrap (neither Popen nor asyncio)")
        sandbox_dir = getattr(sb, "_dir", None)
        if sandbox_dir is None:
            raise RuntimeError("the sandbox has no _dir to take its bound directories from")
        proc = getattr(sb, "_proc", None)
        view = Path(f"/proc/{proc.pid}/root") if proc is not None else None
        bare = BareBwrap(seen[0], bwrap_path, Path(sandbox_dir), root, seccomp.program(), view)
        system = bwrap._system_binds()
        if not any(bare.argv[i : i + len(system)] == system for i in range(len(bare.argv))):
            raise RuntimeError("the backend's bwrap arguments do not hold bwrap._system_binds()")
        return bare
    finally:
        await sb.close()


# ---- the parts --------------------------------------------------------------------------------


async def _create_exec_close(config: BwrapConfig, tmp: Path, repeat: int) -> list[Figure]:
    name = "create + exec `true` + close"
    base_name = "bare bwrap `true`, the backend's own bwrap arguments"
    try:
        bare = await _bare_bwrap(config, tmp / "bare")
        bare()  # it must work before it is timed
        failures: list[str] = []

        async def cycle() -> None:
            sb = await make_sandbox(config, None)
            try:
                res = await sb.exec(["true"])
            finally:
                await sb.close()
            if not res.ok:
                failures.append(f"exit {res.exit_code}, signal {res.signal}: {res.stderr[:200]}")

        s, b = await _paired(cycle, bare, repeat)
        if failures:
            raise RuntimeError(f"`true` failed in {len(failures)} of {repeat + 1}: {failures[0]}")
    except Exception as e:
        return [
            _failed(f"{name}, p50", "ms", e, max_ratio=1.5),
            _failed(f"{name}, p95", "ms", e, max_ratio=1.5),
        ]
    return [
        Figure.make(
            BENCH,
            f"{name}, p{q}",
            f(s) * 1000,
            "ms",
            baseline=f"{base_name}, p{q}",
            baseline_value=f(b) * 1000,
            max_ratio=1.5,
        )
        for q, f in ((50, p50), (95, p95))
    ]


async def _exec_true(config: BwrapConfig, repeat: int) -> list[Figure]:
    name = "exec `true` in a live sandbox, p50"
    try:
        sb = await make_sandbox(config, None)
        try:
            failures: list[str] = []

            async def one() -> None:
                res = await sb.exec(["true"])
                if not res.ok:
                    failures.append(f"exit {res.exit_code}, signal {res.signal}: {res.stderr}")

            s, b = await _paired(one, lambda: subprocess.run(["/bin/true"], check=True), repeat)
        finally:
            await sb.close()
        if failures:
            raise RuntimeError(f"`true` failed in {len(failures)} of {repeat + 1}: {failures[0]}")
    except Exception as e:
        return [_failed(name, "ms", e, max_ratio=5.0)]
    return [
        Figure.make(
            BENCH,
            name,
            p50(s) * 1000,
            "ms",
            baseline="subprocess.run /bin/true on the host, p50",
            baseline_value=p50(b) * 1000,
            max_ratio=5.0,
        )
    ]


def _make_tree(root: Path) -> None:
    """1,000 files of 10 KiB (10 MiB) in 10 directories, random content."""
    for i in range(FORK_FILES):
        d = root / f"d{i // 100:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:04d}.bin").write_bytes(os.urandom(FORK_FILE_BYTES))


def _tree_stats(root: Path) -> tuple[int, int]:
    n = size = 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            n += 1
            size += os.lstat(os.path.join(dirpath, f)).st_size
    return n, size


async def _fork(config: BwrapConfig, tmp: Path, repeat: int) -> list[Figure]:
    mib = FORK_FILES * FORK_FILE_BYTES / (1 << 20)
    name = f"fork() of a sandbox with {mib:.0f} MiB in {FORK_FILES:,} files, p50"
    try:
        src = tmp / "tree"
        _make_tree(src)
        want = _tree_stats(src)
        sb = await make_sandbox(config, src)
        try:
            # once, untimed: a fork sees the whole workspace and can run commands
            child = await sb.fork()
            try:
                got = await asyncio.to_thread(_tree_stats, child.workspace)
                res = await child.exec(["true"])
            finally:
                await child.close()
            if got != want:
                raise RuntimeError(f"the fork's workspace holds {got} (files, bytes), not {want}")
            if not res.ok:
                raise RuntimeError(f"`true` failed in the fork: exit {res.exit_code}")
            copies = tmp / "copies"
            copies.mkdir()
            s: list[float] = []
            b: list[float] = []
            for i in range(repeat + 1):  # the first of each is the warm-up
                t0 = time.perf_counter()
                child = await sb.fork()
                dt = time.perf_counter() - t0
                await child.close()  # not timed
                dst = copies / str(i)
                t0 = time.perf_counter()
                shutil.copytree(src, dst)
                db = time.perf_counter() - t0
                shutil.rmtree(dst)
                if i:
                    s.append(dt)
                    b.append(db)
        finally:
            await sb.close()
    except Exception as e:
        return [_failed(name, "ms", e, max_value=20.0)]
    return [
        Figure.make(
            BENCH,
            name,
            p50(s) * 1000,
            "ms",
            baseline="shutil.copytree of the same tree, p50",
            baseline_value=p50(b) * 1000,
            max_value=20.0,
        )
    ]


def _sleep_memory_kb(n: int) -> float:
    """MemAvailable drop per idle `sleep` process, n of them at once (killed afterwards).

    The mean of the drop when they start and the rise when they are killed, which cancels a
    steady drift of the background (say, memory still being freed after the sandboxes)."""
    before = _settled_mem_available_kb()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            procs.append(
                subprocess.Popen(
                    ["sleep", "3600"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        during = _mem_available_now_kb()
    finally:
        for p in procs:
            with contextlib.suppress(OSError):
                p.kill()
        for p in procs:
            p.wait()
    after = _mem_available_now_kb()
    return ((before - during) + (after - during)) / 2 / n


async def _gather_batches(
    items: list[Any], fn: Callable[[Any], Awaitable[Any]], stop_on_error: bool
) -> tuple[list[Any], list[BaseException]]:
    """fn over items, BATCH at a time concurrently; results and errors, in order."""
    results: list[Any] = []
    errors: list[BaseException] = []
    for i in range(0, len(items), BATCH):
        batch = await asyncio.gather(*(fn(x) for x in items[i : i + BATCH]), return_exceptions=True)
        for r in batch:
            if isinstance(r, BaseException):
                errors.append(r)
            else:
                results.append(r)
        if errors and stop_on_error:
            break
    return results, errors


def _why(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"


class _Round:
    """One round of n idle sandboxes. (Not a dataclass: bench modules are not in sys.modules.)"""

    def __init__(self) -> None:
        self.created = 0
        self.per_sandbox_kb = math.nan
        self.cgroup_kb: list[int] = []
        self.problems: list[str] = []


async def _sandbox_round(config: BwrapConfig, n: int) -> _Round:
    out = _Round()
    sbs: list[Any] = []
    before = after = math.nan
    try:
        before = _settled_mem_available_kb()
        t0 = time.perf_counter()
        sbs, create_errors = await _gather_batches(
            list(range(n)), lambda _: make_sandbox(config, None), stop_on_error=True
        )
        out.created = len(sbs)
        _note(
            f"created {len(sbs)} of {n} sandboxes in {time.perf_counter() - t0:.1f} s "
            f"({threading.active_count()} threads, {len(os.listdir('/proc/self/fd'))} open fds)"
        )
        if create_errors:
            out.problems.append(
                f"only {len(sbs)} of {n} sandboxes could be created ({len(create_errors)} failed "
                f"in the last batch of {BATCH}; first: {_why(create_errors[0])})"
            )
        results, exec_errors = await _gather_batches(
            sbs, lambda sb: sb.exec(["true"]), stop_on_error=False
        )
        unusable = [_why(e) for e in exec_errors] + [
            f"exit {r.exit_code}, signal {r.signal}: {r.stderr.strip()[:200]}"
            for r in results
            if not r.ok
        ]
        if unusable:
            out.problems.append(
                f"{len(unusable)} of {len(sbs)} could not run `true` ({unusable[0]})"
            )
        gc.collect()
        after = _mem_available_now_kb()  # right away: idle sandboxes allocate nothing lazily
        if sbs:
            out.per_sandbox_kb = (before - after) / len(sbs)
        for sb in sbs:
            group = getattr(sb, "_group", None)
            if group is not None and hasattr(group, "memory_kb"):
                with contextlib.suppress(OSError, ValueError):
                    out.cgroup_kb.append(group.memory_kb())
    except Exception as e:
        out.problems.append(f"after {len(sbs)} sandboxes: {_why(e)}")
    finally:
        t0 = time.perf_counter()
        _, close_errors = await _gather_batches(sbs, lambda sb: sb.close(), stop_on_error=False)
        _note(f"closed {len(sbs)} sandboxes in {time.perf_counter() - t0:.1f} s")
        if sbs and not math.isnan(out.per_sandbox_kb):
            back = _settled_mem_available_kb() - after
            _note(f"closing gave back {back / 1024:.0f} of {(before - after) / 1024:.0f} MiB")
        if close_errors:
            out.problems.append(f"{len(close_errors)} failed to close ({_why(close_errors[0])})")
    return out


async def _many(config: BwrapConfig, n: int, quick: bool) -> list[Figure]:
    live = f"{n:,} live" + (" (--quick; full run: 1,000)" if quick else "")
    name = f"memory per idle sandbox, {live}, MemAvailable drop / {n:,}"
    cg_name = f"cgroup memory summed over {n:,} idle sandboxes"
    rounds = 3 if quick else MEMORY_ROUNDS
    sleep_rounds = 2 if quick else SLEEP_ROUNDS
    baseline = (
        f"idle `sleep` process, {n:,} live, same accounting, "
        f"median of {2 * sleep_rounds} rounds before and after the sandboxes"
    )
    if rounds > 1:
        name += f", median of {rounds} rounds"
        cg_name += f", median of {rounds} rounds"
    try:
        sleeps = []
        for _ in range(sleep_rounds):
            sleeps.append(_sleep_memory_kb(n))
        _note(f"{n} sleep processes: {', '.join(f'{x:.0f}' for x in sleeps)} KiB each")
        done: list[_Round] = []
        for _ in range(rounds):
            done.append(await _sandbox_round(config, n))
            _note(f"{done[-1].created} sandboxes: {done[-1].per_sandbox_kb:.0f} KiB each")
            if done[-1].problems:
                break  # a failing round is not repeated
        for _ in range(sleep_rounds):
            sleeps.append(_sleep_memory_kb(n))
        _note(f"{n} sleep processes: {', '.join(f'{x:.0f}' for x in sleeps[-sleep_rounds:])} KiB")
    except Exception as e:
        return [_failed(name, "KiB", e, max_value=2048.0)]
    per = [r.per_sandbox_kb for r in done if not math.isnan(r.per_sandbox_kb)]
    fig = Figure.make(
        BENCH,
        name,
        statistics.median(per) if per else math.nan,
        "KiB",
        baseline=baseline,
        baseline_value=statistics.median(sleeps),
        max_value=2048.0,
    )
    problems = [p for r in done for p in r.problems]
    if problems:
        fig = dataclasses.replace(fig, name=f"{name} -- FAILED: {'; '.join(problems)}", met=False)
    sums = [sum(r.cgroup_kb) / 1024 for r in done if r.cgroup_kb and len(r.cgroup_kb) == r.created]
    if done and done[-1].created < n:
        cg_name += f" -- only {done[-1].created} of them were made"
    if sums:
        cg = Figure.make(BENCH, cg_name, statistics.median(sums), "MiB")
    else:
        cg = _failed(cg_name, "MiB", "no sandbox's cgroup memory could be read")
    return [fig, cg]


def _own_mounts(config: BwrapConfig) -> set[Path]:
    from rollbox.sandbox import layers, state

    return set(layers.mounts_beneath(state.owner(config.state_dir).dir))


def _leftovers(config: BwrapConfig, agents: set[int], mounts_at_start: set[Path]) -> list[str]:
    """What this process's sandboxes left behind, once all were closed."""
    from rollbox.sandbox import bwrap, state

    left: list[str] = []
    own = state.owner(config.state_dir)
    kids = _children()
    if kids:
        left.append(f"{len(kids)} child processes ({', '.join(map(str, kids[:5]))})")
    live_agents = [p for p in agents if _is_agent(p)]
    if live_agents:
        left.append(f"{len(live_agents)} sandbox agents still running")
    mounts = sorted(_own_mounts(config) - mounts_at_start)
    if mounts:
        left.append(f"{len(mounts)} mounts ({', '.join(str(m) for m in mounts[:3])})")
    if own.dir.is_dir():
        dirs = sorted(
            p.name
            for p in own.dir.iterdir()
            if (p.name[:1] == "s" and p.name[1:].isdigit()) or p.name.startswith(("snap", "flat"))
        )
        if dirs:
            left.append(f"{len(dirs)} sandbox or snapshot directories ({', '.join(dirs[:5])})")
    host = bwrap.detect_host(config)
    groups = [g for g in host.cgroups.existing() if g.startswith(own.tag + ".")]
    if groups:
        left.append(f"{len(groups)} cgroups ({', '.join(groups[:5])})")
    return left


async def _main(quick: bool) -> list[Figure]:
    _raise_nofile()
    config = BwrapConfig()
    n = 100 if quick else 1000
    agents: set[int] = set()

    # remember every agent's host pid, to check at the end that none survives
    from rollbox.sandbox.bwrap import BwrapSandbox

    real_spawn = BwrapSandbox._spawn

    async def spawn(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await real_spawn(self, *args, **kwargs)
        finally:
            pid = getattr(self, "_agent_pid", None)
            if pid:
                agents.add(pid)

    BwrapSandbox._spawn = spawn  # type: ignore[method-assign]
    tmp = Path(tempfile.mkdtemp(prefix="rollbox-bench-sandbox-"))
    os.chmod(tmp, 0o711)  # the bare baseline's bwrap may run as the sandbox's unprivileged uid
    figures: list[Figure] = []
    mounts_at_start: set[Path] = set()
    try:
        # the backend's per-process state (mounts it keeps for its lifetime) is made on first use
        sb = await make_sandbox(config, None)
        await sb.close()
        mounts_at_start = _own_mounts(config)
        _note("create + exec + close")
        figures += await _create_exec_close(config, tmp, 30 if quick else 150)
        _note("exec")
        figures += await _exec_true(config, 60 if quick else 300)
        _note("fork")
        figures += await _fork(config, tmp, 8 if quick else 25)
        _note(f"{n} idle sandboxes")
        figures += await _many(config, n, quick)
    finally:
        BwrapSandbox._spawn = real_spawn  # type: ignore[method-assign]
        shutil.rmtree(tmp, ignore_errors=True)
    left = _leftovers(config, agents, mounts_at_start)
    name = "left behind after every sandbox was closed"
    fig = Figure.make(BENCH, name, float(len(left)), "kinds", max_value=0.0)
    if left:
        fig = dataclasses.replace(fig, name=f"{name}: {'; '.join(left)}")
    figures.append(fig)
    return figures


def run(quick: bool) -> list[Figure]:
    return asyncio.run(_main(quick))
