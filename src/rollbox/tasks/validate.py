"""Validating tasks before anything trains or is evaluated on them (`rollbox tasks validate`).

    report = await validate_tasks(tasks, sandboxes, repeat=3)
    save_report(report, tasks_dir)             # <DIR>/.rollbox-validation.json (or the cache)
    tasks = filter_valid(tasks, tasks_dir)     # what a run should use: rejected tasks left out

Each task is judged in real sandboxes, by the judge its `[judge]` names (a fresh `python -m
pytest` per run for test tasks: validation keeps every core busy, and there the pytest fast path,
which saves waiting rather than CPU, measured slower; `fast=True` uses it), and rejected with a
reason per problem found:

- **the start fails**: for a test task, every required test that is not in `pass_to_pass`
  fails on the starting workspace, and every `pass_to_pass` test passes there. A task that
  declares no `pass_to_pass` has it inferred: the tests that pass at the start (recorded in the
  report), as long as at least one required test fails. For the other judges the start's
  verdict must not pass.
- **the reference passes** every required outcome.
- **repeated runs agree**: the reference and the start are each judged `repeat` times; an
  outcome that differs between runs is flaky: quarantined (listed in the report) and, being
  required, the task is rejected.
- **time**: no judged run takes longer than the task's `limits.timeout_s` (the longest is kept).
- **cheap exploits earn nothing**: the empty change, a planted `conftest.py` that turns every
  report into a pass, deleting the workspace's test files, and an exit with status 0 at the top
  of every module and script. Each is put through the integrity check and judged as
  `judge_changes` judges it (once); a change the integrity check strips to nothing leaves the
  judge the starting workspace, whose verdict is taken from the runs above instead of judging it
  again. Any reward above 0 (or any correctness) rejects the task.
- **the reference is paid**: the integrity check drops nothing of the reference.
- **git history**: the workspace's history holds nothing newer than its base.
- **isolation hides nothing**: for a test task whose code runs in its own process (the
  default), the start is judged once more with the code in the tests' process; a test that
  passes at the start only in its own process checks what copies cannot show (aliasing between
  the tests and the code, say), and the task must say `isolation = "in-process"`.
- **no near-duplicate across splits**: an eval task whose text nearly equals a train task's
  (rollbox.tasks.dedup) is rejected, naming the train task and the similarity.

The report is kept per task id *and* version in `<DIR>/.rollbox-validation.json`: a task edited
after validation has a new version, which the old record does not cover. When DIR is the
bundled set (it is part of the installed package) or cannot be written, the report goes to
`$ROLLBOX_HOME/validation/` (else `$XDG_CACHE_HOME/rollbox/validation/`, else
`~/.cache/rollbox/validation/`), in a file named by a hash of DIR's absolute path;
`load_exclusions` reads both places.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rollbox.errors import RollboxError
from rollbox.judges import make_judge
from rollbox.judges.base import Changes, Judge, Verdict
from rollbox.judges.fastpath import FastTestJudge
from rollbox.judges.history import git_leaks
from rollbox.judges.integrity import allowed, check
from rollbox.judges.judgement import judge_changes
from rollbox.judges.pytest_judge import TestJudge, isolated_code
from rollbox.judges.reward import Reward, aggregate
from rollbox.sandbox.base import SandboxFactory
from rollbox.tasks.dedup import DEFAULT_THRESHOLD, find_near_duplicates
from rollbox.tasks.loader import (
    bundled_dir,
    load_tasks,
    read_tree,
    reference_changes,
    resolve_tasks_dir,
)
from rollbox.tasks.model import PytestJudge, Split, Task

if TYPE_CHECKING:
    from rich.table import Table

REPORT_FILE = ".rollbox-validation.json"
REPORT_FORMAT = 1
DEFAULT_REPEAT = 3
_SHOWN = 8  # ids named in one reason before "and N more"

# What a cheat leaves in the workspace: a hook that turns every test report into a pass.
FORCE_PASS_CONFTEST = b"""\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
    rep.longrepr = None
    if hasattr(rep, "wasxfail"):
        del rep.wasxfail
