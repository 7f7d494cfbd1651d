"""Judges: a finished workspace in, a Verdict out, by really executing the hidden checks."""

from __future__ import annotations

from rollbox.judges.base import (
    Changes,
    Judge,
    Outcome,
    OutcomeStatus,
    Verdict,
    VerdictStatus,
)
from rollbox.judges.command_judge import ChecksJudge
from rollbox.judges.common import changes_between
from rollbox.judges.document_judge import DocumentChecksJudge
from rollbox.judges.integrity import Finding
from rollbox.judges.judgement import Judgement, judge_changes, judge_workspace
from rollbox.judges.output_judge import OutputFilesJudge
from rollbox.judges.pytest_judge import TestJudge
from rollbox.judges.reference import ReferenceCheck, check_reference
from rollbox.judges.reward import Reward, RewardConfig
from rollbox.tasks.model import CommandJudge, DocumentJudge, OutputJudge, PytestJudge, Task

_JUDGES: dict[type, type[Judge]] = {
    PytestJudge: TestJudge,
    OutputJudge: OutputFilesJudge,
    CommandJudge: ChecksJudge,
    DocumentJudge: DocumentChecksJudge,
}


def make_judge(task: Task) -> Judge:
    """The judge a task's `[judge]` section names."""
    return _JUDGES[type(task.spec.judge)]()


__all__ = [
    "Changes",
    "ChecksJudge",
    "DocumentChecksJudge",
    "Finding",
    "Judge",
    "Judgement",
    "Outcome",
    "OutcomeStatus",
    "OutputFilesJudge",
    "ReferenceCheck",
    "Reward",
    "RewardConfig",
    "TestJudge",
    "Verdict",
    "VerdictStatus",
    "changes_between",
    "check_reference",
    "judge_changes",
    "judge_workspace",
    "make_judge",
]
