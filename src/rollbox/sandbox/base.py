"""The Sandbox seam: isolated execution with limits, as one async abstract class."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from rollbox.sandbox.fsutil import list_beneath, read_beneath, write_beneath

if TYPE_CHECKING:
    from rollbox.sandbox.config import Limits


@dataclass(frozen=True)
class ExecResult:
    """What one command did. Output is decoded as UTF-8 with replacement."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    peak_memory_kb: int | None  # None where the host cannot measure it
    timed_out: bool = False
    oom_killed: bool = False
    output_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed


@dataclass(frozen=True)
class Mount:
    """A host directory made visible inside a sandbox (read-only unless `writable`; a
    writable one is given to the sandbox's user, so that its commands can write there)."""

    host: Path
    writable: bool = False


@dataclass(frozen=True)
class Entry:
    """One entry of `Sandbox.list`."""

    path: str
    kind: str  # "file", "dir", "link", "other"
    size: int


class SandboxProcess(abc.ABC):
    """A long-running process in a sandbox: its stdin is written, its output read as it comes."""

    @property
    @abc.abstractmethod
    def returncode(self) -> int | None:
        """None while it runs; the exit status, or minus the signal that killed it."""

    @abc.abstractmethod
    async def write(self, data: bytes) -> None:
        """Write to its stdin."""

    @abc.abstractmethod
    def take_output(self) -> tuple[bytes, bytes, bool]:
        """(stdout, stderr, truncated) produced since the last call."""

    @abc.abstractmethod
    async def wait_output(self, timeout_s: float) -> None:
        """Return when new output arrives, the process ends, or the timeout passes."""

    @abc.abstractmethod
    async def kill(self) -> None:
        """Kill it and its process group."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release its pipes (it is killed first if still running)."""


class Snapshot(abc.ABC):
    """The captured writable state of a sandbox, from which `fork` starts new ones."""

    @abc.abstractmethod
    async def fork(self, *, limits: Limits | None = None) -> Sandbox:
        """A new, independent sandbox that starts from this state."""

    @abc.abstractmethod
    def release(self) -> None:
        """Free what the snapshot holds; forks already made keep working."""


class Sandbox(abc.ABC):
    """A private workspace and a way to run commands in it. Use as `async with`.

    `workspace` is the workspace on the host (to copy files in and out); `workdir` is the same
    directory as commands see it. Mounts are seen at their own paths (`path(...)`).
    """

    limits: Limits

    @property
    @abc.abstractmethod
    def workspace(self) -> Path:
        """The workspace on the host."""

    @property
    @abc.abstractmethod
    def workdir(self) -> str:
        """The workspace as commands inside see it."""

    def path(self, mount_point: str) -> str:
        """Where a mount (named by its in-sandbox path) is, as commands see it."""
        return mount_point

    @abc.abstractmethod
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
        """Run argv, or a shell string with `bash -c`, in the workspace (or `cwd` inside it)."""

    @abc.abstractmethod
    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_cap: int | None = None,
    ) -> SandboxProcess:
        """Start a long-running process (a shell, say) to talk to."""

    @abc.abstractmethod
    async def snapshot(self) -> Snapshot:
        """Capture the writable state."""

    async def fork(self, *, limits: Limits | None = None) -> Sandbox:
        """An independent sandbox starting from this one's current state."""
        snap = await self.snapshot()
        try:
            return await snap.fork(limits=limits)
        finally:
            snap.release()

    @abc.abstractmethod
    async def close(self) -> None:
        """Kill everything and remove everything; idempotent and safe under cancellation."""

    file_uid: int | None = None  # files written from the host are given to this user

    async def read_file(self, path: str, *, max_bytes: int | None = None) -> bytes:
        """A regular file of the workspace; links (which the sandbox may plant) are refused."""
        return read_beneath(self.workspace, path, max_bytes=max_bytes)

    async def write_file(self, path: str, data: bytes) -> None:
        """Write a file into the workspace, replacing whatever is at that path."""
        write_beneath(self.workspace, path, data, uid=self.file_uid)

    async def list(self, path: str = ".") -> list[Entry]:
        """Entries beneath a workspace directory (recursively); links are listed, not followed."""
        return [Entry(p, kind, size) for p, kind, size in list_beneath(self.workspace, path)]

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def inside_workspace(path: str) -> str:
    """A relative path that stays beneath the workspace; refuses absolute paths and `..`."""
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts:
        raise ValueError(f"path must stay inside the workspace: {path!r}")
    return path


class SandboxFactory(Protocol):
    """Makes a sandbox whose workspace starts as a copy of `workspace` (empty if None).

    `mounts` maps absolute in-sandbox paths to host directories.
    """

    async def __call__(
        self,
        workspace: Path | None,
        *,
        mounts: Mapping[str, Mount] | None = None,
        limits: Limits | None = None,
    ) -> Sandbox: ...