"""
_PY_EXIT = "import sys; sys.exit(0)"
_SH_EXIT = "exit 0"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExploitResult(_Record):
    """What one cheap exploit earned."""

    name: str = Field(description="The exploit, in words.")
    paid: bool = Field(description="It earned a reward above 0 or some correctness.")
    total: float | None = Field(description="The reward's total; None: no reward (undecided).")
    correctness: float | None = Field(description="The reward's correctness part.")
    tampering: tuple[str, ...] = Field((), description="Paths the integrity check flagged.")
    judged: bool = Field(
        description="Judged in a sandbox; False: the integrity check left nothing to judge "
        "but the start, whose verdict was reused."
    )


class TaskValidation(_Record):
    """One task's validation."""

    id: str = Field(description="The task's id.")
    version: str = Field(description="The content version that was validated.")
    split: str = Field(description="train or eval.")
    judge: str = Field(description="The judge type.")
    ok: bool = Field(description="Nothing wrong was found.")
    reasons: tuple[str, ...] = Field((), description="What is wrong, one line each.")
    quarantined: tuple[str, ...] = Field((), description="Outcomes that differed between runs.")
    pass_to_pass: tuple[str, ...] = Field(
        (), description="Tests that pass at the start (declared, or inferred when undeclared)."
    )
    runs: int = Field(0, description="Judged runs done for this task.")
    max_wall_s: float = Field(0.0, description="The longest judged run, in seconds.")
    limit_s: float = Field(description="The task's limit for one judged run.")
    wall_s: float = Field(0.0, description="Time spent validating the task.")
    exploits: tuple[ExploitResult, ...] = Field((), description="The cheap exploits tried.")
    validated_at: str = Field("", description="When (UTC, ISO 8601).")

    @property
    def key(self) -> str:
        return f"{self.id}@{self.version}"


class ValidationReport(_Record):
    """Every task's validation, and how the run went."""

    format: int = Field(REPORT_FORMAT, description="The report's format version.")
    tasks_dir: str = Field("", description="The task directory validated.")
    repeat: int = Field(DEFAULT_REPEAT, description="Runs of the reference and of the start.")
    started_at: str = Field("", description="When (UTC, ISO 8601).")
    wall_s: float = Field(0.0, description="Time the whole validation took.")
    tasks: tuple[TaskValidation, ...] = Field((), description="One entry per task.")

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tasks)

    @property
    def rejected(self) -> list[TaskValidation]:
        return [t for t in self.tasks if not t.ok]

    @property
    def runs(self) -> int:
        return sum(t.runs for t in self.tasks)

    def get(self, task_id: str) -> TaskValidation:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def summary(self) -> str:
        good = sum(t.ok for t in self.tasks)
        return (
            f"{good} of {len(self.tasks)} tasks valid, {len(self.tasks) - good} rejected; "
            f"{self.runs} judged runs (repeat {self.repeat}) in {self.wall_s:.0f} s"
        )

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


# ---- one task -------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _name_list(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _is_test_path(rel: str, hidden_names: set[str]) -> bool:
    """A file the workspace's tests live in (as the integrity check sees test files)."""
    p = PurePosixPath(rel)
    name = p.name
    test_file = name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    return test_file or name in hidden_names or "tests" in p.parts[:-1]


