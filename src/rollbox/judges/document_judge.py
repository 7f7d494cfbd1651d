"""The document judge (docs tasks): parse, validate against a schema, run content checks.

The candidate's document travels as bytes only: it is copied into a fresh, empty sandbox and
parsed there, next to a pristine copy of the tests, so no code of the candidate's ever runs.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

from rollbox.judges.base import Changes, Judge, Outcome, OutcomeStatus, Verdict, VerdictStatus
from rollbox.judges.common import lay_out_candidate, lay_out_tests, scratch, tail
from rollbox.sandbox.base import Mount, SandboxFactory
from rollbox.tasks.loader import materialize
from rollbox.tasks.model import DocumentJudge, Task

MAX_DOCUMENT_BYTES = 4 << 20
JUDGE = "/rollbox/judge"  # in the sandbox: checker, tests and the pristine workspace, read-only
REPORT = "/rollbox/report"


class DocumentChecksJudge(Judge):
    name = "document"

    async def judge(self, task: Task, changes: Changes, sandboxes: SandboxFactory) -> Verdict:
        cfg = task.spec.judge
        assert isinstance(cfg, DocumentJudge)
        t0 = time.monotonic()
        with scratch("judge") as tmp:
            work = lay_out_candidate(task, changes, tmp / "work")
            doc = work / cfg.path
            if doc.is_symlink() or not doc.is_file():
                return self._fail(task, t0, f"the document '{cfg.path}' was not written")
            data = doc.read_bytes()
            if len(data) > MAX_DOCUMENT_BYTES:
                return self._fail(task, t0, f"the document is over {MAX_DOCUMENT_BYTES} bytes")
            jdir = tmp / "judge"
            lay_out_tests(task, jdir / "tests")
            materialize(task, jdir / "workspace", reference=False)
            runner = jdir / "doccheck.py"
            runner.write_text(Path(__file__).with_name("doccheck.py").read_text())
            report = tmp / "report" / "report.jsonl"
            report.parent.mkdir()
            mounts = {JUDGE: Mount(jdir), REPORT: Mount(report.parent, writable=True)}
            sandbox = await sandboxes(None, mounts=mounts)
            async with sandbox:
                name = "document." + cfg.format
                await sandbox.write_file(name, data)
                j = sandbox.path(JUDGE)
                schema = f"{j}/tests/{cfg.schema_file}" if cfg.schema_file else "-"
                checks = f"{j}/tests/{cfg.checks}" if cfg.checks else "-"
                argv = [f"{j}/doccheck.py", name, cfg.format, schema, checks,
                        f"{sandbox.path(REPORT)}/report.jsonl"]  # fmt: skip
                res = await sandbox.exec(
                    "python " + " ".join(shlex.quote(a) for a in argv),
                    timeout_s=task.spec.limits.timeout_s,
                    env={"ROLLBOX_WORKSPACE": f"{j}/workspace", "ROLLBOX_TESTS": f"{j}/tests"},
                )
            lines = report.read_text().splitlines() if report.is_file() else []
        if not lines:
            return Verdict(
                task_id=task.id,
                task_version=task.version,
                judge=self.name,
                status=VerdictStatus.undecided,
                diagnostics=f"the document checker produced no report:\n{tail(res)}",
                wall_s=time.monotonic() - t0,
                cpu_s=res.cpu_s,
            )
        outcomes = []
        for line in lines:
            r = json.loads(line)
            status = OutcomeStatus.passed if r["passed"] else OutcomeStatus.failed
            outcomes.append(Outcome(r["name"], status, r.get("detail", "")))
        return Verdict(
            task_id=task.id,
            task_version=task.version,
            judge=self.name,
            status=VerdictStatus.judged,
            outcomes=tuple(outcomes),
            wall_s=time.monotonic() - t0,
            cpu_s=res.cpu_s,
        )

    def _fail(self, task: Task, t0: float, why: str) -> Verdict:
        return Verdict(
            task_id=task.id,
            task_version=task.version,
            judge=self.name,
            status=VerdictStatus.judged,
            outcomes=(Outcome("document", OutcomeStatus.failed, why),),
            wall_s=time.monotonic() - t0,
        )
