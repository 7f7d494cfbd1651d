"""The `local` backend: no isolation at all, for development and for tests of the layers above.

It runs commands as plain child processes in a private temporary copy of the workspace, with
wall-clock limits enforced from outside and output cut at a cap. It must be asked for by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.sandbox.base import (
    ExecResult,
    Mount,
    Sandbox,
    SandboxProcess,
    Snapshot,
    inside_workspace,
)
from rollbox.sandbox.config import Limits

log = logging.getLogger(__name__)
_warned = False

BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


class LocalSandbox(Sandbox):
    """A temporary directory and plain subprocesses. NOT isolated: it must be asked for by name.

    Limits enforced: wall clock (from outside) and output size, nothing else.
    """

    def __init__(
        self,
        workspace: Path | None = None,
        *,
        mounts: Mapping[str, Mount] | None = None,
        limits: Limits | None = None,
        path_prefix: Sequence[str] = (),
    ) -> None:
        global _warned
        if not _warned:
            _warned = True
            log.warning("the local sandbox backend isolates nothing: use it for development only")
        self.limits = limits or Limits()
        self._root = Path(tempfile.mkdtemp(prefix="rollbox-local-"))
        self._work = self._root / "work"
        self._mounts = dict(mounts or {})
        self._closed = False
        # The interpreter running rollbox comes first on PATH, as it is visible in a bwrap sandbox.
        self._path_prefix = tuple(path_prefix) or (str(Path(sys.executable).parent),)
        try:
            if workspace is not None:
                shutil.copytree(workspace, self._work, symlinks=True)
            else:
                self._work.mkdir()
        except OSError as e:
            shutil.rmtree(self._root, ignore_errors=True)
            raise SandboxError(f"could not create the workspace copy: {e}") from e

    @classmethod
    def create(
        cls,
        workspace: Path | None = None,
        *,
        mounts: Mapping[str, Mount] | None = None,
        limits: Limits | None = None,
    ) -> LocalSandbox:
        return cls(workspace, mounts=mounts, limits=limits)

    @property
    def workspace(self) -> Path:
        return self._work

    @property
    def workdir(self) -> str:
        return str(self._work)

    def path(self, mount_point: str) -> str:
        if mount_point not in self._mounts:
            raise KeyError(f"no mount at {mount_point!r}")
        return str(self._mounts[mount_point].host)

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
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        full_env = dict(BASE_ENV)
        full_env["PATH"] = ":".join([*self._path_prefix, full_env["PATH"]])
        full_env.update(env or {})
        workdir = self._work / inside_workspace(cwd) if cwd else self._work
        return await asyncio.to_thread(
            run_process,
            argv,
            full_env,
            workdir,
            stdin,
            timeout_s or self.limits.wall_s,
            output_cap or self.limits.output_bytes,
        )

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_cap: int | None = None,
    ) -> SandboxProcess:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        full_env = dict(BASE_ENV)
        full_env["PATH"] = ":".join([*self._path_prefix, full_env["PATH"]])
        full_env.update(env or {})
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self._work / inside_workspace(cwd) if cwd else self._work,
            env=full_env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return _LocalProcess(proc, output_cap or self.limits.output_bytes)

    async def snapshot(self) -> Snapshot:
        snap_dir = Path(tempfile.mkdtemp(prefix="rollbox-local-snap-"))
        await asyncio.to_thread(shutil.copytree, self._work, snap_dir / "work", symlinks=True)
        return _LocalSnapshot(snap_dir, self._mounts, self.limits)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, self._root, True))


class _LocalProcess(SandboxProcess):
    def __init__(self, proc: asyncio.subprocess.Process, cap: int) -> None:
        self._proc, self._cap = proc, cap
        self._bufs = [bytearray(), bytearray()]
        self._truncated = False
        self._event = asyncio.Event()
        assert proc.stdout is not None and proc.stderr is not None
        self._tasks = [
            asyncio.ensure_future(self._pump(proc.stdout, 0)),
            asyncio.ensure_future(self._pump(proc.stderr, 1)),
            asyncio.ensure_future(self._reap()),
        ]

    async def _reap(self) -> None:
        await self._proc.wait()
        self._event.set()

    async def _pump(self, stream: asyncio.StreamReader, i: int) -> None:
        while chunk := await stream.read(65536):
            room = self._cap - len(self._bufs[i])
            if len(chunk) > room:
                self._truncated = True
            self._bufs[i].extend(chunk[: max(room, 0)])
            self._event.set()
        self._event.set()

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    async def write(self, data: bytes) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(data)
        await self._proc.stdin.drain()

    def take_output(self) -> tuple[bytes, bytes, bool]:
        out, err = bytes(self._bufs[0]), bytes(self._bufs[1])
        self._bufs[0].clear()
        self._bufs[1].clear()
        truncated, self._truncated = self._truncated, False
        self._event.clear()
        return out, err, truncated

    async def wait_output(self, timeout_s: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), timeout_s)

    async def kill(self) -> None:
        if self._proc.returncode is None:
            _kill_group(self._proc.pid)
            await self._proc.wait()
        self.close()

    def close(self) -> None:
        if self._proc.returncode is None:
            _kill_group(self._proc.pid)
        for t in self._tasks:
            t.cancel()


class _LocalSnapshot(Snapshot):
    def __init__(self, root: Path, mounts: Mapping[str, Mount], limits: Limits) -> None:
        self._root, self._mounts, self._limits = root, mounts, limits

    async def fork(self, *, limits: Limits | None = None) -> Sandbox:
        return await asyncio.to_thread(
            LocalSandbox, self._root / "work", mounts=self._mounts, limits=limits or self._limits
        )

    def release(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)


def run_process(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    stdin: bytes | None,
    timeout_s: float,
    output_cap: int,
) -> ExecResult:
    """Run one process group to completion: capped output, wall-clock limit, rusage."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        raise SandboxError(f"could not start {argv[0]!r}: {e}") from e
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin)
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    truncated = timed_out = False
    with selectors.DefaultSelector() as sel:
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(err_fd, selectors.EVENT_READ)
        deadline = start + timeout_s
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                _kill_group(proc.pid)
                break
            for key, _ in sel.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                buf = bufs[key.fd]
                room = max(output_cap - len(buf), 0)
                if len(chunk) > room:
                    truncated = True
                buf.extend(chunk[:room])
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    _kill_group(proc.pid)  # anything the command left behind in its process group
    proc.stdout.close()
    proc.stderr.close()
    return ExecResult(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        stdout=bufs[out_fd].decode("utf-8", "replace"),
        stderr=bufs[err_fd].decode("utf-8", "replace"),
        wall_s=time.monotonic() - start,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_memory_kb=usage.ru_maxrss,
        timed_out=timed_out,
        output_truncated=truncated,
    )


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def local_sandbox(
    workspace: Path | None,
    *,
    mounts: Mapping[str, Mount] | None = None,
    limits: Limits | None = None,
) -> Sandbox:
    """A SandboxFactory for the local backend."""
    return LocalSandbox(workspace, mounts=mounts, limits=limits)
