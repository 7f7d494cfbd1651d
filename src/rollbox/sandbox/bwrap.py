"""The `bwrap` backend: bubblewrap namespaces, cgroup limits, overlay workspaces.

A sandbox is one long-lived bubblewrap container whose PID 1 is a small agent (agent.sh). The
host sends it requests over a pipe; each command runs as the agent's child, so it inherits
everything the container was given: its own user, PID, mount, network (loopback only), IPC,
UTS and cgroup namespaces, no capabilities, no new privileges, a read-only system, a private
/tmp and a writable workspace only. Closing kills the whole cgroup (or PID namespace), unmounts
and removes everything.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.sandbox import agentbuild, cgroups, layers, seccomp, state
from rollbox.sandbox.base import (
    ExecResult,
    Mount,
    Sandbox,
    SandboxProcess,
    Snapshot,
    inside_workspace,
)
from rollbox.sandbox.config import BwrapConfig, Limits

WORKDIR = "/workspace"
CTL = "/run/rollbox"
SANDBOX_UID = 1000  # the user commands see inside
NOBODY = 65534
AGENT = Path(__file__).with_name("agent.sh")
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
CPU_POLL_S = 0.05
KILLED = -1  # the status of a command the agent killed on our request
START_TIMEOUT_S = 60.0
EXIT_WAIT_S = 2.0  # how long close() waits for bubblewrap to follow its killed child out
_ids = itertools.count(1)


@dataclass(frozen=True)
class Host:
    """What this host lets the backend do, found once per process."""

    bwrap: str
    uid: int | None  # the host uid to run sandboxes as (None: as ourselves)
    cgroups: cgroups.CgroupHost
    overlay: bool
    overlay_why_not: str
    python_dirs: tuple[Path, ...]  # interpreter directories to make visible read-only
    chroot: str = "chroot"  # coreutils' chroot, used (as root) only to switch users
    agent: agentbuild.Built = agentbuild.NOT_BUILT  # the compiled agent, if there is one
    launch: agentbuild.Built = agentbuild.NOT_BUILT  # the compiled launcher, if there is one

    def unenforced(self) -> list[str]:
        """Limits this host cannot enforce, each with the reason."""
        out = []
        if self.cgroups.version == 0:
            why = self.cgroups.why_not
            out += [
                f"memory (whole sandbox): {why}",
                f"pids (whole sandbox): {why}",
                f"cpu_s from outside: {why}; only a per-process RLIMIT_CPU applies",
            ]
        if not self.overlay:
            out.append(f"disk_mb (writable layer size): {self.overlay_why_not}")
        return out


_host: Host | None = None
_live: weakref.WeakSet[BwrapSandbox] = weakref.WeakSet()


@atexit.register
def _reap_at_exit() -> None:
    """At interpreter exit: kill every sandbox still open and reap its bubblewrap."""
    for sb in list(_live):
        sb._kill_now()


def detect_host(config: BwrapConfig | None = None) -> Host:
    """Probe bubblewrap, cgroups, overlays and the interpreter (cached)."""
    global _host
    if _host is not None:
        return _host
    bwrap = _which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "bubblewrap (bwrap) is not installed: install the system package 'bubblewrap' "
            "(Debian/Ubuntu: apt-get install bubblewrap), or run 'make setup'"
        )
    root = os.geteuid() == 0
    uid = (config.uid if config and config.uid is not None else NOBODY) if root else None
    overlay, why = layers.overlay_supported()
    dirs = dict.fromkeys([Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()])
    python_dirs = tuple(d for d in dirs if not str(d).startswith("/usr/"))
    chroot = _which("chroot") if uid is not None else None
    if uid is not None and chroot is None:
        raise SandboxError(
            "chroot (from coreutils) is not found in PATH, /usr/sbin or /sbin: rollbox uses it "
            "as root to run sandboxes as an unprivileged user"
        )
    _host = Host(
        bwrap,
        uid,
        cgroups.detect(),
        overlay,
        why,
        python_dirs,
        chroot or "chroot",
        agentbuild.build("agent"),
        agentbuild.build("launch"),
    )
    return _host


def _which(name: str) -> str | None:
    """A system program: in PATH, else where Debian keeps system programs (a user's PATH often
    lacks the sbin directories)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin", "/bin"])
    return shutil.which(name, path=path)


