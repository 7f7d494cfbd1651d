"""The judges: the fast path's latency against a cold run, and verdict determinism.

    rollbox bench judge [--quick]

1. Judge latency for a small bundled task (feature-is-even, its reference): the fast path
   (a warm sandbox whose Python has already imported pytest) against a cold `python -m pytest`
   in a fresh sandbox, interleaved in the same run; the pool is given time to refill before
   each fast sample, so the figure is the latency of a warm verdict. Every pair of verdicts is
   compared outcome by outcome. Target: the fast path at least 4x faster at p50 (ratio <= 0.25),
   with identical verdicts.
2. The price of running the code under test in its own sandbox and process: a cold verdict of
   the same task with `isolation = "process"` (the default) and `"in-process"`, interleaved.
   No target; recorded so that the cost stays visible.
3. Verdict determinism: every bundled task's reference judged 20 times (3 with --quick); the
   figure is the number of tasks whose verdicts disagree between runs. Target: 0.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rollbox.bench import Figure, p50
from rollbox.judges import make_judge
from rollbox.judges.fastpath import FastTestJudge
from rollbox.judges.judgement import _consistent
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_task, load_tasks, reference_changes
from rollbox.tasks.model import PytestJudge

TASK = "feature-is-even"


def _statuses(verdict: object) -> list[tuple[str, str]]:
    return [(o.name, str(o.status)) for o in verdict.outcomes]  # type: ignore[attr-defined]


async def _latency(quick: bool) -> list[Figure]:
    sandboxes = Factory(BwrapConfig())
    task = load_tasks("bundled").get(TASK)
    changes = reference_changes(task)
    cold = make_judge(task)
    cold_t: list[float] = []
    fast_t: list[float] = []
    mismatches = 0
    async with FastTestJudge(sandboxes) as fast:
        await fast.warm(task)
        await cold.judge(task, changes, sandboxes)  # warm both up (and the expected ids)
        pool = fast._pools[task.key][0]
        for _ in range(6 if quick else 20):
            t0 = time.perf_counter()
            a = await cold.judge(task, changes, sandboxes)
            cold_t.append(time.perf_counter() - t0)
            while pool.ready < 1:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            b = await fast.judge(task, changes, sandboxes)
            fast_t.append(time.perf_counter() - t0)
            mismatches += _statuses(a) != _statuses(b) or a.status != b.status
    return [
        Figure.make(
            "judge",
            f"verdict latency, fast path, {TASK}, p50",
            p50(fast_t) * 1000,
            "ms",
            baseline="cold `python -m pytest` in a fresh sandbox, p50",
            baseline_value=p50(cold_t) * 1000,
            max_ratio=0.25,
        ),
        Figure.make(
            "judge",
            f"verdicts that differ between the fast and the cold path ({len(cold_t)} pairs)",
            float(mismatches),
            "verdicts",
            max_value=0,
        ),
    ]


async def _isolation_cost(quick: bool) -> list[Figure]:
    """A cold verdict with the code under test in its own sandbox and process (the default)
    against the same task run in-process, interleaved in the same run: the price of the
    isolation (a second sandbox, a second interpreter, a round trip per operation)."""
    sandboxes = Factory(BwrapConfig())
    task = load_tasks("bundled").get(TASK)
    with tempfile.TemporaryDirectory(prefix="rollbox-bench-") as tmp:
        copy = Path(tmp) / TASK
        shutil.copytree(task.root, copy)
        toml = (copy / "task.toml").read_text()
        (copy / "task.toml").write_text(toml + '\nisolation = "in-process"\n')
        in_process = load_task(copy)
        assert isinstance(in_process.spec.judge, PytestJudge)
        assert in_process.spec.judge.isolation == "in-process"
        times: dict[str, list[float]] = {"process": [], "in-process": []}
        for t in (task, in_process):  # warm both up (and the expected ids)
            await make_judge(t).judge(t, reference_changes(t), sandboxes)
        for _ in range(4 if quick else 12):
            for key, t in (("process", task), ("in-process", in_process)):
                t0 = time.perf_counter()
                v = await make_judge(t).judge(t, reference_changes(t), sandboxes)
                times[key].append(time.perf_counter() - t0)
                assert v.passed, v.diagnostics
    return [
        Figure.make(
            "judge",
            f"cold verdict, code under test in its own process, {TASK}, p50",
            p50(times["process"]) * 1000,
            "ms",
            baseline="the same task with isolation = in-process, p50",
            baseline_value=p50(times["in-process"]) * 1000,
        )
    ]


async def _determinism(quick: bool) -> list[Figure]:
    sandboxes = Factory(BwrapConfig())
    tasks = list(load_tasks("bundled"))
    repeat = 3 if quick else 20
    sem = asyncio.Semaphore(2)
    flaky: list[str] = []
    done = 0

    async def one(task: object) -> None:
        nonlocal done
        async with sem:
            judge = make_judge(task)  # type: ignore[arg-type]
            changes = reference_changes(task)  # type: ignore[arg-type]
            runs = [await judge.judge(task, changes, sandboxes) for _ in range(repeat)]  # type: ignore[arg-type]
        if _consistent(runs)[1] or not all(r.passed for r in runs):
            flaky.append(task.id)  # type: ignore[attr-defined]
        done += 1
        print(f"  [bench judge] {done}/{len(tasks)} tasks judged {repeat}x", file=sys.stderr)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(t) for t in tasks))
    name = (
        f"bundled references whose {repeat} verdicts disagree or fail "
        f"({len(tasks)} tasks, {time.perf_counter() - t0:.0f} s)"
    )
    if flaky:
        name += f": {', '.join(sorted(flaky))}"
    return [Figure.make("judge", name, float(len(flaky)), "tasks", max_value=0)]


def run(quick: bool) -> list[Figure]:
    return (
        asyncio.run(_latency(quick))
        + asyncio.run(_isolation_cost(quick))
        + asyncio.run(_determinism(quick))
    )