def _py_insert_at(text: str) -> int:
    """The line after a module's prologue (docstring, `from __future__` imports), where an
    early exit can go without breaking the module's syntax."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return 1 if text.startswith("#!") else 0
    end = 0
    for i, node in enumerate(body):
        docstring = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            end = node.end_lineno or node.lineno
        else:
            break
    return max(end, 1 if text.startswith("#!") else 0)


def _interpreter(first_line: str) -> str:
    """The program a `#!` line names (through `env`), or ''."""
    words = first_line[2:].split() if first_line.startswith("#!") else []
    if words and PurePosixPath(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    return PurePosixPath(words[0]).name if words else ""


def _exit_early(rel: str, data: bytes) -> bytes | None:
    """The file with an exit with status 0 at its top, or None if it is no module or script."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    program = _interpreter(lines[0])
    if rel.endswith(".py") or program.startswith("python"):
        at, exit_line = _py_insert_at(text), _PY_EXIT
    elif rel.endswith(".sh") or program in {"sh", "bash", "dash", "ksh", "zsh"}:
        at, exit_line = (1 if program else 0), _SH_EXIT
    else:
        return None
    return "\n".join([*lines[:at], exit_line, *lines[at:]]).encode()


def exploits(task: Task) -> list[tuple[str, Changes]]:
    """The cheap exploits tried on a task, as (name, changes); those that would change nothing
    on this workspace (no test files to delete, no module to exit from) are left out."""
    pristine = read_tree(task.workspace_dir)
    hidden = {PurePosixPath(rel).name for rel in read_tree(task.tests_dir)}
    out: list[tuple[str, Changes]] = [
        ("empty change", {}),
        ("planted conftest.py", {"conftest.py": FORCE_PASS_CONFTEST}),
    ]
    deleted: Changes = {rel: None for rel in pristine if _is_test_path(rel, hidden)}
    if deleted:
        out.append(("deleted test files", deleted))
    exits: Changes = {}
    for rel, data in pristine.items():
        if not _is_test_path(rel, hidden) and (new := _exit_early(rel, data)) is not None:
            exits[rel] = new
    exits = allowed(exits, check(task, exits, pristine))  # only what a policy may change
    if exits:
        out.append(("exit 0 at import", exits))
    return out


def _tally(runs: Sequence[Verdict]) -> dict[str, int]:
    """Passes per outcome over the decided runs (every outcome any run reported)."""
    passes: dict[str, int] = {}
    for v in runs:
        for o in v.outcomes:
            passes[o.name] = passes.get(o.name, 0) + o.passed
    return passes


