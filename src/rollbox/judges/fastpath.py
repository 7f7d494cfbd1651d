"""The test judge's fast path: pytest already imported, in a sandbox already running.

A cold verdict pays for a sandbox and for a Python that imports pytest and its plugins before
any test runs. Here a warm pool per task version keeps sandboxes ready: each starts from the
task's pristine workspace with the judge's read-only files mounted, and runs a small server
that has imported pytest (never the code under test) and waits for one request. A verdict takes
one, writes the candidate's changes into its workspace, and tells the server to run the tests;
the server is used once and the sandbox closed after, exactly like a cold run's. The outcomes
come from the same plugin, report file and token as the cold path, so verdicts are the same.

    async with FastTestJudge(sandboxes) as judge:
        verdict = await judge.judge(task, changes, sandboxes)
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path

from rollbox.judges.base import Changes
from rollbox.judges.common import TaskEnvironment
from rollbox.judges.isolation import CodeProcess, basetemp, code_modules, remote_env, wait_for
from rollbox.judges.pytest_judge import (
    JUDGE,
    REPORT,
    TestJudge,
    isolated_code,
    judge_dir,
    pytest_args,
    run_env,
    start_env,
)
from rollbox.sandbox.base import ExecResult, Mount, Sandbox, SandboxFactory, SandboxProcess
from rollbox.sandbox.fsutil import remove_beneath
from rollbox.sandbox.pool import WarmPool
from rollbox.tasks.model import Task

EXIT_MARK = "__ROLLBOX_PYTEST_EXIT__"
# Imported ahead of time: pytest and the plugins it loads for every run (not the tests, not
# the code under test, not the judge's own plugin, which reads its run's token when loaded).
SERVER = f"""
import importlib, json, os, sys
import pytest, _pytest.config as pc
import rollbox_judge_plain, rollbox_judge_remote  # the judge's helpers (standard library only)
ARGS = json.loads(sys.argv[1])
try:  # what pytest.main does first, done ahead with the very arguments of the coming run
    initial = pc.get_config(ARGS, None, prog="pytest.main()")
except Exception:  # pytest's internals moved: plain pytest.main below
    initial = None
print("ready", flush=True)
request = json.loads(sys.stdin.readline())
os.environ.update(request["env"])
os.chdir(request["cwd"])
if initial is None:
    code = pytest.main(ARGS)
else:  # the rest of pytest's own _main
    os.environ["PYTEST_VERSION"] = pytest.__version__
    try:
        pm = initial.pluginmanager
        config = pm.hook.pytest_cmdline_parse(pluginmanager=pm, args=ARGS)
        try:
            code = config.hook.pytest_cmdline_main(config=config)
        finally:
            config._ensure_unconfigure()
    except pytest.UsageError as e:
        print("usage error:", e, file=sys.stderr)
        code = 4
