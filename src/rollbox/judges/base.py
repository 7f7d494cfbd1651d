"""The Judge seam: a finished workspace in, a Verdict out."""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from rollbox.sandbox.base import SandboxFactory
from rollbox.tasks.model import Task

Changes = dict[str, bytes | None]  # path -> new content; None: deleted


class OutcomeStatus(StrEnum):
    passed = "passed"
    failed = "failed"
    error = "error"
    skipped = "skipped"
    missing = "missing"


class VerdictStatus(StrEnum):
    judged = "judged"  # the judge decided; the outcomes are the policy's
    undecided = "undecided"  # the judge could not decide: infrastructure, never a zero reward
    flaky = "flaky"  # repeated runs disagreed: no reward, and the task's tests are suspect


@dataclass(frozen=True)
class Outcome:
    name: str
    status: OutcomeStatus
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.status is OutcomeStatus.passed


@dataclass(frozen=True)
class Verdict:
    task_id: str
    task_version: str
    judge: str
    status: VerdictStatus
    outcomes: tuple[Outcome, ...] = ()
    diagnostics: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def decided(self) -> bool:
        return self.status is VerdictStatus.judged

    @property
    def n_passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def pass_fraction(self) -> float:
        return self.n_passed / len(self.outcomes) if self.outcomes else 0.0

    @property
    def passed(self) -> bool:
        """Every expected outcome passed (and there was at least one)."""
        return self.decided and bool(self.outcomes) and self.n_passed == len(self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        d["pass_fraction"] = self.pass_fraction
        return d


class Judge(abc.ABC):
    """Judges one task's workspace after the candidate's changes."""

    name: str

    @abc.abstractmethod
    async def judge(self, task: Task, changes: Changes, sandboxes: SandboxFactory) -> Verdict:
        """Build fresh sandboxes from the pristine workspace plus `changes`, and decide."""