def _system_binds() -> list[str]:
    """The read-only view of the system: /usr and the top-level links or dirs into it."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / top
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    return args


# What a sandbox sees of the host's /etc: copied once per rollbox process into one directory,
# so that it is one bind mount, plus the synthetic files below.
HOST_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
    "localtime", "nsswitch.conf", "mime.types", "bash.bashrc", "inputrc", "protocols", "services",
)  # fmt: skip


_ETC_FILES = {
    "passwd": f"root:x:0:0:root:/root:/bin/bash\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:"
    "sandbox:/tmp:/bin/bash\nsandbox:x:65534:65534:sandbox:/tmp:/bin/bash\n",
    "group": f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\nsandbox:x:65534:\n",
    "hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
    "hostname": "sandbox\n",
}


class BwrapSandbox(Sandbox):
    """One bubblewrap container with its agent, cgroup and workspace."""

    def __init__(self) -> None:
        # set up by create(); __init__ only makes an empty shell so close() is always safe
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._exited: asyncio.Future[None] | None = None  # resolved when bwrap exits
        self._pidfd: int | None = None
        self._agent_pid: int | None = None
        self._group: cgroups.Cgroup | None = None
        self._layer: layers.Layer | None = None
        self._store: layers.LayerStore | None = None
        self._dir: Path | None = None
        self._req_w: int | None = None
        self._evt_r: int | None = None
        self._waiting: dict[str, asyncio.Future[int]] = {}
        self._cpu: dict[str, float] = {}
        self._evt_buf = b""
        self._ws: Path = Path("/nonexistent")  # the workspace, as the host reaches it
        self._upper: Path = Path("/nonexistent")  # its writable layer (the whole of it: copied)
        self._host: Host | None = None
        self._mounts: dict[str, Mount] = {}
        self._config: BwrapConfig = BwrapConfig()
        self._host_mounts: list[Path] = []  # mounts made on the host for this sandbox
        self._ready: asyncio.Future[None] | None = None  # the agent said it is up

    # ---- lifecycle ----------------------------------------------------------------------

    @classmethod
    async def create(
        cls,
        config: BwrapConfig,
        workspace: Path | layers.Layer | None = None,
        *,
        mounts: Mapping[str, Mount] | None = None,
        limits: Limits | None = None,
    ) -> BwrapSandbox:
        """Start a sandbox from a directory (copied once into a cached layer) or a layer."""
        self = cls()
        try:
            await self._start(config, workspace, dict(mounts or {}), limits or config.limits)
        except BaseException:
            await self.close()
            raise
        return self

    async def _start(
        self,
        config: BwrapConfig,
        workspace: Path | layers.Layer | None,
        mounts: dict[str, Mount],
        limits: Limits,
    ) -> None:
        host = detect_host(config)
        unenforced = host.unenforced()
        if unenforced and not config.allow_unenforced:
            raise SandboxError(
                "refusing to start a sandbox whose limits this host cannot enforce:\n  - "
                + "\n  - ".join(unenforced)
                + "\n(set allow_unenforced to start anyway; 'rollbox doctor' shows what is active)"
            )
        self._host, self._config, self.limits, self._mounts = host, config, limits, mounts
        own = state.owner(config.state_dir)
        self._store = _store_for(own, host)
        n = next(_ids)
        self._dir = own.dir / f"s{n}"
        self._dir.mkdir()
        os.chmod(self._dir, 0o711)
        if isinstance(workspace, layers.Layer):
            self._layer = self._store.retain(workspace)
        elif workspace is None:
            self._layer = self._store.empty()
        else:
            self._layer = await self._store.from_dir_async(Path(workspace))
        launch = host.launch.path if config.agent != "bash" else None
        # as root with the launcher, the workspace's mounts are made in a mount namespace of the
        # launcher's own (see launch.c), not in the host's
        private = launch is not None and host.overlay and host.uid is not None
        self._ws, tmp_dir, mount_ops = self._make_workspace(host, limits, private)
        self.file_uid = host.uid
        ctl = self._dir / "ctl"
        ctl.mkdir()
        os.chmod(ctl, 0o755)
        etc = _etc_for(own)
        for m in mounts.values():
            if m.writable and host.uid is not None:
                os.chown(m.host, host.uid, host.uid)
        await self._spawn(host, tmp_dir, ctl, etc, own.dir, f"{own.tag}.s{n}", launch, mount_ops)
        if private:
            # the host reaches the workspace through the launcher's (now bubblewrap's) namespace
            assert self._proc is not None
            self._ws = Path(f"/proc/{self._proc.pid}/root{self._ws}")
            self._upper = Path(f"/proc/{self._proc.pid}/root{self._upper}")

    def _make_workspace(
        self, host: Host, limits: Limits, private: bool
    ) -> tuple[Path, Path, list[str]]:
        """The workspace and /tmp (paths as bubblewrap sees them), and the launcher's mount
        operations when they are made in its namespace."""
        assert self._dir is not None and self._layer is not None
        uid = host.uid
        if host.overlay and private:
            rw, ws = self._dir / "rw", self._dir / "ws"
            rw.mkdir()
            ws.mkdir()
            lower = ":".join(str(p) for p in self._layer.stack)
            self._upper = rw / "upper"
            ops = [
                "--private-mounts",
                "--mount", "tmpfs", str(rw), f"size={limits.disk_mb}m,mode=0755,nr_inodes=1000000",
                "--mkdir", str(rw / "upper"), "755", str(uid),
                "--mkdir", str(rw / "work"), "755", "-1",
                "--mkdir", str(rw / "tmp"), "1777", "-1",
                "--mount", "overlay", str(ws),
                f"lowerdir={lower},upperdir={rw / 'upper'},workdir={rw / 'work'}",
            ]  # fmt: skip
            return ws, rw / "tmp", ops
        if host.overlay:
            rw = self._dir / "rw"
            rw.mkdir()
            self._upper = rw / "upper"
            layers.mount(
                "tmpfs", rw, "tmpfs", f"size={limits.disk_mb}m,mode=0755,nr_inodes=1000000"
            )
            self._host_mounts.append(rw)
            for d in ("upper", "work", "tmp"):
                (rw / d).mkdir()
            os.chmod(rw / "tmp", 0o1777)
            if uid is not None:
                os.chown(rw / "upper", uid, uid)
            ws = self._dir / "ws"
            ws.mkdir()
            lower = ":".join(str(p) for p in self._layer.stack)
            layers.mount(
                "overlay",
                ws,
                "overlay",
                f"lowerdir={lower},upperdir={rw / 'upper'},workdir={rw / 'work'}",
            )
            self._host_mounts.append(ws)
            if uid is not None:
                os.chown(ws, uid, uid)
            return ws, rw / "tmp", []
        ws = self._dir / "ws"
        self._upper = ws  # the copy fallback: the whole workspace is the state
        for p in reversed(self._layer.stack):
            layers.copy_tree(p, ws, uid, merge=True)
        tmp = self._dir / "tmp"
        tmp.mkdir()
        os.chmod(tmp, 0o1777)
        return ws, tmp, []

    async def _spawn(
        self,
        host: Host,
        tmp_dir: Path,
        ctl: Path,
        etc: Path,
        own_dir: Path,
        group: str,
        launch: Path | None,
        mount_ops: list[str],
    ) -> None:
        lim = self.limits
        group_limits = cgroups.Limits(
            memory_bytes=lim.memory_mb << 20, pids=lim.pids, cpus=lim.cpus
        )
        if host.cgroups.version and launch is None:
            # Without the launcher the group is made first: were it to fail after bubblewrap
            # started, killing bubblewrap between its clone and its go-ahead to the child would
            # leave that child waiting forever, outside any cgroup the sweep could find.
            self._group = host.cgroups.create(group, group_limits)
        info_r, info_w = os.pipe()
        # The start waits on the gate until the sandbox's cgroup is made and the agent will be in
        # it: with the launcher, the launcher waits before it enters the cgroup and starts
        # bubblewrap; without, bubblewrap waits (--block-fd) until the host has moved the agent.
        gate_r, gate_w = os.pipe()
        seccomp_fds: tuple[int, ...] = ()
        filter_prog = seccomp.program()
        if filter_prog is not None:
            sec_r, sec_w = os.pipe()
            os.write(sec_w, filter_prog)  # a few hundred bytes: fits the pipe's buffer
            os.close(sec_w)
            seccomp_fds = (sec_r,)
        req_r, req_w = os.pipe()
        evt_r, evt_w = os.pipe()
        self._req_w, self._evt_r = req_w, evt_r
        head, made_before = _common_args(host, etc, own_dir)
        args = list(head)
        made = set(made_before)
        args += [
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(self.limits.disk_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev",
            "--bind", str(tmp_dir), "/tmp",
            "--bind", str(self._ws), WORKDIR,
            "--perms", "0755", "--dir", "/run",
            "--ro-bind", str(ctl), CTL,
        ]  # fmt: skip
        agent_binds, agent_argv = _agent(self._config, host, own_dir)
        args += agent_binds
        for i, (point, m) in enumerate(sorted(self._mounts.items())):
            source = m.host
            if host.uid is not None and not _world_reachable(source):
                # bubblewrap runs as the sandbox's uid and could not reach it: bind it into
                # this sandbox's own directory first
                assert self._dir is not None
                source = self._dir / f"m{i}"
                source.mkdir()
                layers.bind(m.host, source, readonly=not m.writable)
                self._host_mounts.append(source)
            args += _parents(Path(point), made)
            args += ["--bind" if m.writable else "--ro-bind", str(source), point]
        args += [
            "--remount-ro", "/",  # the container's own root: nothing outside the mounts is writable
            "--chdir", WORKDIR,
            "--clearenv",
            "--setenv", "PATH", BASE_PATH,
            "--setenv", "RB_CTL", CTL,
            "--setenv", "RB_REQ_FD", str(req_r),
            "--setenv", "RB_EVT_FD", str(evt_w),
            "--setenv", "RB_INFO_FD", str(info_w),
            *(["--seccomp", str(seccomp_fds[0])] if seccomp_fds else []),
            "--info-fd", str(info_w),
            *([] if launch else ["--setenv", "RB_BLOCK_FD", str(gate_r),
                                 "--block-fd", str(gate_r)]),
            *agent_argv,
        ]  # fmt: skip
        assert self._dir is not None
        log = open(self._dir / "agent.log", "wb")  # noqa: SIM115
        try:
            # Spawned from the event loop's thread: --die-with-parent follows that thread.
            if launch is not None:
                pre = [str(launch), "--wait-fd", str(gate_r)]
                if host.cgroups.version:
                    for entry in host.cgroups.entry_files(group):
                        pre += ["--cgroup", str(entry)]
                if host.uid is not None:
                    pre += ["--user", f"{host.uid}:{host.uid}"]
                args = [*pre, *mount_ops, "--", *args]
            elif host.uid is not None:
                # coreutils' chroot to / only to switch users: Popen(user=...) cannot use
                # vfork, and forking a process with a model loaded costs milliseconds.
                ids = f"{host.uid}:{host.uid}"
                args = [host.chroot, f"--userspec={ids}", f"--groups={host.uid}", "/", *args]
            self._proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(info_w, gate_r, req_r, evt_w, *seccomp_fds),
            )
        except BaseException:
            os.close(gate_w)
            raise
        finally:
            log.close()
            for fd in (info_w, gate_r, req_r, evt_w, *seccomp_fds):
                os.close(fd)
        loop = asyncio.get_running_loop()
        self._exited = loop.create_future()
        self._pidfd = os.pidfd_open(self._proc.pid)
        loop.add_reader(self._pidfd, self._on_exit)
        try:
            if launch is not None:
                if host.cgroups.version:  # made while the launcher starts (it waits at the gate)
                    self._group = host.cgroups.create(group, group_limits)
                os.write(gate_w, b"1")  # the launcher enters the cgroup itself
            try:
                info = await asyncio.wait_for(_read_json(info_r), timeout=10)
            finally:
                os.close(info_r)
            if info is None:
                raise ProcessLookupError
            self._agent_pid = int(str(info["child-pid"]))
            _live.add(self)
            if launch is None:
                if self._group is not None:
                    self._group.add(self._agent_pid)
                os.write(gate_w, b"1")
        except (ProcessLookupError, BrokenPipeError):
            await asyncio.wait_for(asyncio.shield(self._exited), timeout=10)
            rc = self._proc.returncode
            detail = (self._dir / "agent.log").read_text(errors="replace").strip()
            raise SandboxError(
                f"bubblewrap failed to start the sandbox (exit {rc}): {detail}"
            ) from None
        finally:
            os.close(gate_w)  # (the only close of it: a second could hit a reused number)
        os.set_blocking(evt_r, False)
        self._ready = loop.create_future()
        loop.add_reader(evt_r, self._on_events)
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout=START_TIMEOUT_S)
        except TimeoutError:
            raise SandboxError(
                f"the sandbox did not start within {START_TIMEOUT_S:g}s (is the host overloaded?)"
            ) from None

    async def close(self) -> None:
        """Kill everything, unmount, remove. Idempotent; finishes even if cancelled."""
        if self._closed:
            return
        self._closed = True
        await asyncio.shield(self._teardown())

    async def _teardown(self) -> None:
        loop = asyncio.get_running_loop()
        if self._evt_r is not None:
            loop.remove_reader(self._evt_r)
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(SandboxError("the sandbox was closed"))
                fut.exception()  # whoever waits still gets it; nobody waiting is no error
        if self._agent_pid is not None:
            # PID 1 gone: the kernel kills everything else in its PID namespace, and bubblewrap
            # exits once its child has (so when it has, nothing of the sandbox runs any more)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._agent_pid, signal.SIGKILL)
        # The host's mounts and files go meanwhile: the container has mounts of its own (its
        # copies of them keep what they show alive until it is gone), so none of it is busy.
        files = asyncio.ensure_future(asyncio.to_thread(self._remove_files))
        try:
            if self._proc is not None and self._exited is not None:
                if self._agent_pid is not None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(self._exited), EXIT_WAIT_S)
                if self._proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        self._proc.kill()
                await self._exited
            for fd in (self._req_w, self._evt_r):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        finally:
            await files
        # the group last: empty once bubblewrap is gone (else destroy() kills what is left)
        if self._group is not None and not self._group.remove_if_empty():
            await asyncio.to_thread(self._group.destroy)

    def _remove_files(self) -> None:
        for point in reversed(self._host_mounts):
            with contextlib.suppress(OSError):
                layers.umount(point)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        if self._layer is not None and self._store is not None:
            self._store.release(self._layer)

    # ---- the seam -----------------------------------------------------------------------

    @property
    def workspace(self) -> Path:
        return self._ws

    @property
    def workdir(self) -> str:
        return WORKDIR

    def _kill_now(self) -> None:
        """Synchronous last resort (interpreter exit): kill PID 1, reap bubblewrap."""
        if self._agent_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._agent_pid, signal.SIGKILL)
        if self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=2)

    def _on_exit(self) -> None:
        """bubblewrap exited (its pidfd became readable): reap it, fail whoever waits."""
        assert self._proc is not None and self._pidfd is not None
        asyncio.get_running_loop().remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        self._proc.wait()
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)
        if not self._closed:  # not our doing: the container died under running commands
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_exception(SandboxError("the sandbox died (its container exited)"))

    @property
    def alive(self) -> bool:
        return not self._closed and self._proc is not None and self._proc.returncode is None

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float | None = None,
        cpu_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        output_cap: int | None = None,
    ) -> ExecResult:
        lim = self.limits
        wall = timeout_s if timeout_s is not None else lim.wall_s
        cpu = cpu_s if cpu_s is not None else lim.cpu_s
        req = self._submit(cmd, env, cwd, stdin, cpu, output_cap or lim.output_bytes)
        group = self._group
        cpu0 = group.cpu_s() if group else 0.0
        ooms0 = group.oom_kills() if group else 0
        if group is not None:
            group.reset_peak()
        t0 = time.monotonic()
        timed_out = False
        status: int | None = None
        try:
            req.send()
            deadline = t0 + wall

            async def within_limits(wait: Callable[[], Awaitable[object]]) -> bool:
                """Wait; False at the wall limit or (polled from the cgroup) the CPU limit."""
                while (left := deadline - time.monotonic()) > 0:
                    try:
                        step = min(left, CPU_POLL_S) if group else left
                        await asyncio.wait_for(wait(), timeout=step)
                        return True
                    except TimeoutError:
                        if group is not None and group.cpu_s() - cpu0 > cpu:
                            return False
                return False

            timed_out = not await within_limits(lambda: asyncio.shield(req.done))
            if not timed_out:
                status = req.done.result()
                if req.reporter_lost:
                    # The command killed its reporter (`kill -9 -1` under the bash agent) and
                    # may still run: its output is whole once it lets go of it.
                    timed_out = not await within_limits(req.output_closed.wait)
            if timed_out:
                status = await req.kill()
        finally:
            req.finish()
        wall_s = time.monotonic() - t0
        cpu_used, peak = self._usage(req.id, group, cpu0)
        return ExecResult(
            exit_code=None if _signal_of(status) else status,
            signal=_signal_of(status),
            stdout=req.bufs[0].decode("utf-8", "replace"),
            stderr=req.bufs[1].decode("utf-8", "replace"),
            wall_s=wall_s,
            cpu_s=cpu_used,
            peak_memory_kb=peak,
            timed_out=timed_out,
            oom_killed=bool(group and group.oom_kills() > ooms0),
            output_truncated=req.truncated,
        )

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_cap: int | None = None,
    ) -> SandboxProcess:
        """Start a long-running process whose stdin the caller writes and output it reads."""
        req = self._submit(list(argv), env, cwd, STREAM, self.limits.cpu_s * 1000,
                           output_cap or self.limits.output_bytes)  # fmt: skip
        req.send()
        return _BwrapProcess(req)

    def _submit(
        self,
        cmd: str | Sequence[str],
        env: Mapping[str, str] | None,
        cwd: str | None,
        stdin: bytes | object | None,
        cpu: float,
        cap: int,
    ) -> _Request:
        """Write a request's files and open its pipes; `send()` then starts it."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not self.alive or self._dir is None or self._req_w is None:
            raise SandboxError("the sandbox died (its container exited)")
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if not argv:
            raise ValueError("empty command")
        full_env = {"PATH": self._path(), "HOME": "/tmp", "LANG": "C.UTF-8", "USER": "sandbox"}
        full_env.update(env or {})
        for key in full_env:
            if not _ENV_NAME.match(key):
                raise ValueError(f"not a valid environment variable name: {key!r}")
        workdir = WORKDIR + ("/" + inside_workspace(cwd) if cwd and cwd != "." else "")
        lim = self.limits
        # RLIMIT_CPU in whole seconds (a backstop: the host enforces cpu_s from outside),
        # RLIMIT_FSIZE in bash's 1024-byte blocks, RLIMIT_NOFILE
        limits_line = f"{max(1, int(cpu + 1))} {lim.fsize_mb * 1024} {lim.nofile}"
        body = f"{workdir}\n{limits_line}\n{len(argv)}\n".encode() + b"".join(
            a.encode() + b"\0" for a in [*argv, *(f"{k}={v}" for k, v in full_env.items())]
        )
        uid = self._host.uid if self._host else None
        req = _Request(
            str(next(_ids)), self._dir / "ctl", self._req_w, cap, self._waiting, self._on_events
        )
        try:
            req.prepare(body, stdin, uid)
        except BaseException:
            req.finish()
            raise
        return req

    def _path(self) -> str:
        assert self._host is not None
        bins = [str(d / "bin") for d in self._host.python_dirs]
        return ":".join([*bins, BASE_PATH])

    def _usage(
        self, req_id: str, group: cgroups.Cgroup | None, cpu0: float
    ) -> tuple[float, int | None]:
        own = self._cpu.pop(req_id, 0.0)
        if group is not None:
            with contextlib.suppress(OSError):
                return group.cpu_s() - cpu0, group.peak_memory_kb()
        return own, None

    def _on_events(self) -> None:
        assert self._evt_r is not None
        try:
            data = os.read(self._evt_r, 65536)
        except BlockingIOError:
            return
        except OSError as e:
            if e.errno != errno.EAGAIN:
                data = b""
            else:
                return
        if not data:
            asyncio.get_running_loop().remove_reader(self._evt_r)
            if self._ready is not None and not self._ready.done():
                log = (self._dir / "agent.log").read_text(errors="replace") if self._dir else ""
                self._ready.set_exception(SandboxError(f"the sandbox's agent did not start: {log}"))
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(SandboxError("the sandbox's agent exited"))
            return
        self._evt_buf += data
        *lines, self._evt_buf = self._evt_buf.split(b"\n")
        for line in lines:
            parts = line.decode(errors="replace").split()
            if parts == ["ready"] and self._ready is not None and not self._ready.done():
                self._ready.set_result(None)
            elif len(parts) == 4 and parts[0] == "cpu" and parts[1] in self._waiting:
                with contextlib.suppress(ValueError):
                    self._cpu[parts[1]] = float(parts[2]) + float(parts[3])
            elif len(parts) == 3 and parts[0] == "done":
                self._resolve(parts[1], int(parts[2]))
            elif len(parts) == 2 and parts[0] == "killed":
                self._resolve(parts[1], KILLED)

    def _resolve(self, req_id: str, status: int) -> None:
        waiting = self._waiting.get(req_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(status)

    async def snapshot(self) -> Snapshot:
        """Capture the writable layer (frozen meanwhile, so the copy is consistent)."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        assert self._store is not None and self._layer is not None and self._dir is not None
        store, base, group = self._store, self._layer, self._group
        upper = self._upper

        def capture() -> layers.Layer:
            if group is not None:
                group.set_frozen(True)
            try:
                if upper == self._ws:  # the copy fallback: the whole workspace is the state
                    return store.snapshot(upper, store.empty())
                return store.snapshot(upper, base)
            finally:
                if group is not None:
                    group.set_frozen(False)

        layer = await asyncio.to_thread(capture)
        return _BwrapSnapshot(self._config, store, layer, self._mounts, self.limits)


def _write_new(path: str, data: bytes, mode: int) -> None:
    """Create a file with `data` (raw system calls: this runs for every command)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.chmod(path, mode)  # whatever the umask took away


STREAM = object()  # stdin that the caller streams (spawn) rather than gives up front
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _signal_of(status: int | None) -> int | None:
    """The signal that ended a command, from the agent's status (bash's 128+N convention)."""
    if status is None or status == KILLED:
        return int(signal.SIGKILL)
    return status - 128 if status > 128 else None


class _Request:
    """One command in the agent: its files in the control directory and its output pipes."""

    def __init__(
        self,
        req_id: str,
        ctl: Path,
        req_w: int,
        cap: int,
        waiting: dict[str, asyncio.Future[int]],
        drain_events: Callable[[], None],
    ) -> None:
        self.id, self._base, self._req_w, self._cap = req_id, str(ctl / req_id), req_w, cap
        self._drain_events = drain_events
        self._waiting = waiting
        self._loop = asyncio.get_running_loop()
        self.done: asyncio.Future[int] = self._loop.create_future()
        waiting[req_id] = self.done
        self.bufs = [bytearray(), bytearray()]
        self.truncated = False
        self.stdin_fd: int | None = None
        self._fds: list[int] = []
        self._finished = False
        self.on_output: asyncio.Event = asyncio.Event()
        self.output_closed: asyncio.Event = asyncio.Event()  # EOF on both stdout and stderr
        self._open_outputs = 2
        self.reporter_lost = False  # its reporter went without a report (bash agent only)

    def prepare(self, body: bytes, stdin: bytes | object | None, uid: int | None) -> None:
        _write_new(self._base + ".req", body, 0o644)
        for suffix in (".out", ".err", ".life"):
            os.mkfifo(self._base + suffix, 0o600)
            if uid is not None:
                os.chown(self._base + suffix, uid, uid)
            self._fds.append(
                os.open(self._base + suffix, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            )
        if stdin is STREAM:
            os.mkfifo(self._base + ".in", 0o600)
            if uid is not None:
                os.chown(self._base + ".in", uid, uid)
            # read-write, so that opening does not wait for the reader and we can hold it
            self.stdin_fd = os.open(self._base + ".in", os.O_RDWR | os.O_CLOEXEC)
        elif isinstance(stdin, bytes):
            _write_new(self._base + ".in", stdin, 0o644)
        for i, fd in enumerate(self._fds[:2]):
            self._loop.add_reader(fd, self._read, i)
        self._loop.add_reader(self._fds[2], self._on_life)

    def _on_life(self) -> None:
        """The supervisor's end of ID.life: EOF means it is gone (its report, if any, is sent
        before it goes, so pending events are read first)."""
        try:
            if os.read(self._fds[2], 64):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        self._loop.remove_reader(self._fds[2])
        self._drain_events()
        if not self.done.done():
            self.reporter_lost = True
            self.done.set_result(KILLED)  # killed from inside before it could report

    def send(self) -> None:
        os.write(self._req_w, f"run {self.id}\n".encode())

    def _read(self, i: int) -> None:
        fd = self._fds[i]
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._loop.remove_reader(fd)
                self._open_outputs -= 1
                if self._open_outputs == 0:
                    self.output_closed.set()
                return
            room = self._cap - len(self.bufs[i])
            if len(chunk) > room:
                self.truncated = True
            self.bufs[i].extend(chunk[: max(room, 0)])
            self.on_output.set()

    async def kill(self) -> int | None:
        """Kill the command's process group; its status, once the agent confirms."""
        with contextlib.suppress(OSError):
            os.write(self._req_w, f"kill {self.id}\n".encode())
        try:
            return await asyncio.wait_for(asyncio.shield(self.done), timeout=2.0)
        except (TimeoutError, SandboxError):
            return None

    def finish(self) -> None:
        """Drain what is already there, close the pipes, remove the files. Idempotent."""
        if self._finished:
            return
        self._finished = True
        self._waiting.pop(self.id, None)
        for i, fd in enumerate(self._fds):
            if i < 2:
                self._read(i)
            self._loop.remove_reader(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.stdin_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.stdin_fd)
        if self.done.done() and not self.done.cancelled() and self.done.exception() is None:
            with contextlib.suppress(OSError):
                os.write(self._req_w, f"forget {self.id}\n".encode())
        for suffix in (".req", ".out", ".err", ".life", ".in"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._base + suffix)


class _BwrapProcess(SandboxProcess):
    def __init__(self, req: _Request) -> None:
        self._req = req

    @property
    def returncode(self) -> int | None:
        if not self._req.done.done() or self._req.done.exception() is not None:
            return None
        status = self._req.done.result()
        sig = _signal_of(status)
        return -sig if sig else status

    async def write(self, data: bytes) -> None:
        if self._req.stdin_fd is None:
            raise SandboxError("the process's stdin is closed")
        view = memoryview(data)
        while view:
            n = (
                await asyncio.to_thread(os.write, self._req.stdin_fd, view)
                if len(view) > 4096
                else os.write(self._req.stdin_fd, view)
            )
            view = view[n:]

    def take_output(self) -> tuple[bytes, bytes, bool]:
        out, err = bytes(self._req.bufs[0]), bytes(self._req.bufs[1])
        self._req.bufs[0].clear()
        self._req.bufs[1].clear()
        truncated, self._req.truncated = self._req.truncated, False
        self._req.on_output.clear()
        return out, err, truncated

    async def wait_output(self, timeout_s: float) -> None:
        waiter: asyncio.Future[object] = asyncio.ensure_future(self._req.on_output.wait())
        done: asyncio.Future[object] = self._req.done  # type: ignore[assignment]
        try:
            await asyncio.wait({waiter, done}, timeout=timeout_s, return_when="FIRST_COMPLETED")
        finally:
            waiter.cancel()

    async def kill(self) -> None:
        if not self._req.done.done():
            await self._req.kill()
        self._req.finish()

    def close(self) -> None:
        self._req.finish()


class _BwrapSnapshot(Snapshot):
    def __init__(
        self,
        config: BwrapConfig,
        store: layers.LayerStore,
        layer: layers.Layer,
        mounts: Mapping[str, Mount],
        limits: Limits,
    ) -> None:
        self._config, self._store, self.layer = config, store, layer
        self._mounts, self._limits = mounts, limits
        self._released = False

    async def fork(self, *, limits: Limits | None = None) -> Sandbox:
        if self._released:
            raise SandboxError("the snapshot was released")
        return await BwrapSandbox.create(
            self._config, self.layer, mounts=self._mounts, limits=limits or self._limits
        )

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._store.release(self.layer)


def _etc_for(own: state.Owner) -> Path:
    """The sandbox's /etc, made once per rollbox process: a few host files, synthetic ones."""
    etc = own.dir / "etc"
    if (etc / "hostname").exists():
        return etc
    tmp = own.dir / "etc.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for name in HOST_ETC:
        src = Path("/etc") / name
        with contextlib.suppress(OSError, shutil.Error):
            if src.is_symlink():
                os.symlink(os.readlink(src), tmp / name)
            elif src.is_dir():
                shutil.copytree(src, tmp / name, symlinks=True, ignore=_unreadable)
            elif src.is_file():
                shutil.copy2(src, tmp / name)
    for name, text in _ETC_FILES.items():
        (tmp / name).write_text(text)
    os.chmod(tmp, 0o755)
    with contextlib.suppress(OSError):
        tmp.rename(etc)
    return etc


def _agent(config: BwrapConfig, host: Host, own_dir: Path) -> tuple[list[str], list[str]]:
    """The agent's binds and command line: the compiled agent, or bash running agent.sh."""
    if config.agent != "bash" and host.agent.path is not None:
        binary = _execute_only_copy(host.agent.path, own_dir / "agent-bin")
        return ["--ro-bind", str(binary), "/run/rollbox-agent"], ["/run/rollbox-agent"]
    if config.agent == "compiled":
        raise SandboxError(f"the compiled sandbox agent was asked for: {host.agent.why_not}")
    bash = _execute_only_copy(Path(shutil.which("bash") or "/bin/bash"), own_dir / "agent-bash")
    binds = ["--ro-bind", str(AGENT), "/run/rollbox-agent.sh",
             "--ro-bind", str(bash), "/run/rollbox-bash"]  # fmt: skip
    return binds, ["/run/rollbox-bash", "--noprofile", "--norc", "/run/rollbox-agent.sh"]


def _execute_only_copy(source: Path, path: Path) -> Path:
    """An execute-only copy of the agent's binary, once per rollbox process: the kernel makes a
    process that runs an unreadable binary non-dumpable, so that the sandbox's commands cannot
    ptrace the agent (the compiled agent also says so itself)."""
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        shutil.copyfile(source, tmp)
        os.chmod(tmp, 0o111)
        tmp.rename(path)
    return path


def _unreadable(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if not os.access(os.path.join(directory, n), os.R_OK)]


_COMMON: dict[tuple[str, Path, Path, int], tuple[list[str], frozenset[Path]]] = {}


def _common_args(host: Host, etc: Path, own_dir: Path) -> tuple[list[str], frozenset[Path]]:
    """The start of every sandbox's bubblewrap arguments (the same for all of one rollbox
    process's sandboxes: made once per state directory), and the directories they create."""
    key = (host.bwrap, etc, own_dir, os.stat(own_dir).st_ino)
    if key not in _COMMON:
        # A user namespace of the sandbox's own, where nobody has capabilities and no further
        # user namespace can be made; as root, bubblewrap itself runs as an unprivileged uid.
        uid = str(SANDBOX_UID)
        ns = ["--unshare-all", "--unshare-user", "--disable-userns",
              "--uid", uid, "--gid", uid, "--cap-drop", "ALL"]  # fmt: skip
        args = [
            host.bwrap,
            *ns,
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--hostname", "sandbox",
            *_system_binds(),
            "--ro-bind", str(etc), "/etc",
        ]  # fmt: skip
        made: set[Path] = set()
        for inside, source in _python_binds(own_dir, host):
            args += [*_parents(inside, made), "--ro-bind", str(source), str(inside)]
        _COMMON[key] = (args, frozenset(made))
    return _COMMON[key]


def _python_binds(own_dir: Path, host: Host) -> list[tuple[Path, Path]]:
    """(path inside, host source) for the interpreter's directories.

    bubblewrap runs as the sandbox's uid, which may not traverse to them (pyenv under /root,
    say): those are bind-mounted once per rollbox process into its state directory first.
    """
    out = []
    for i, d in enumerate(host.python_dirs):
        if host.uid is None or _world_reachable(d):
            out.append((d, d))
            continue
        point = own_dir / f"python{i}"
        if not point.is_dir() or not any(point.iterdir()):
            point.mkdir(exist_ok=True)
            layers.bind(d, point, readonly=True)
        out.append((d, point))
    return out


def _world_reachable(d: Path) -> bool:
    """Whether any user may traverse to `d` and read it."""
    for p in [d, *d.parents]:
        try:
            mode = p.stat().st_mode
        except OSError:
            return False
        if not mode & 0o001:
            return False
    return bool(d.stat().st_mode & 0o004)


def _parents(dest: Path, made: set[Path]) -> list[str]:
    """Create a bind destination's ancestors as 0755 (bubblewrap would copy the source's)."""
    args: list[str] = []
    for parent in reversed(dest.parents):
        if parent != Path("/") and parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


_stores: dict[Path, layers.LayerStore] = {}


def _store_for(own: state.Owner, host: Host) -> layers.LayerStore:
    store = _stores.get(own.dir)
    if store is None:
        store = _stores[own.dir] = layers.LayerStore(own.dir, host.uid)
    return store


async def _read_json(fd: int) -> dict[str, object] | None:
    """bwrap's --info-fd document; None if bwrap exits without writing it."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    buf = b""
    ready: asyncio.Future[None] = loop.create_future()

    def on_read() -> None:
        if not ready.done():
            ready.set_result(None)

    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            ready = loop.create_future()
            loop.add_reader(fd, on_read)
            try:
                await ready
            finally:
                loop.remove_reader(fd)
            continue
        if not chunk:
            break
        buf += chunk
        try:
            doc = json.loads(buf)
        except ValueError:
            continue
        if isinstance(doc, dict) and "child-pid" in doc:
            return doc
    return None