sys.stdout.flush()
print("\\n{EXIT_MARK}", int(code), flush=True)
os._exit(0)
"""


@dataclass
class _Warm:
    sandbox: Sandbox
    server: SandboxProcess
    report_dir: Path
    code: CodeProcess | None  # the code under test's own sandbox, when it has one


class FastTestJudge(TestJudge):
    """The test judge, served from warm sandboxes with pytest imported."""

    name = "pytest"

    def __init__(self, sandboxes: SandboxFactory, *, pool_size: int = 1) -> None:
        self._sandboxes = sandboxes
        self._pool_size = pool_size
        self._pools: dict[str, tuple[WarmPool, Path]] = {}
        self._closing: set[asyncio.Future[None]] = set()
        self._warm: dict[Sandbox, _Warm] = {}  # the server and report dir of each warm sandbox

    async def __aenter__(self) -> FastTestJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every pool, every sandbox still waiting in one, and every used one."""
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        for pool, root in self._pools.values():
            await pool.close()
            _rmtree(root)
        self._pools.clear()
        # a warm pair's second sandbox (the code under test's) is not in the pool: close it too
        codes = [w.code for w in self._warm.values() if w.code is not None]
        self._warm.clear()
        await asyncio.gather(*(code.close() for code in codes), return_exceptions=True)

    async def warm(self, task: Task) -> None:
        """Start the task's pool now (otherwise the first verdict starts it)."""
        await self._pool(task)

    async def _pool(self, task: Task) -> WarmPool:
        if task.key not in self._pools:
            root = _mkdtemp(f"fast-{task.id}")
            jdir = judge_dir(task, root / "judge")
            environment = await TaskEnvironment.of(task)
            counter = iter(range(1 << 30))

            async def make() -> Sandbox:
                n = next(counter)
                report_dir = root / f"report{n}"
                report_dir.mkdir()
                report_dir.chmod(0o755)
                mounts = {JUDGE: Mount(jdir), REPORT: Mount(report_dir, writable=True)}
                mounts |= environment.mounts()
                isolated = isolated_code(task)
                code = None
                if isolated:
                    code = await CodeProcess.start(
                        self._sandboxes, task.workspace_dir, environment, root / f"code{n}"
                    )
                    mounts |= code.test_mounts()
                try:
                    sandbox = await self._sandboxes(task.workspace_dir, mounts=mounts)
                    try:
                        temp = basetemp(sandbox) if isolated else None
                        args = json.dumps(pytest_args(sandbox.path(JUDGE), basetemp=temp))
                        server = await sandbox.spawn(
                            ["python", "-c", SERVER, args], env=start_env(sandbox, environment)
                        )
                        await wait_for(server, "ready", timeout_s=60, what="the pytest server")
                    except BaseException:
                        await sandbox.close()
                        raise
                except BaseException:
                    if code is not None:
                        await code.close()
                    raise
                self._warm[sandbox] = _Warm(sandbox, server, report_dir, code)
                return sandbox

            pool = WarmPool(make, size=self._pool_size)
            await pool.start()
            self._pools[task.key] = (pool, root)
        return self._pools[task.key][0]

    async def _execute(
        self,
        task: Task,
        changes: Changes,
        sandboxes: SandboxFactory,
        environment: TaskEnvironment,
        tmp: Path,
        report_dir: Path,
        token: str,
    ) -> ExecResult:
        pool = await self._pool(task)
        sandbox = await pool.acquire()
        warm = self._warm.pop(sandbox)
        t0 = time.monotonic()
        try:
            env = run_env(sandbox, environment, token)
            for box in (sandbox, warm.code.sandbox) if warm.code else (sandbox,):
                for rel, data in changes.items():
                    if data is None:
                        remove_beneath(box.workspace, rel)
                    else:
                        await box.write_file(rel, data)
            if warm.code is not None:
                tests = self._pools[task.key][1] / "judge" / "tests"
                env |= remote_env(sandbox, code_modules(warm.code.sandbox.workspace, tests))
            request = {"env": env, "cwd": sandbox.workdir}
            await warm.server.write((json.dumps(request) + "\n").encode())
            res = await _collect(warm.server, task.spec.limits.timeout_s, t0)
            if warm.code is not None:
                warm.code.check_reached()
            # the run's report: where the cold path would have it
            src = warm.report_dir / "report.jsonl"
            if src.is_file():
                (report_dir / "report.jsonl").write_bytes(src.read_bytes())
        finally:
            # the verdict does not wait for the clean-up; close() waits for what is left
            closing = asyncio.ensure_future(_dispose(warm))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        return res


async def _dispose(warm: _Warm) -> None:
    """Kill the used server, close its sandbox (and the code's), remove its report."""
    try:
        await warm.server.kill()
    finally:
        try:
            await warm.sandbox.close()
        finally:
            if warm.code is not None:
                await warm.code.close()
            _rmtree(warm.report_dir)


async def _collect(proc: SandboxProcess, timeout_s: float, t0: float) -> ExecResult:
    """Run output until the server reports pytest's exit code, exits, or runs out of time."""
    out, err = bytearray(), bytearray()
    code: int | None = None
    timed_out = False
    while True:
        o, e, _ = proc.take_output()
        out += o
        err += e
        mark = out.rfind(EXIT_MARK.encode())
        if mark >= 0 and out.endswith(b"\n"):
            code = int(out[mark + len(EXIT_MARK) :].split()[0])
            del out[mark:]
            break
        if proc.returncode is not None:
            await asyncio.sleep(0)
            o, e, _ = proc.take_output()
            out += o
            err += e
            if EXIT_MARK.encode() in out:
                continue
            break
        left = timeout_s - (time.monotonic() - t0)
        if left <= 0:
            timed_out = True
            break
        await proc.wait_output(min(left, 1.0))
    rc = proc.returncode
    return ExecResult(
        exit_code=code if code is not None else (rc if rc is not None and rc >= 0 else None),
        signal=-rc if rc is not None and rc < 0 else None,
        stdout=out.decode("utf-8", "replace")[-100_000:],
        stderr=err.decode("utf-8", "replace")[-100_000:],
        wall_s=time.monotonic() - t0,
        cpu_s=0.0,  # not measured per request on this path
        peak_memory_kb=None,
        timed_out=timed_out,
    )


def _mkdtemp(prefix: str) -> Path:
    import tempfile

    d = Path(tempfile.mkdtemp(prefix=f"rollbox-{prefix}-"))
    d.chmod(0o755)
    return d


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
