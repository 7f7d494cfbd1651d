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
import contextlib
import errno
import itertools
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.sandbox import cgroups, layers, state
from rollbox.sandbox.base import ExecResult, Mount, Sandbox, Snapshot, inside_workspace
from rollbox.sandbox.config import BwrapConfig, Limits

WORKDIR = "/workspace"
CTL = "/run/rollbox"
SANDBOX_UID = 1000  # the user commands see inside
NOBODY = 65534
AGENT = Path(__file__).with_name("agent.sh")
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
CPU_POLL_S = 0.05
KILLED = -1  # the status of a command the agent killed on our request
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


def detect_host(config: BwrapConfig | None = None) -> Host:
    """Probe bubblewrap, cgroups, overlays and the interpreter (cached)."""
    global _host
    if _host is not None:
        return _host
    bwrap = shutil.which("bwrap")
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
    _host = Host(bwrap, uid, cgroups.detect(), overlay, why, python_dirs)
    return _host


def _system_binds() -> list[str]:
    """The read-only view of the system: /usr and friends, a few files of /etc."""
    args = ["--ro-bind", "/usr", "/usr", "--perms", "0755", "--dir", "/etc"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / top
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for etc in (
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/alternatives",
        "/etc/ssl",
        "/etc/ca-certificates",
        "/etc/localtime",
        "/etc/nsswitch.conf",
        "/etc/mime.types",
        "/etc/bash.bashrc",
    ):
        if os.path.exists(etc):
            args += ["--ro-bind", etc, etc]
    return args


_SYSTEM: list[str] | None = None
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
        self._proc: asyncio.subprocess.Process | None = None
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
        self._ws: Path = Path("/nonexistent")
        self._host: Host | None = None
        self._mounts: dict[str, Mount] = {}
        self._config: BwrapConfig = BwrapConfig()
        self._exec_lock = asyncio.Lock()

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
            self._layer = await asyncio.to_thread(self._store.from_dir, Path(workspace))
        self._ws, tmp_dir = self._make_workspace(host, limits)
        self.file_uid = host.uid
        ctl = self._dir / "ctl"
        ctl.mkdir()
        os.chmod(ctl, 0o755)
        etc = self._dir / "etc"
        etc.mkdir()
        for name, text in _ETC_FILES.items():
            (etc / name).write_text(text)
        for m in mounts.values():
            if m.writable and host.uid is not None:
                os.chown(m.host, host.uid, host.uid)
        if host.cgroups.version:
            mem = limits.memory_mb * 1024 * 1024
            self._group = host.cgroups.create(
                f"{own.tag}.s{n}", cgroups.Limits(memory_bytes=mem, pids=limits.pids)
            )
        await self._spawn(host, tmp_dir, ctl, etc)

    def _make_workspace(self, host: Host, limits: Limits) -> tuple[Path, Path]:
        assert self._dir is not None and self._layer is not None
        uid = host.uid
        if host.overlay:
            rw = self._dir / "rw"
            rw.mkdir()
            layers.mount(
                "tmpfs", rw, "tmpfs", f"size={limits.disk_mb}m,mode=0755,nr_inodes=1000000"
            )
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
            if uid is not None:
                os.chown(ws, uid, uid)
            return ws, rw / "tmp"
        ws = self._dir / "ws"
        for p in reversed(self._layer.stack):
            layers.copy_tree(p, ws, uid, merge=True)
        tmp = self._dir / "tmp"
        tmp.mkdir()
        os.chmod(tmp, 0o1777)
        return ws, tmp

    async def _spawn(self, host: Host, tmp_dir: Path, ctl: Path, etc: Path) -> None:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        req_r, req_w = os.pipe()
        evt_r, evt_w = os.pipe()
        self._req_w, self._evt_r = req_w, evt_r
        global _SYSTEM
        if _SYSTEM is None:
            _SYSTEM = _system_binds()
        if host.uid is not None:
            # As root: bubblewrap sets the container up with its privileges, then setpriv drops
            # the agent (and so every command) to an unprivileged host uid, with no
            # capabilities, no new privileges, and the parent-death signal armed again.
            ns = [
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup",
            ]
            start = [
                "setpriv",
                f"--reuid={host.uid}",
                f"--regid={host.uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--pdeathsig=SIGKILL",
                "--",
            ]
        else:
            # Unprivileged: a user namespace of our own, where nobody gets capabilities.
            ns = [
                "--unshare-all",
                "--unshare-user",
                "--disable-userns",
                "--uid",
                str(SANDBOX_UID),
                "--gid",
                str(SANDBOX_UID),
                "--cap-drop",
                "ALL",
            ]
            start = []
        args = [
            host.bwrap,
            *ns,
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--hostname", "sandbox",
            *_SYSTEM,
        ]  # fmt: skip
        for name in _ETC_FILES:
            args += ["--ro-bind", str(etc / name), f"/etc/{name}"]
        made: set[Path] = set()
        for d in host.python_dirs:
            args += [*_parents(d, made), "--ro-bind", str(d), str(d)]
        args += [
            "--proc", "/proc",
            "--dev", "/dev",
            "--bind", str(tmp_dir), "/tmp",
            "--bind", str(self._ws), WORKDIR,
            "--perms", "0755", "--dir", "/run",
            "--ro-bind", str(ctl), CTL,
            "--ro-bind", str(AGENT), "/run/rollbox-agent.sh",
        ]  # fmt: skip
        for point, m in sorted(self._mounts.items()):
            args += _parents(Path(point), made)
            args += ["--bind" if m.writable else "--ro-bind", str(m.host), point]
        args += [
            "--chdir", WORKDIR,
            "--clearenv",
            "--setenv", "PATH", BASE_PATH,
            "--setenv", "RB_CTL", CTL,
            "--setenv", "RB_REQ_FD", str(req_r),
            "--setenv", "RB_EVT_FD", str(evt_w),
            "--setenv", "RB_INFO_FD", str(info_w),
            "--setenv", "RB_BLOCK_FD", str(block_r),
            "--info-fd", str(info_w),
            "--block-fd", str(block_r),
            *start,
            "/bin/bash", "--noprofile", "--norc", "/run/rollbox-agent.sh",
        ]  # fmt: skip
        assert self._dir is not None
        log = open(self._dir / "agent.log", "wb")  # noqa: SIM115
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(info_w, block_r, req_r, evt_w),
            )
        finally:
            log.close()
            for fd in (info_w, block_r, req_r, evt_w):
                os.close(fd)
        try:
            info = await asyncio.wait_for(_read_json(info_r), timeout=10)
        finally:
            os.close(info_r)
        try:
            if info is None:
                raise ProcessLookupError
            self._agent_pid = int(str(info["child-pid"]))
            if self._group is not None:
                self._group.add(self._agent_pid)
            os.write(block_w, b"1")
        except (ProcessLookupError, BrokenPipeError):
            rc = await self._proc.wait()
            detail = (self._dir / "agent.log").read_text(errors="replace").strip()
            raise SandboxError(
                f"bubblewrap failed to start the sandbox (exit {rc}): {detail}"
            ) from None
        finally:
            os.close(block_w)
        os.set_blocking(evt_r, False)
        asyncio.get_running_loop().add_reader(evt_r, self._on_events)

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
        if self._group is not None:
            await asyncio.to_thread(self._group.kill_all)
        elif self._agent_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._agent_pid, signal.SIGKILL)  # PID 1 gone: the namespace goes
        if self._proc is not None:
            if self._proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self._proc.kill()
            await self._proc.wait()
        for fd in (self._req_w, self._evt_r):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        await asyncio.to_thread(self._remove_files)

    def _remove_files(self) -> None:
        if self._group is not None:
            self._group.destroy()
        if self._dir is not None:
            for point in (self._dir / "ws", self._dir / "rw"):
                with contextlib.suppress(OSError):
                    layers.umount(point)
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
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not self.alive:
            raise SandboxError("the sandbox died (its container exited)")
        lim = self.limits
        wall = timeout_s if timeout_s is not None else lim.wall_s
        cpu = cpu_s if cpu_s is not None else lim.cpu_s
        cap = output_cap or lim.output_bytes
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        full_env = {"PATH": self._path(), "HOME": "/tmp", "LANG": "C.UTF-8", "USER": "sandbox"}
        full_env.update(env or {})
        workdir = WORKDIR + ("/" + inside_workspace(cwd) if cwd and cwd != "." else "")
        req_id = str(next(_ids))
        assert self._dir is not None
        ctl = self._dir / "ctl"
        f = ctl / req_id
        limits_line = f"{max(1, int(cpu + 1))} {lim.fsize_mb * 2048} {lim.nofile}"
        body = f"{workdir}\n{limits_line}\n{len(argv)}\n".encode() + b"".join(
            a.encode() + b"\0" for a in [*argv, *(f"{k}={v}" for k, v in full_env.items())]
        )
        Path(f"{f}.req").write_bytes(body)
        fds: list[int] = []
        try:
            for suffix in (".out", ".err"):
                os.mkfifo(f"{f}{suffix}", 0o600)
                if self._host and self._host.uid is not None:
                    os.chown(f"{f}{suffix}", self._host.uid, self._host.uid)
                fds.append(os.open(f"{f}{suffix}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
            if stdin is not None:
                Path(f"{f}.in").write_bytes(stdin)
                os.chmod(f"{f}.in", 0o644)
            return await self._run(req_id, fds, wall, cpu, cap)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            for suffix in (".req", ".out", ".err", ".in"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{f}{suffix}")

    def _path(self) -> str:
        assert self._host is not None
        bins = [str(d / "bin") for d in self._host.python_dirs]
        return ":".join([*bins, BASE_PATH])

    async def _run(
        self, req_id: str, fds: list[int], wall: float, cpu: float, cap: int
    ) -> ExecResult:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()
        self._waiting[req_id] = done
        bufs = [bytearray(), bytearray()]
        truncated = False

        def reader(i: int) -> None:
            nonlocal truncated
            while True:
                try:
                    chunk = os.read(fds[i], 65536)
                except BlockingIOError:
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    loop.remove_reader(fds[i])
                    return
                room = cap - len(bufs[i])
                if len(chunk) > room:
                    truncated = True
                bufs[i].extend(chunk[: max(room, 0)])

        for i, fd in enumerate(fds):
            loop.add_reader(fd, reader, i)
        group = self._group
        cpu0 = group.cpu_s() if group else 0.0
        ooms0 = group.oom_kills() if group else 0
        if group is not None:
            group.reset_peak()
        t0 = time.monotonic()
        timed_out = False
        status: int | None = None
        try:
            assert self._req_w is not None
            os.write(self._req_w, f"run {req_id}\n".encode())
            deadline = t0 + wall
            while status is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                try:
                    step = min(left, CPU_POLL_S) if group else left
                    status = await asyncio.wait_for(asyncio.shield(done), timeout=step)
                except TimeoutError:
                    if group is not None and group.cpu_s() - cpu0 > cpu:
                        timed_out = True
                        break
            if timed_out:
                with contextlib.suppress(OSError):
                    os.write(self._req_w, f"kill {req_id}\n".encode())
                with contextlib.suppress(TimeoutError, SandboxError):
                    status = await asyncio.wait_for(asyncio.shield(done), timeout=2.0)
        finally:
            self._waiting.pop(req_id, None)
            for i, fd in enumerate(fds):
                reader(i)  # drain what is already there
                loop.remove_reader(fd)
        wall_s = time.monotonic() - t0
        if status is None and not timed_out:
            raise SandboxError("the sandbox's agent stopped answering")
        assert self._dir is not None
        cpu_used, peak = self._usage(req_id, group, cpu0)
        oom = bool(group and group.oom_kills() > ooms0)
        sig: int | None = None
        code: int | None = status
        if status is None or status == KILLED:
            sig, code = int(signal.SIGKILL), None
        elif status > 128:
            sig, code = status - 128, None
        if not timed_out and self._req_w is not None:
            with contextlib.suppress(OSError):
                os.write(self._req_w, f"forget {req_id}\n".encode())
        return ExecResult(
            exit_code=code,
            signal=sig,
            stdout=bufs[0].decode("utf-8", "replace"),
            stderr=bufs[1].decode("utf-8", "replace"),
            wall_s=wall_s,
            cpu_s=cpu_used,
            peak_memory_kb=peak,
            timed_out=timed_out,
            oom_killed=oom,
            output_truncated=truncated,
        )

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
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(SandboxError("the sandbox's agent exited"))
            return
        self._evt_buf += data
        *lines, self._evt_buf = self._evt_buf.split(b"\n")
        for line in lines:
            parts = line.decode(errors="replace").split()
            if len(parts) == 4 and parts[0] == "cpu" and parts[1] in self._waiting:
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
        upper = self._dir / "rw" / "upper" if self._host and self._host.overlay else self._ws

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
