"""The test judge: hidden pytest tests, a configuration of the judge's own, per-test outcomes."""

from __future__ import annotations

import asyncio
import json
import secrets
import shlex
import time
from pathlib import Path

from rollbox.errors import JudgeError
from rollbox.judges.base import Changes, Judge, Outcome, OutcomeStatus, Verdict, VerdictStatus
from rollbox.judges.common import (
    TaskEnvironment,
    lay_out_candidate,
    lay_out_tests,
    scratch,
    tail,
)
from rollbox.judges.isolation import CodeProcess, basetemp, code_modules, remote_env
from rollbox.judges.rewrite import rewrite
from rollbox.sandbox.base import ExecResult, Mount, Sandbox, SandboxFactory
from rollbox.tasks.loader import reference_changes
from rollbox.tasks.model import PytestJudge, Task

PLUGIN = "rollbox_judge_report"
JUDGE = "/rollbox/judge"  # in the sandbox: the judge's files, read-only
REPORT = "/rollbox/report"  # in the sandbox: where the plugin writes its report
INI = "[pytest]\naddopts =\npython_files = test_*.py *_test.py\n"

_expected_cache: dict[str, tuple[str, ...]] = {}


class TestJudge(Judge):
    name = "pytest"

    async def judge(self, task: Task, changes: Changes, sandboxes: SandboxFactory) -> Verdict:
        expected = await self.expected_ids(task, sandboxes)
        return await self._run(task, changes, sandboxes, expected)

    async def expected_ids(self, task: Task, sandboxes: SandboxFactory) -> tuple[str, ...]:
        """The test ids that must pass: the task's `required`, or all the reference collects."""
        assert isinstance(task.spec.judge, PytestJudge)
        if task.spec.judge.required:
            return task.spec.judge.required
        if task.key not in _expected_cache:
            ref = await self._run(task, reference_changes(task), sandboxes, None)
            ids = tuple(o.name for o in ref.outcomes)
            if not ref.decided or not ids:
                raise JudgeError(
                    f"{task.id}: the reference collects no tests; cannot tell which tests "
                    f"must pass ({ref.diagnostics[-500:]})"
                )
            _expected_cache[task.key] = ids
        return _expected_cache[task.key]

    async def _run(
        self,
        task: Task,
        changes: Changes,
        sandboxes: SandboxFactory,
        expected: tuple[str, ...] | None,
    ) -> Verdict:
        t0 = time.monotonic()
        token = secrets.token_hex(16)
        environment = await TaskEnvironment.of(task)
        with scratch("judge") as tmp:
            report_dir = tmp / "report"
            report_dir.mkdir()
            res = await self._execute(task, changes, sandboxes, environment, tmp, report_dir, token)
            records, forged = _trusted(_read_report(report_dir / "report.jsonl"), token)
        outcomes, problem = _outcomes(records, expected)
        if forged:
            # a record twice: something else wrote to the report. Nothing in it is believed.
            why = f"the report was tampered with: {forged}"
            outcomes = tuple(Outcome(o.name, OutcomeStatus.error, why) for o in outcomes)
            problem = f"{why}\n{problem}".strip()
        diagnostics = tail(res)
        status = VerdictStatus.judged
        if not any(r.get("event") == "start" for r in records) and not res.timed_out:
            # pytest never got to load the judge's plugin: the machinery, not the policy
            status = VerdictStatus.undecided
            diagnostics = f"pytest wrote no report (exit {res.exit_code}).\n{diagnostics}"
        elif problem:
            diagnostics = f"{problem}\n{diagnostics}"
        return Verdict(
            task_id=task.id,
            task_version=task.version,
            judge=self.name,
            status=status,
            outcomes=outcomes,
            diagnostics=diagnostics,
            wall_s=time.monotonic() - t0,
            cpu_s=res.cpu_s,
            meta={
                "isolation": "process" if isolated_code(task) else "in-process",
                **({"tampering": [forged]} if forged else {}),
            },
        )

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
        """The cold path: a fresh sandbox, and `python -m pytest` in it (with the code under
        test in a fresh sandbox of its own, started at the same time, unless the task runs it
        in-process)."""
        work = lay_out_candidate(task, changes, tmp / "work")
        jdir = judge_dir(task, tmp / "judge")
        mounts = {JUDGE: Mount(jdir), REPORT: Mount(report_dir, writable=True)}
        mounts |= environment.mounts()
        isolated = isolated_code(task)

        async def run_pytest(sandbox: Sandbox) -> ExecResult:
            j = sandbox.path(JUDGE)
            args = pytest_args(j, basetemp=basetemp(sandbox) if isolated else None)
            cmd = "python -m pytest " + " ".join(shlex.quote(a) for a in args)
            env = run_env(sandbox, environment, token) | start_env(sandbox, environment)
            if isolated:
                env |= remote_env(sandbox, code_modules(work, jdir / "tests"))
            return await sandbox.exec(cmd, timeout_s=task.spec.limits.timeout_s, env=env)

        if not isolated:
            async with await sandboxes(work, mounts=mounts) as sandbox:
                return await run_pytest(sandbox)
        root = tmp / "code"
        made = await asyncio.gather(
            CodeProcess.start(sandboxes, work, environment, root, wait=False),
            sandboxes(work, mounts=mounts | CodeProcess.prepare(root)),
            return_exceptions=True,
        )
        failed = [x for x in made if isinstance(x, BaseException)]
        if failed:
            for x in made:
                if not isinstance(x, BaseException):
                    await x.close()
            raise failed[0]
        code, box = made
        assert isinstance(code, CodeProcess) and isinstance(box, Sandbox)
        try:
            async with box:
                res = await run_pytest(box)
            await code.started(timeout_s=5)  # never up: the machinery failed, not the code
            code.check_reached()
            return res
        finally:
            await code.close()