class _Findings:
    """Collects one task's reasons and quarantined outcomes."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.flaky: dict[str, str] = {}  # outcome -> "reference passed 2/3"

    def undecided(self, what: str, runs: Sequence[Verdict]) -> list[Verdict]:
        """The decided runs; a reason for the others."""
        bad = [v for v in runs if not v.decided]
        if bad:
            diag = bad[0].diagnostics.strip().replace("\n", " ")[-300:]
            self.reasons.append(
                f"the judge could not decide on the {what} ({len(bad)} of {len(runs)} runs): {diag}"
            )
        return [v for v in runs if v.decided]

    def stable(self, what: str, runs: Sequence[Verdict]) -> tuple[set[str], set[str]]:
        """(always passed, always failed) among the outcomes; the rest are flaky."""
        passes = _tally(runs)
        for name, n in passes.items():
            if 0 < n < len(runs):
                self.flaky.setdefault(name, f"{what} passed {n}/{len(runs)}")
        return (
            {name for name, n in passes.items() if n == len(runs)},
            {name for name, n in passes.items() if n == 0},
        )


async def _isolation_sensitive(
    task: Task, sandboxes: SandboxFactory, start: Verdict, flaky: Iterable[str]
) -> tuple[list[str], Verdict]:
    """Tests that pass at the start only because the code runs in its own process: judged once
    with the code in the tests' process, they fail (a copy hid what they check). Returns the
    reason, if any, and that run."""
    assert isinstance(task.spec.judge, PytestJudge)
    judge_cfg = task.spec.judge.model_copy(update={"isolation": "in-process"})
    same = task.model_copy(update={"spec": task.spec.model_copy(update={"judge": judge_cfg})})
    verdict = await make_judge(same).judge(same, {}, sandboxes)
    failing = {o.name for o in verdict.outcomes if not o.passed} - set(flaky)
    hidden = sorted(o.name for o in start.outcomes if o.passed and o.name in failing)
    if not verdict.decided or not hidden:
        return [], verdict
    why = (
        f"passes at the start only with the code in its own process: {_name_list(hidden)} "
        '(values cross as copies there; tests that check aliasing need isolation = "in-process")'
    )
    return [why], verdict


def _reference_problems(f: _Findings, runs: Sequence[Verdict]) -> None:
    if not runs:
        return
    _, failed = f.stable("reference", runs)
    if not runs[0].outcomes:
        f.reasons.append("the reference produces no outcomes at all")
    failing = [o for o in runs[0].outcomes if o.name in failed]
    for o in failing[:_SHOWN]:
        detail = o.detail.strip().splitlines()[-1][:160] if o.detail.strip() else ""
        f.reasons.append(f"reference fails {o.name} ({o.status}{': ' + detail if detail else ''})")
    if len(failing) > _SHOWN:
        more = [o.name for o in failing[_SHOWN:]]
        f.reasons.append(f"reference fails {len(more)} more: {_name_list(more)}")


def _start_problems(
    f: _Findings, task: Task, runs: Sequence[Verdict], required: Sequence[str]
) -> tuple[str, ...]:
    """Reasons about the start; returns the pass_to_pass tests (declared or inferred)."""
    if not runs:
        return ()
    passed, failed = f.stable("start", runs)
    names = [o.name for o in runs[0].outcomes]
    cfg = task.spec.judge
    if not isinstance(cfg, PytestJudge):
        if names and set(names) <= passed:
            f.reasons.append(f"start already passes every outcome ({_name_list(names)})")
        return ()
    declared = cfg.pass_to_pass
    unknown = [t for t in declared if t not in set(required)]
    if unknown:
        f.reasons.append(f"pass_to_pass names tests that are not required: {_name_list(unknown)}")
    if not declared:  # inferred: whatever passes at the start, as long as something fails
        if names and set(names) <= passed:
            f.reasons.append(f"start already passes every required test ({_name_list(names)})")
        return tuple(n for n in names if n in passed)
    early = [n for n in names if n in passed and n not in declared]
    if early:
        f.reasons.append(f"start already passes {_name_list(early)} (not in pass_to_pass)")
    broken = [n for n in names if n in failed and n in declared]
    if broken:
        f.reasons.append(f"pass_to_pass tests fail at the start: {_name_list(broken)}")
    return declared


def _exploit_result(
    name: str, reward: Reward | None, tampering: Iterable[str], *, judged: bool
) -> ExploitResult:
    return ExploitResult(
        name=name,
        paid=reward is not None and (reward.total > 0 or reward.correctness > 0),
        total=None if reward is None else reward.total,
        correctness=None if reward is None else reward.correctness,
        tampering=tuple(tampering),
        judged=judged,
    )


async def _judged_exploit(
    task: Task, name: str, changes: Changes, sandboxes: SandboxFactory
) -> tuple[ExploitResult, list[Verdict]]:
    """An exploit that leaves the judge something to judge: `judge_changes`, once."""
    j = await judge_changes(task, changes, sandboxes)
    return _exploit_result(name, j.reward, (x.path for x in j.findings), judged=True), list(j.runs)


def _stripped_exploit(
    task: Task, name: str, changes: Changes, pristine: dict[str, bytes], start: Verdict | None
) -> ExploitResult:
    """An exploit the integrity check strips to nothing: the judge would see the starting
    workspace, so the start's verdict (None: it was not consistent) is paid as judge_changes
    pays it, with the exploit's findings."""
    findings = check(task, changes, pristine)
    partial = task.spec.reward.partial_credit
    reward = None if start is None else aggregate(start, findings, {}, partial_credit=partial)
    return _exploit_result(name, reward, (x.path for x in findings), judged=False)


