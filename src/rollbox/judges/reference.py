"""Checking a task against itself: its start must fail and its reference must pass."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from rollbox.judges.base import Verdict
from rollbox.judges.history import git_leaks
from rollbox.sandbox.base import SandboxFactory
from rollbox.tasks.loader import reference_changes
from rollbox.tasks.model import Task


@dataclass(frozen=True)
class ReferenceCheck:
    task_id: str
    start: Verdict
    reference: Verdict
    history: tuple[str, ...] = ()  # git history newer than the base, found in the workspace

    @property
    def ok(self) -> bool:
        decided = self.start.decided and not self.start.passed and self.reference.passed
        return decided and not self.history

    @property
    def problems(self) -> list[str]:
        out = [f"the workspace's git history leaks: {h}" for h in self.history[:5]]
        for name, v in (("starting workspace", self.start), ("reference", self.reference)):
            if not v.decided:
                out.append(f"the judge could not decide on the {name}: {v.diagnostics[-300:]}")
        if self.start.decided and self.start.passed:
            out.append("the starting workspace already passes the hidden tests")
        if self.reference.decided and not self.reference.passed:
            failed = [o for o in self.reference.outcomes if not o.passed]
            shown = "; ".join(f"{o.name}: {o.status}" for o in failed[:5])
            out.append(f"the reference fails {len(failed)} outcome(s): {shown}")
        return out


async def check_reference(task: Task, sandboxes: SandboxFactory) -> ReferenceCheck:
    """Judge the task's starting workspace and its reference solution."""
    from rollbox.judges import make_judge

    judge = make_judge(task)
    reference = await judge.judge(task, reference_changes(task), sandboxes)
    start = await judge.judge(task, {}, sandboxes)
    history = await asyncio.to_thread(git_leaks, task.workspace_dir)
    return ReferenceCheck(task.id, start, reference, tuple(history))
