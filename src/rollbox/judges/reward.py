"""From verdicts to a reward, with the whole breakdown kept.

Correctness comes first: 1 when every required outcome passed; otherwise 0, or the pass
fraction scaled down when the task allows partial credit. The total gives correctness the weight
1 - auxiliary_cap, and auxiliary signals (static analysis) add at most auxiliary_cap, and only
on top of a correct result: a correct, clean change totals exactly 1. Tampering zeroes
correctness and costs a penalty. A verdict the judge could not decide, or one that flip-flops
over repeated runs, earns no reward at all (None): that is never the policy's zero.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rollbox.judges.base import Verdict, VerdictStatus
from rollbox.judges.integrity import Finding


class RewardConfig(BaseModel):
    """How verdicts and signals become a number."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    partial_weight: float = Field(0.5, ge=0, le=1, description="Scale of the pass fraction.")
    lint_bonus: float = Field(0.05, ge=0, le=1, description="For a correct change lint-clean.")
    auxiliary_cap: float = Field(0.05, ge=0, le=0.5, description="Most the auxiliaries add.")
    tampering_penalty: float = Field(0.5, ge=0, description="Taken off when tampering is found.")


@dataclass(frozen=True)
class Reward:
    total: float
    correctness: float
    pass_fraction: float
    auxiliary: dict[str, float] = field(default_factory=dict)  # paid on top, bounded
    penalty: float = 0.0
    signals: dict[str, float] = field(default_factory=dict)  # measured, not all paid
    tampering: tuple[str, ...] = ()  # the paths found

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def aggregate(
    verdict: Verdict,
    findings: list[Finding],
    signals: dict[str, float],
    *,
    partial_credit: bool,
    config: RewardConfig | None = None,
) -> Reward | None:
    """The reward for a decided, consistent verdict; None otherwise."""
    config = config or RewardConfig()
    if verdict.status is not VerdictStatus.judged:
        return None
    fraction = verdict.pass_fraction
    if findings:
        correctness = 0.0
    elif verdict.passed:
        correctness = 1.0
    else:
        correctness = fraction * config.partial_weight if partial_credit else 0.0
    auxiliary: dict[str, float] = {}
    if correctness == 1.0 and signals.get("lint_errors", 0) == 0:
        # lint-clean, or no Python changed at all (nothing to hold against it)
        auxiliary["lint_clean"] = config.lint_bonus
    scale = min(1.0, config.auxiliary_cap / total) if (total := sum(auxiliary.values())) else 1.0
    auxiliary = {k: v * scale for k, v in auxiliary.items()}
    penalty = config.tampering_penalty if findings else 0.0
    return Reward(
        total=(1 - config.auxiliary_cap) * correctness + sum(auxiliary.values()) - penalty,
        correctness=correctness,
        pass_fraction=fraction,
        auxiliary=auxiliary,
        penalty=penalty,
        signals=dict(signals),
        tampering=tuple(f.path for f in findings),
    )