@dataclass
class _Runs:
    required: tuple[str, ...] = ()
    reference: list[Verdict] = field(default_factory=list)
    start: list[Verdict] = field(default_factory=list)
    exploits: dict[str, tuple[ExploitResult, list[Verdict]]] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def _task_judge(task: Task, sandboxes: SandboxFactory, *, fast: bool) -> AsyncIterator[Judge]:
    """The task's judge: the pytest fast path (a warm pool for this task) for test tasks."""
    if fast and isinstance(task.spec.judge, PytestJudge):
        async with FastTestJudge(sandboxes) as warm:
            yield warm
    else:
        yield make_judge(task)


async def _judge_all(
    task: Task,
    sandboxes: SandboxFactory,
    repeat: int,
    reference: Changes,
    to_judge: Sequence[tuple[str, Changes]],
    *,
    fast: bool,
) -> _Runs:
    """The reference and the start `repeat` times each, and the exploits that need a judge,
    all at once (the test ids that must pass are settled first, once)."""
    out = _Runs()
    async with _task_judge(task, sandboxes, fast=fast) as judge:
        if isinstance(judge, TestJudge):
            out.required = await judge.expected_ids(task, sandboxes)
        results = await asyncio.gather(
            *(judge.judge(task, reference, sandboxes) for _ in range(repeat)),
            *(judge.judge(task, {}, sandboxes) for _ in range(repeat)),
            *(_judged_exploit(task, name, changes, sandboxes) for name, changes in to_judge),
            return_exceptions=True,
        )
    for r in results:  # every run is over before the first failure is raised
        if isinstance(r, BaseException):
            raise r
    verdicts = [r for r in results if isinstance(r, Verdict)]
    out.reference, out.start = verdicts[:repeat], verdicts[repeat:]
    for r in results:
        if isinstance(r, tuple):
            out.exploits[r[0].name] = r
    return out


