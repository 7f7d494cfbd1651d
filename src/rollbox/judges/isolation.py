"""The code under test in a sandbox of its own, for the test judge (`isolation = "process"`).

The hidden tests run in one sandbox (pytest, the judge's plugin, the report); the candidate's
code runs in another, started from the same finished workspace, where a small server
(`remote.py`, copied in as `rollbox_judge_remote.py`) imports its modules on request. The two
meet only at a Unix socket in a directory both mount (the test side read-only) and at pytest's
temporary directory (`tmp_path`), mounted at the same path in both so that a path a test hands
to the code names the same file there. Separate sandboxes mean separate process trees, PID
namespaces and memory: the code under test cannot patch pytest, trace the test process, read
the hidden tests or the report, and what it returns reaches the tests as plain values.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.judges.common import TaskEnvironment
from rollbox.sandbox.base import Mount, Sandbox, SandboxFactory, SandboxProcess

REMOTE = "/rollbox/remote"  # in the candidate's sandbox: the server's files, read-only
CHANNEL = "/rollbox/channel"  # in both: the socket's directory
SHARED_TMP = "/rollbox/tmp"  # in both: pytest's basetemp
SERVER = "rollbox_judge_remote.py"
# never served from the candidate's process: pytest's and the judge's own names
_NEVER = {"conftest", "pytest", "_pytest", "pluggy", "py"}


def server_files(dest: Path) -> Path:
    """The server and the plain-value helper it uses, in `dest`."""
    here = Path(__file__).parent
    dest.mkdir(parents=True, exist_ok=True)
    (dest / SERVER).write_text((here / "remote.py").read_text())
    (dest / "rollbox_judge_plain.py").write_text((here / "plain.py").read_text())
    return dest


def code_modules(workspace: Path, tests: Path) -> list[str]:
    """The workspace's top-level modules and packages the tests may import, except names of
    the hidden tests' own files, test modules, pytest's and the judge's names, and names of the
    standard library (the tests' process keeps its own: pytest may import them lazily)."""
    own = (
        {p.stem if p.suffix == ".py" else p.name for p in tests.iterdir()}
        if tests.is_dir()
        else set()
    )
    names = set()
    for p in workspace.iterdir():
        if p.is_symlink():
            continue
        if p.is_file() and p.suffix == ".py":
            names.add(p.stem)
        elif p.is_dir() and any(q.suffix == ".py" for q in p.rglob("*.py")):
            names.add(p.name)
    return sorted(
        n
        for n in names
        if n.isidentifier()
        and n not in _NEVER
        and n not in own
        and not n.startswith(("test_", "rollbox_judge"))
        and not n.endswith("_test")
        and n not in sys.stdlib_module_names
    )


def socket_path(sandbox: Sandbox) -> str:
    """The server's socket, as commands in `sandbox` (either one) see it."""
    return f"{sandbox.path(CHANNEL)}/code.sock"


def basetemp(sandbox: Sandbox) -> str:
    """pytest's basetemp, as commands in `sandbox` (either one) see it."""
    return f"{sandbox.path(SHARED_TMP)}/pytest"


def remote_env(sandbox: Sandbox, modules: list[str]) -> dict[str, str]:
    """What the judge's plugin reads in the test sandbox to reach the candidate's process."""
    return {"ROLLBOX_REMOTE": socket_path(sandbox), "ROLLBOX_REMOTE_MODULES": ",".join(modules)}


class CodeProcess:
    """The candidate's sandbox with the server running in it, waiting for the tests."""

    def __init__(self, sandbox: Sandbox, server: SandboxProcess, root: Path) -> None:
        self.sandbox, self.server, self.root = sandbox, server, root
        self._head = b""  # the start of the server's output: its "ready", its "connected"

    @classmethod
    async def start(
        cls,
        sandboxes: SandboxFactory,
        workspace: Path,
        environment: TaskEnvironment,
        root: Path,
        *,
        wait: bool = True,
    ) -> CodeProcess:
        """A sandbox from `workspace` with the server starting in it (`root` holds the
        server's files, the socket's directory and the shared temporary directory); with
        `wait`, once it listens. (The test side waits for the socket to appear, so the tests
        may start meanwhile; `started()` then says whether it ever did.)"""
        if not (root / "channel").is_dir():
            cls.prepare(root)
        mounts = {
            REMOTE: Mount(server_files(root / "remote")),
            CHANNEL: Mount(root / "channel", writable=True),
            SHARED_TMP: Mount(root / "tmp", writable=True),
        }
        sandbox = await sandboxes(workspace, mounts=mounts | environment.mounts())
        try:
            env = {
                "PYTHONPATH": environment.pythonpath(sandbox),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
            argv = ["python", f"{sandbox.path(REMOTE)}/{SERVER}", "serve", socket_path(sandbox)]
            code = cls(sandbox, await sandbox.spawn(argv, env=env), root)
            if wait:
                await code.started()
        except BaseException:
            await sandbox.close()
            raise
        return code

    def _says(self, word: bytes) -> bool:
        out, _, _ = self.server.take_output()
        if len(self._head) < 64:
            self._head = (self._head + out)[:64]
        return word + b"\n" in self._head

    async def started(self, timeout_s: float = 60) -> None:
        """Return once the server has said it listens; SandboxError if it exited or never
        did (the judge's machinery failed, not the candidate: its code is not loaded yet)."""
        if not self._says(b"ready"):
            what = "the code under test's server"
            seen = await wait_for(self.server, "ready", timeout_s=timeout_s, what=what)
            self._head = (self._head + seen)[:64]

    def check_reached(self) -> None:
        """After the tests: SandboxError if the server ended before the tests reached it (then
        no code of the candidate's ran, and whatever failed is the machinery's doing)."""
        if not self._says(b"connected") and self.server.returncode is not None:
            raise SandboxError("the code under test's server ended before the tests reached it")

    @staticmethod
    def prepare(root: Path) -> dict[str, Mount]:
        """Make `root`'s directories (before either sandbox starts); return what the test
        sandbox mounts to reach the code's: the socket's directory (read-only), tmp_path."""
        (root / "channel").mkdir(parents=True)
        (root / "tmp").mkdir()
        for d in (root, root / "channel"):
            d.chmod(0o755)
        return _test_mounts(root)

    def test_mounts(self) -> dict[str, Mount]:
        """What the test sandbox mounts to reach this one (see `prepare`)."""
        return _test_mounts(self.root)

    async def close(self) -> None:
        try:
            await self.server.kill()
        finally:
            await self.sandbox.close()


def _test_mounts(root: Path) -> dict[str, Mount]:
    return {CHANNEL: Mount(root / "channel"), SHARED_TMP: Mount(root / "tmp", writable=True)}


async def wait_for(proc: SandboxProcess, word: str, *, timeout_s: float, what: str) -> bytes:
    """Wait until a process in a sandbox prints `word` (its sign that it is ready); what it
    printed meanwhile."""
    deadline = time.monotonic() + timeout_s
    seen = b""
    while True:
        out, err, _ = proc.take_output()
        seen += out
        if word.encode() in seen:
            return seen
        if proc.returncode is not None:
            raise SandboxError(f"{what} exited: {(seen + err).decode()[-500:]}")
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError(f"{what} did not start in time")
        await proc.wait_output(min(left, 1.0))
