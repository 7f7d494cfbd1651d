"""The command judge (ops tasks): named checks, in order, each of which must succeed."""

from __future__ import annotations

import time

from rollbox.judges.base import Changes, Judge, Outcome, OutcomeStatus, Verdict, VerdictStatus
from rollbox.judges.common import TaskEnvironment, lay_out_candidate, lay_out_tests, scratch, tail
from rollbox.sandbox.base import Mount, SandboxFactory
from rollbox.tasks.model import CommandJudge, Task

TESTS = "/rollbox/tests"  # in the sandbox: a pristine copy of the hidden tests, read-only


class ChecksJudge(Judge):
    name = "command"

    async def judge(self, task: Task, changes: Changes, sandboxes: SandboxFactory) -> Verdict:
        cfg = task.spec.judge
        assert isinstance(cfg, CommandJudge)
        t0, cpu = time.monotonic(), 0.0
        outcomes: list[Outcome] = []
        deadline = t0 + task.spec.limits.timeout_s
        with scratch("judge") as tmp:
            work = lay_out_candidate(task, changes, tmp / "work")
            tests = lay_out_tests(task, tmp / "judge" / "tests")
            environment = await TaskEnvironment.of(task)
            mounts = {TESTS: Mount(tests)} | environment.mounts()
            sandbox = await sandboxes(work, mounts=mounts)
            async with sandbox:
                env = {"ROLLBOX_TESTS": sandbox.path(TESTS)}
                if environment.image is not None:
                    env["PYTHONPATH"] = environment.pythonpath(sandbox)
                for check in cfg.checks:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        outcomes.append(Outcome(check.name, OutcomeStatus.failed, "no time left"))
                        continue
                    res = await sandbox.exec(check.command, timeout_s=left, env=env)
                    cpu += res.cpu_s
                    status = OutcomeStatus.passed if res.ok else OutcomeStatus.failed
                    outcomes.append(Outcome(check.name, status, "" if res.ok else tail(res)))
        return Verdict(
            task_id=task.id,
            task_version=task.version,
            judge=self.name,
            status=VerdictStatus.judged,
            outcomes=tuple(outcomes),
            wall_s=time.monotonic() - t0,
            cpu_s=cpu,
        )