async def validate_task(
    task: Task, sandboxes: SandboxFactory, *, repeat: int = DEFAULT_REPEAT, fast: bool = False
) -> TaskValidation:
    """Validate one task: every check of the module doc but the cross-split one. `fast=False`
    judges test tasks on the cold path (a fresh `python -m pytest` per run), for comparison."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    t0 = time.monotonic()
    f = _Findings()
    f.reasons += await asyncio.to_thread(_leaks, task)
    history_ok = not f.reasons  # judge_changes refuses a task whose history leaks
    pristine = read_tree(task.workspace_dir)
    reference = reference_changes(task)
    dropped = check(task, reference, pristine)
    if dropped:
        shown = ", ".join(f"{d.path} ({d.kind})" for d in dropped[:_SHOWN])
        f.reasons.append(f"the reference makes changes the judge drops: {shown}")
    cheats = exploits(task)
    to_judge = [(n, c) for n, c in cheats if allowed(c, check(task, c, pristine))]
    runs: list[Verdict] = []
    results: list[ExploitResult] = []
    p2p: tuple[str, ...] = ()
    try:
        exploits_to_judge = to_judge if history_ok else []
        done = await _judge_all(task, sandboxes, repeat, reference, exploits_to_judge, fast=fast)
    except RollboxError as e:
        f.reasons.append(f"could not validate: {e}")
    else:
        runs = [*done.reference, *done.start]
        _reference_problems(f, f.undecided("reference", done.reference))
        start = f.undecided("starting workspace", done.start)
        p2p = _start_problems(f, task, start, done.required)
        consistent = len(start) == len(done.start) and not any(
            0 < n < len(start) for n in _tally(start).values()
        )
        if start and consistent and isolated_code(task):
            hidden, in_process = await _isolation_sensitive(task, sandboxes, start[0], f.flaky)
            f.reasons += hidden
            runs.append(in_process)
        for name, changes in cheats:
            if name in done.exploits:
                result, exploit_runs = done.exploits[name]
                results.append(result)
                runs += exploit_runs
            elif (name, changes) not in to_judge:
                start_verdict = start[0] if consistent and start else None
                results.append(_stripped_exploit(task, name, changes, pristine, start_verdict))
    if f.flaky:
        f.reasons.append("flaky: " + ", ".join(f"{n} ({w})" for n, w in sorted(f.flaky.items())))
    for x in results:
        if x.paid:
            f.reasons.append(
                f"exploit paid: {x.name} earned {x.total:g} (correctness {x.correctness:g})"
            )
    limit = task.spec.limits.timeout_s
    max_wall = max((v.wall_s for v in runs), default=0.0)
    if max_wall > limit:
        f.reasons.append(f"took {max_wall:.1f} s > limit {limit:g} s")
    return TaskValidation(
        id=task.id,
        version=task.version,
        split=str(task.split),
        judge=task.spec.judge.type,
        ok=not f.reasons,
        reasons=tuple(f.reasons),
        quarantined=tuple(sorted(f.flaky)),
        pass_to_pass=p2p,
        runs=len(runs),
        max_wall_s=round(max_wall, 3),
        limit_s=limit,
        wall_s=round(time.monotonic() - t0, 3),
        exploits=tuple(results),
        validated_at=_now(),
    )


def _leaks(task: Task) -> list[str]:
    try:
        found = git_leaks(task.workspace_dir)
    except RollboxError as e:
        return [f"the workspace's git history cannot be read: {e}"]
    return [f"the workspace's git history leaks: {x}" for x in found[:5]]


# ---- a task set -----------------------------------------------------------------------------


def cross_split_duplicates(
    tasks: Sequence[Task], *, threshold: float = DEFAULT_THRESHOLD
) -> dict[str, list[str]]:
    """Reasons per eval task that nearly duplicates a train task (rollbox.tasks.dedup)."""
    out: dict[str, list[str]] = {}
    for pair in find_near_duplicates(tasks, threshold=threshold, across_splits_only=True):
        if pair.a_split == str(Split.eval):
            held_out, other = pair.a, pair.b
        else:
            held_out, other = pair.b, pair.a
        out.setdefault(held_out, []).append(
            f"near-duplicate of train task {other} (similarity {pair.similarity:.2f}, {pair.what})"
        )
    return out


async def validate_tasks(
    tasks: Sequence[Task],
    sandboxes: SandboxFactory,
    *,
    repeat: int = DEFAULT_REPEAT,
    concurrency: int = 2,
    dedup_threshold: float = DEFAULT_THRESHOLD,
    tasks_dir: Path | str = "",
    on_task: Callable[[TaskValidation], None] | None = None,
    fast: bool = False,
) -> ValidationReport:
    """Validate tasks, `concurrency` at once (each runs its judged runs at once); `on_task`
    is called as each finishes. The report keeps the order of `tasks`."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    started, t0 = _now(), time.monotonic()
    dups = await asyncio.to_thread(cross_split_duplicates, tasks, threshold=dedup_threshold)
    slots = asyncio.Semaphore(concurrency)

    async def one(task: Task) -> TaskValidation:
        async with slots:
            result = await validate_task(task, sandboxes, repeat=repeat, fast=fast)
        if task.id in dups:
            reasons = (*result.reasons, *dups[task.id])
            result = result.model_copy(update={"ok": False, "reasons": reasons})
        if on_task is not None:
            on_task(result)
        return result

    results = await asyncio.gather(*(one(t) for t in tasks))
    return ValidationReport(
        tasks_dir=str(tasks_dir),
        repeat=repeat,
        started_at=started,
        wall_s=round(time.monotonic() - t0, 3),
        tasks=tuple(results),
    )


# ---- where reports are kept, and what they exclude ------------------------------------------


def cache_dir() -> Path:
    """Where reports go that cannot go beside their tasks."""
    if home := os.environ.get("ROLLBOX_HOME"):
        return Path(home).expanduser() / "validation"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "rollbox" / "validation"


