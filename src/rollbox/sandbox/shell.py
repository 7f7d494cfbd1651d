"""A persistent shell in a sandbox, for multi-turn agents: like a terminal, the working
directory and exported variables survive from one command to the next.

Each command is sent as `eval '<command>' </dev/null 2>&1`, followed by a marker line that
carries its exit status and the shell's working directory, so the session knows where the
output of one command ends. Commands cannot read the session's own input. A command that runs
past its timeout (or exits the shell) ends the shell; the next command starts a new one in the
last known directory, and says so.
"""

from __future__ import annotations

import re
import secrets
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass

from rollbox.sandbox.base import Sandbox, SandboxProcess

NO_CAP = 1 << 62  # the process keeps everything; the session applies its own cap


@dataclass(frozen=True)
class ShellResult:
    output: str  # stdout and stderr interleaved, as a terminal shows them
    exit_code: int | None  # None when the command was cut off
    timed_out: bool
    truncated: bool
    restarted: bool  # the shell had ended (timeout, `exit`): this one is a new shell
    cwd: str
    wall_s: float


class ShellSession:
    """A bash that lives as long as the session, in one sandbox."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        env: Mapping[str, str] | None = None,
        output_cap: int = 64 * 1024,
    ) -> None:
        self._sandbox = sandbox
        self._env = dict(env or {})
        self._cap = output_cap
        self._proc: SandboxProcess | None = None
        self._token = secrets.token_hex(8)
        self._n = 0
        self.cwd = sandbox.workdir
        self._ended_before = False

    async def _ensure(self) -> bool:
        """Start the shell if there is none; True if this is a restart."""
        if self._proc is not None and self._proc.returncode is None:
            return False
        if self._proc is not None:
            self._proc.close()
        self._proc = await self._sandbox.spawn(
            ["bash", "--noprofile", "--norc"], env=self._env, output_cap=NO_CAP
        )
        if self.cwd != self._sandbox.workdir:
            await self._proc.write(f"cd {shlex.quote(self.cwd)} 2>/dev/null\n".encode())
        restarted, self._ended_before = self._ended_before, False
        return restarted

    async def run(self, command: str, *, timeout_s: float = 60.0) -> ShellResult:
        """Run one command in the session's shell."""
        restarted = await self._ensure()
        proc = self._proc
        assert proc is not None
        self._n += 1
        mark = f"__ROLLBOX_{self._token}_{self._n}__"
        pattern = re.compile(rf"\n{mark} (\d+) ([^\n]*)\n".encode())
        line = (
            f"eval {shlex.quote(command)} </dev/null 2>&1\n"
            f'printf \'\\n{mark} %d %s\\n\' "$?" "$PWD"\n'
        )
        t0 = time.monotonic()
        await proc.write(line.encode())
        kept = _HeadTail(self._cap)
        tail = b""  # the end, kept to find the marker however long the output is
        while True:
            out, err, _ = proc.take_output()
            chunk = out + err
            if chunk:
                window = tail + chunk
                m = pattern.search(window)
                body = window[: m.start()] if m else window[: max(len(window) - 256, 0)]
                tail = b"" if m else window[len(body) :]
                kept.add(body)
                if m:
                    self.cwd = m.group(2).decode(errors="replace") or self.cwd
                    return ShellResult(
                        output=kept.text(),
                        exit_code=int(m.group(1)),
                        timed_out=False,
                        truncated=kept.cut > 0,
                        restarted=restarted,
                        cwd=self.cwd,
                        wall_s=time.monotonic() - t0,
                    )
            left = timeout_s - (time.monotonic() - t0)
            ended = proc.returncode is not None
            if left <= 0 or ended:
                if not ended:
                    await proc.kill()
                self._ended_before = True
                kept.add(tail)
                note = (
                    f"\n[the command timed out after {timeout_s:g}s; the shell was restarted]"
                    if not ended
                    else "\n[the shell exited; a new one starts with the next command]"
                )
                code = proc.returncode if ended else None
                return ShellResult(
                    output=kept.text() + note,
                    exit_code=code if code is not None and code >= 0 else None,
                    timed_out=not ended,
                    truncated=kept.cut > 0,
                    restarted=restarted,
                    cwd=self.cwd,
                    wall_s=time.monotonic() - t0,
                )
            await proc.wait_output(min(left, 1.0))

    async def close(self) -> None:
        if self._proc is not None:
            await self._proc.kill()
            self._proc = None


class _HeadTail:
    """The first and the last half of `cap` bytes of a stream, and how much was cut between:
    the start of a long output says what ran, its end usually says how it ended."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.last = bytearray()
        self.cut = 0

    def add(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head.extend(data[:room])
            data = data[room:]
        if data:
            self.last.extend(data)
            over = len(self.last) - self.half
            if over > 0:
                del self.last[:over]
                self.cut += over

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        last = self.last.decode("utf-8", "replace")
        if not self.cut:
            return head + last
        return f"{head}\n[... {self.cut} bytes of output cut here ...]\n{last}"