def isolated_code(task: Task) -> bool:
    """Whether the task's code under test runs in a process (and sandbox) of its own (only a
    test task's can)."""
    judge = task.spec.judge
    return isinstance(judge, PytestJudge) and judge.isolation == "process"


def judge_dir(task: Task, dest: Path) -> Path:
    """The judge's read-only files for one task: pristine tests (their equality assertions made
    to compare plain values), the plugin and the plain-value helper, its own ini."""
    tests = lay_out_tests(task, dest / "tests")
    for path in tests.rglob("*.py"):
        if path.name.startswith("test_") or path.name.endswith("_test.py"):
            path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    (dest / "pytest.ini").write_text(INI)
    here = Path(__file__).parent
    (dest / f"{PLUGIN}.py").write_text((here / "pytest_report.py").read_text())
    (dest / "rollbox_judge_plain.py").write_text((here / "plain.py").read_text())
    (dest / "rollbox_judge_remote.py").write_text((here / "remote.py").read_text())
    return dest


def pytest_args(j: str, *, basetemp: str | None) -> list[str]:
    """pytest's arguments: the judge's ini and rootdir, its plugin, no cache; `tmp_path` where
    the code under test's sandbox sees it too, when that is a sandbox of its own. (Without the
    terminal plugin it runs slower here, so the report's text is kept, though it decides
    nothing.)"""
    temp = [f"--basetemp={basetemp}"] if basetemp else []
    return ["-q", "-p", "no:cacheprovider", "-p", PLUGIN, *temp,
            "-c", f"{j}/pytest.ini", f"--rootdir={j}/tests", f"{j}/tests"]  # fmt: skip


def start_env(sandbox: Sandbox, environment: TaskEnvironment) -> dict[str, str]:
    """The interpreter's environment: the workspace is NOT on the path at start-up (nothing in
    it can shadow pytest); the plugin adds it once pytest is loaded."""
    return {
        "PYTHONPATH": environment.pythonpath(sandbox, sandbox.path(JUDGE)),
        "PYTHONSAFEPATH": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def run_env(sandbox: Sandbox, environment: TaskEnvironment, token: str) -> dict[str, str]:
    """What one run's plugin reads (and erases) when pytest loads it."""
    return {
        "ROLLBOX_REPORT": f"{sandbox.path(REPORT)}/report.jsonl",
        "ROLLBOX_REPORT_TOKEN": token,
        "ROLLBOX_WORKDIR": sandbox.workdir,
        "ROLLBOX_TESTS": f"{sandbox.path(JUDGE)}/tests",
    }


def _trusted(records: list[dict[str, object]], token: str) -> tuple[list[dict[str, object]], str]:
    """The run's own records (its token, from its start to its end) and, if records repeat
    (the same test and phase twice, a second start), what shows the report was forged."""
    mine = [r for r in records if r.get("token") == token]
    ends = [i for i, r in enumerate(mine) if r.get("event") == "end"]
    if ends:
        mine = mine[: ends[0] + 1]  # anything after the end (atexit, a daemon) is ignored
    seen: set[tuple[str, str, str]] = set()
    for r in mine:
        key = (str(r.get("event")), str(r.get("id", "")), str(r.get("when", "")))
        if r.get("event") in ("start", "report", "collected") and key in seen:
            return mine, f"duplicate {key[0]} record for {key[1] or 'the session'} {key[2]}".strip()
        seen.add(key)
    return mine, ""


def _read_report(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def _outcomes(
    records: list[dict[str, object]], expected: tuple[str, ...] | None
) -> tuple[tuple[Outcome, ...], str]:
    """Per-test outcomes from the plugin's records; `expected=None` takes what was collected."""
    phases: dict[str, dict[str, dict[str, object]]] = {}
    collect_errors = []
    for r in records:
        tid = str(r.get("id", ""))
        if r.get("event") == "collected":
            phases.setdefault(tid, {})
        elif r.get("event") == "collect_error":
            collect_errors.append(f"collection error in {tid or 'the session'}: {r.get('detail')}")
        elif r.get("event") == "report":
            phases.setdefault(tid, {})[str(r.get("when"))] = r
    names = expected if expected is not None else tuple(phases)
    outcomes = tuple(_outcome(n, phases.get(n, {})) for n in names)
    return outcomes, "\n".join(collect_errors)


def _outcome(name: str, ph: dict[str, dict[str, object]]) -> Outcome:
    """Only a call that passed, without xfail, after a clean setup and teardown, is a pass."""
    setup, call, teardown = ph.get("setup"), ph.get("call"), ph.get("teardown")
    detail = next((str(r["detail"]) for r in ph.values() if r.get("detail")), "")
    if setup is not None and setup.get("outcome") == "failed":
        return Outcome(name, OutcomeStatus.error, detail)
    if setup is not None and setup.get("outcome") == "skipped":
        return Outcome(name, OutcomeStatus.skipped, detail)
    if call is None:
        return Outcome(name, OutcomeStatus.missing, detail)
    if teardown is not None and teardown.get("outcome") == "failed":
        return Outcome(name, OutcomeStatus.error, detail)
    if call.get("outcome") == "skipped":
        why = "xfailed" if call.get("xfail") else "skipped"
        return Outcome(name, OutcomeStatus.skipped, detail or why)
    if call.get("outcome") == "passed" and not call.get("xfail"):
        return Outcome(name, OutcomeStatus.passed)
    if call.get("outcome") == "passed":
        return Outcome(name, OutcomeStatus.failed, "xfail-marked test passed (xpass)")
    return Outcome(name, OutcomeStatus.failed, detail)
