"""What rollbox pays for a change: integrity, k verdicts, signals, reward.

judgement = await judge_workspace(task, finished_dir, sandboxes, repeat=3)
judgement.reward.total, judgement.reward.to_dict(), judgement.findings
"""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rollbox.errors import TaskError
from rollbox.judges.base import Changes, Verdict, VerdictStatus
from rollbox.judges.common import changes_between, lay_out_candidate, scratch
from rollbox.judges.history import git_leaks
from rollbox.judges.integrity import Finding, allowed, check
from rollbox.judges.reward import Reward, RewardConfig, aggregate
from rollbox.sandbox.base import SandboxFactory
from rollbox.tasks.loader import read_tree
from rollbox.tasks.model import Task

_history_ok: set[str] = set()  # task versions whose git history was checked
LINT_RULES = "E9,F63,F7,F82,F401,F811,F841"  # syntax errors, undefined names, unused code


@dataclass(frozen=True)
class Judgement:
    task_id: str
    task_version: str
    verdict: Verdict  # the first run's verdict; status `flaky` when the runs disagree
    reward: Reward | None  # None when the judge could not decide or the runs disagree
    findings: tuple[Finding, ...] = ()
    runs: tuple[Verdict, ...] = ()
    disagreements: tuple[str, ...] = ()  # outcomes that differed between runs
    signals: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "task_version": self.task_version,
            "status": str(self.verdict.status),
            "reward": self.reward.to_dict() if self.reward else None,
            "verdict": self.verdict.to_dict(),
            "tampering": [f.__dict__ for f in self.findings],
            "runs": len(self.runs),
            "disagreements": list(self.disagreements),
            "signals": self.signals,
        }


def read_candidate(workspace: Path) -> tuple[dict[str, bytes], list[Finding]]:
    """A finished workspace's regular files; links and other oddities are findings, not files."""
    files: dict[str, bytes] = {}
    findings: list[Finding] = []
    for dirpath, dirnames, filenames in os.walk(workspace):
        base = Path(dirpath)
        for name in [*dirnames, *filenames]:
            p = base / name
            rel = p.relative_to(workspace).as_posix()
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                findings.append(Finding(rel, "link", "links are not copied out of a workspace"))
                if name in dirnames:
                    dirnames.remove(name)
            elif stat.S_ISREG(st.st_mode):
                if "__pycache__" not in p.parts and not name.endswith(".pyc"):
                    files[rel] = p.read_bytes()
            elif not stat.S_ISDIR(st.st_mode):
                findings.append(Finding(rel, "special-file", "only regular files are copied out"))
    return files, findings


async def judge_workspace(
    task: Task,
    workspace: Path,
    sandboxes: SandboxFactory,
    *,
    repeat: int = 1,
    config: RewardConfig | None = None,
) -> Judgement:
    """Judge a finished workspace (a directory) against a task."""
    files, odd = read_candidate(workspace)
    pristine = read_tree(task.workspace_dir)
    judgement = await judge_changes(
        task, changes_between(pristine, files), sandboxes, repeat=repeat, config=config
    )
    if not odd:
        return judgement
    # links and special files are never applied; they are reported beside tampering, unpaid
    return replace(judgement, findings=(*judgement.findings, *odd))


async def judge_changes(
    task: Task,
    changes: Changes,
    sandboxes: SandboxFactory,
    *,
    repeat: int = 1,
    config: RewardConfig | None = None,
) -> Judgement:
    """Integrity first, then the task's judge `repeat` times, then signals and the reward."""
    from rollbox.judges import make_judge

    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    if task.key not in _history_ok:
        leaks = await asyncio.to_thread(git_leaks, task.workspace_dir)
        if leaks:
            raise TaskError(
                f"{task.id}: the workspace's git history holds more than its base "
                f"({'; '.join(leaks[:3])}): a policy could read the answer there"
            )
        _history_ok.add(task.key)
    pristine = read_tree(task.workspace_dir)
    findings = check(task, changes, pristine)
    clean = allowed(changes, findings)
    judge = make_judge(task)
    runs = [await judge.judge(task, clean, sandboxes) for _ in range(repeat)]
    verdict, disagreements = _consistent(runs)
    for v in runs:  # what a judge saw while judging (a forged report, say) is tampering too
        findings += [Finding("<report>", "forged-report", t) for t in v.meta.get("tampering", [])]
    signals = await _signals(task, clean, sandboxes, verdict)
    reward = aggregate(
        verdict, findings, signals, partial_credit=task.spec.reward.partial_credit, config=config
    )
    return Judgement(
        task_id=task.id,
        task_version=task.version,
        verdict=verdict,
        reward=reward,
        findings=tuple(findings),
        runs=tuple(runs),
        disagreements=tuple(disagreements),
        signals=signals,
    )


def _consistent(runs: list[Verdict]) -> tuple[Verdict, list[str]]:
    """The first verdict, marked flaky if any decided run disagrees on any outcome."""
    first = runs[0]
    undecided = [v for v in runs if not v.decided]
    if undecided:
        return undecided[0], []
    base = {o.name: o.status for o in first.outcomes}
    differ: set[str] = set()
    for v in runs[1:]:
        other = {o.name: o.status for o in v.outcomes}
        differ |= {n for n in base.keys() | other.keys() if base.get(n) != other.get(n)}
    if not differ:
        return first, []
    note = f"{len(differ)} outcome(s) differ between {len(runs)} runs: " + ", ".join(
        sorted(differ)[:10]
    )
    flaky = replace(
        first, status=VerdictStatus.flaky, diagnostics=f"{note}\n{first.diagnostics}".strip()
    )
    return flaky, sorted(differ)


async def _signals(
    task: Task, changes: Changes, sandboxes: SandboxFactory, verdict: Verdict
) -> dict[str, float]:
    """Auxiliary measurements: the judge's own cost, and static analysis of changed Python."""
    signals: dict[str, float] = {"judge_wall_s": verdict.wall_s, "judge_cpu_s": verdict.cpu_s}
    py = sorted(rel for rel, data in changes.items() if data is not None and rel.endswith(".py"))
    signals["python_files"] = float(len(py))
    if not py:
        return signals
    t0 = time.monotonic()
    with scratch("lint") as tmp:
        work = lay_out_candidate(task, changes, tmp / "work")
        sandbox = await sandboxes(work)
        async with sandbox:
            cmd = (
                f"ruff check --no-cache --isolated --select {LINT_RULES} --output-format concise "
                f"--exit-zero -- {' '.join(shlex.quote(p) for p in py)}"
            )
            res = await sandbox.exec(cmd, timeout_s=60)
    if res.ok:
        errors = [line for line in res.stdout.splitlines() if line.count(":") >= 3]
        signals["lint_errors"] = float(len(errors))
    signals["lint_s"] = time.monotonic() - t0
    return signals
