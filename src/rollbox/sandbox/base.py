"""The Sandbox seam: isolated execution with limits, as one async abstract class."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol

DEFAULT_OUTPUT_CAP = 1 << 20  # bytes kept of each of stdout and stderr


@dataclass(frozen=True)
class ExecResult:
    """What one command did. Output is decoded as UTF-8 with replacement."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    peak_memory_kb: int
    timed_out: bool = False
    oom_killed: bool = False
    output_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Sandbox(abc.ABC):
    """A private workspace and a way to run commands in it. Use as `async with`."""

    @property
    @abc.abstractmethod
    def workspace(self) -> Path:
        """The workspace as seen by the host (for copying files in and out)."""

    @abc.abstractmethod
    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> ExecResult:
        """Run argv, or a shell string with `bash -c`, in the workspace."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Kill everything and remove everything; idempotent."""

    async def read_file(self, path: str) -> bytes:
        return (self.workspace / _inside(path)).read_bytes()

    async def write_file(self, path: str, data: bytes) -> None:
        target = self.workspace / _inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _inside(path: str) -> str:
    p = Path(path)
    if p.is_absolute() or ".." in p.parts:
        raise ValueError(f"path must stay inside the workspace: {path!r}")
    return path


class SandboxFactory(Protocol):
    """Makes a sandbox whose workspace starts as a copy of `workspace` (empty if None).

    `ro_paths` are host directories the sandbox must see read-only, at the same paths.
    """

    async def __call__(
        self, workspace: Path | None, *, ro_paths: Sequence[Path] = ()
    ) -> Sandbox: ...
