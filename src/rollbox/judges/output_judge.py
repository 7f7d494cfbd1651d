"""The output judge (data tasks): run the candidate's command per case, compare its files."""

from __future__ import annotations

import time
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.judges.base import Changes, Judge, Outcome, OutcomeStatus, Verdict, VerdictStatus
from rollbox.judges.common import TaskEnvironment, lay_out_candidate, scratch, tail
from rollbox.judges.compare import compare_file
from rollbox.sandbox.base import Sandbox, SandboxFactory
from rollbox.tasks.loader import read_tree
from rollbox.tasks.model import OutputJudge, Task

MAX_OUTPUT_BYTES = 16 << 20


class OutputFilesJudge(Judge):
    name = "output"

    async def judge(self, task: Task, changes: Changes, sandboxes: SandboxFactory) -> Verdict:
        cfg = task.spec.judge
        assert isinstance(cfg, OutputJudge)
        t0, cpu = time.monotonic(), 0.0
        outcomes: list[Outcome] = []
        notes: list[str] = []
        with scratch("judge") as tmp:
            work = lay_out_candidate(task, changes, tmp / "work")
            environment = await TaskEnvironment.of(task)
            for case in cfg.cases:
                expected = read_tree(task.tests_dir / case.expected)
                sandbox = await sandboxes(work, mounts=environment.mounts())
                async with sandbox:
                    env = {}
                    if environment.image is not None:
                        env["PYTHONPATH"] = environment.pythonpath(sandbox)
                    if case.inputs is not None:
                        for rel, data in read_tree(task.tests_dir / case.inputs).items():
                            await sandbox.write_file(rel, data)
                    res = await sandbox.exec(
                        cfg.command, timeout_s=task.spec.limits.timeout_s, env=env
                    )
                    cpu += res.cpu_s
                    if not res.ok:
                        why = "timed out" if res.timed_out else f"exited with {res.exit_code}"
                        notes.append(f"[{case.name}] the command {why}:\n{tail(res)}")
                    for rel, want in expected.items():
                        name = f"{case.name}/{rel}"
                        problem = await _check_output(sandbox, rel, want, cfg.tolerance)
                        status = OutcomeStatus.failed if problem else OutcomeStatus.passed
                        outcomes.append(Outcome(name, status, problem or ""))
        return Verdict(
            task_id=task.id,
            task_version=task.version,
            judge=self.name,
            status=VerdictStatus.judged,
            outcomes=tuple(outcomes),
            diagnostics="\n".join(notes),
            wall_s=time.monotonic() - t0,
            cpu_s=cpu,
        )


async def _check_output(sandbox: Sandbox, rel: str, want: bytes, tolerance: float) -> str | None:
    """Read one output as plain bytes (a regular file, no links) and compare it."""
    try:
        got = await sandbox.read_file(rel, max_bytes=MAX_OUTPUT_BYTES)
    except FileNotFoundError:
        return "the output file was not written"
    except (SandboxError, OSError) as e:
        return f"the output cannot be read: {e}"
    return compare_file(Path(rel).name, got, want, tolerance)
