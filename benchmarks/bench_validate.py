"""Task validation: the whole bundled set in minutes, and what the pytest fast path buys.

    rollbox bench validate [--quick]

1. Wall time to validate the bundled tasks (every one; with --quick every fifth) with repeat 3
   (`validate_tasks` as `rollbox tasks validate` runs it: one task per core at once, each run a
   fresh `python -m pytest`), against the same validation with test tasks judged on the pytest
   fast path (warm pools), run in the same process just before it. No target: it records why
   the default is the cold path (validation keeps every core busy, and the fast path saves
   waiting, not CPU; its pools' refills cost CPU).
2. The same wall time against the acceptance target: the 65 bundled tasks in 180 s on 2 cores
   (scaled to the tasks validated, and to the cores there are).
3. Seconds per judged run, beside a bare sandbox (created, `python -c pass`, closed), measured
   one at a time in the same run: what a judged run costs on top of the sandbox itself.
4. Tasks whose validation differs between the fast and the cold path (ok and reasons). Target: 0.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from rollbox.bench import Figure, p50
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_tasks
from rollbox.tasks.model import Task
from rollbox.tasks.validate import ValidationReport, validate_tasks

TARGET_S = 180.0  # the 65 bundled tasks, on 2 cores
TARGET_TASKS, TARGET_CORES = 65, 2


async def _validate(tasks: list[Task], *, fast: bool) -> tuple[float, ValidationReport]:
    sandboxes = Factory(BwrapConfig())
    done = 0

    def progress(_: object) -> None:
        nonlocal done
        done += 1
        if done % 10 == 0 or done == len(tasks):
            path = "fast" if fast else "cold"
            print(f"  [bench validate] {path}: {done}/{len(tasks)} tasks", file=sys.stderr)

    t0 = time.perf_counter()
    report = await validate_tasks(
        tasks, sandboxes, repeat=3, concurrency=os.cpu_count() or 1, fast=fast, on_task=progress
    )
    return time.perf_counter() - t0, report


async def _bare_sandbox(n: int) -> float:
    sandboxes = Factory(BwrapConfig())
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sandbox = await sandboxes(None)
        async with sandbox:
            await sandbox.exec(["python", "-c", "pass"], timeout_s=30)
        times.append(time.perf_counter() - t0)
    return p50(times)


def _outcome(report: ValidationReport) -> dict[str, tuple[bool, tuple[str, ...]]]:
    # wall times aside, which never repeat exactly
    return {
        t.id: (t.ok, tuple(r for r in t.reasons if not r.startswith("took "))) for t in report.tasks
    }


def run(quick: bool) -> list[Figure]:
    tasks = list(load_tasks("bundled"))
    if quick:
        tasks = tasks[::5]
    fast_s: list[float] = []
    cold_s: list[float] = []
    reports: dict[bool, ValidationReport] = {}
    for fast in (True, False):
        wall, reports[fast] = asyncio.run(_validate(tasks, fast=fast))
        (fast_s if fast else cold_s).append(wall)
    bare = asyncio.run(_bare_sandbox(10 if quick else 30))
    fast_report, cold_report = reports[True], reports[False]
    a, b = _outcome(fast_report), _outcome(cold_report)
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    cores = os.cpu_count() or 1
    target = TARGET_S * len(tasks) / TARGET_TASKS * TARGET_CORES / min(cores, TARGET_CORES)
    n, rejected = len(tasks), len(cold_report.rejected)
    return [
        Figure.make(
            "validate",
            f"validation wall, {n} bundled tasks, repeat 3 ({rejected} rejected)",
            p50(cold_s),
            "s",
            baseline="the same validation, test tasks on the pytest fast path",
            baseline_value=p50(fast_s),
        ),
        Figure.make(
            "validate",
            f"validation wall, {n} tasks on {cores} cores, against 65 tasks in 180 s on 2 cores",
            p50(cold_s),
            "s",
            max_value=round(target, 1),
        ),
        Figure.make(
            "validate",
            f"wall per judged run ({cold_report.runs} runs, one task per core at once)",
            p50(cold_s) / max(cold_report.runs, 1) * 1000,
            "ms",
            baseline="a bare sandbox: create, `python -c pass`, close (p50, one at a time)",
            baseline_value=bare * 1000,
        ),
        Figure.make(
            "validate",
            "tasks validated differently by the fast and the cold path"
            + (f": {', '.join(differ)}" if differ else ""),
            float(len(differ)),
            "tasks",
            max_value=0,
        ),
    ]