def report_paths(tasks_dir: Path | str) -> tuple[Path, Path]:
    """(beside the tasks, in the cache): the two places a task directory's report may be."""
    base = resolve_tasks_dir(tasks_dir).resolve()
    digest = hashlib.sha256(str(base).encode()).hexdigest()[:16]
    return base / REPORT_FILE, cache_dir() / f"{base.name}-{digest}.json"


def _in_package(base: Path) -> bool:
    bundled = bundled_dir().resolve()
    return base == bundled or bundled in base.parents


def _read_records(path: Path) -> dict[str, TaskValidation]:
    """The records of one report file, by `id@version`; nothing when missing or unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != REPORT_FORMAT:
            return {}
        return {k: TaskValidation.model_validate(v) for k, v in raw.get("tasks", {}).items()}
    except (OSError, ValueError, ValidationError, AttributeError):
        return {}


def read_records(tasks_dir: Path | str) -> dict[str, TaskValidation]:
    """Every validation kept for a task directory, by `id@version` (the newest record wins
    when both places hold one)."""
    merged: dict[str, TaskValidation] = {}
    for path in report_paths(tasks_dir):
        for key, rec in _read_records(path).items():
            if key not in merged or rec.validated_at > merged[key].validated_at:
                merged[key] = rec
    return merged


def save_report(report: ValidationReport, tasks_dir: Path | str) -> Path:
    """Merge the report's records into the task directory's report file; returns where it was
    written (beside the tasks, or the cache for the bundled set and unwritable directories).
    Raises OSError when neither place can be written."""
    beside, cached = report_paths(tasks_dir)
    targets = [cached] if _in_package(beside.parent) else [beside, cached]
    error: OSError | None = None
    for path in targets:
        records = _read_records(path)
        records.update({t.key: t for t in report.tasks})
        data = {
            "format": REPORT_FORMAT,
            "tasks_dir": str(beside.parent),
            "tasks": {k: v.model_dump(mode="json") for k, v in sorted(records.items())},
        }
        try:
            _write_atomically(path, json.dumps(data, indent=2) + "\n")
        except OSError as e:
            error = e
            continue
        return path
    assert error is not None
    raise error


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_exclusions(
    tasks_dir: Path | str, tasks: Iterable[Task] | None = None
) -> dict[str, list[str]]:
    """Task id -> reasons, for each task whose *current* version failed validation (`tasks`:
    the tasks as loaded now; default: loaded from `tasks_dir`). A task never validated, or
    edited since, is not excluded: its record names another version."""
    current = list(tasks) if tasks is not None else list(load_tasks(tasks_dir))
    records = read_records(tasks_dir)
    out: dict[str, list[str]] = {}
    for t in current:
        rec = records.get(t.key)
        if rec is not None and not rec.ok:
            out[t.id] = list(rec.reasons)
    return out


def filter_valid(
    tasks: Iterable[Task], tasks_dir: Path | str, *, allow_invalid: bool = False
) -> list[Task]:
    """The tasks without those whose current version failed validation (all of them when
    `allow_invalid`): what training and evaluation should use."""
    tasks = list(tasks)
    if allow_invalid:
        return tasks
    excluded = load_exclusions(tasks_dir, tasks)
    return [t for t in tasks if t.id not in excluded]


# ---- for people -------------------------------------------------------------------------------


def report_table(report: ValidationReport) -> Table:
    """One row per task: ok or rejected, and why."""
    from rich.table import Table

    table = Table(
        title=f"task validation (repeat {report.repeat}): start fails, reference passes, "
        "runs agree, in time, exploits unpaid",
        title_justify="left",
    )
    for col in ("task", "split", "ok", "runs", "max run", "quarantined", "reasons"):
        table.add_column(col, overflow="fold")
    for t in report.tasks:
        table.add_row(
            t.id,
            t.split,
            "[green]yes" if t.ok else "[red]REJECTED",
            str(t.runs),
            f"{t.max_wall_s:.1f}/{t.limit_s:g} s",
            ", ".join(t.quarantined),
            "; ".join(t.reasons),
        )
    return table
