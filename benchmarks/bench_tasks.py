"""Task loading: the bundled set loaded and checked, against reading its bytes raw.

    rollbox bench tasks

Loading parses every task.toml, validates it, checks the judge's files and the reference diff,
and hashes every file for the version. The baseline is the floor: walking the same tree and
reading every byte once. Target: loading costs at most 5x the raw read (TOML parsing and compiling
the document judges' check modules are most of the difference).
"""

from __future__ import annotations

import os

from rollbox.bench import Figure, p50, paired_times
from rollbox.tasks import bundled_dir, load_tasks


def _read_all() -> int:
    n = 0
    for dirpath, _, files in os.walk(bundled_dir()):
        for f in files:
            with open(os.path.join(dirpath, f), "rb") as fh:
                n += len(fh.read())
    return n


def run(quick: bool) -> list[Figure]:
    ts = load_tasks("bundled")
    subject, baseline = paired_times(lambda: load_tasks("bundled"), _read_all, 3 if quick else 9)
    return [
        Figure.make(
            "tasks",
            f"load the bundled set ({len(ts)} tasks), p50",
            p50(subject) * 1000,
            "ms",
            baseline="read every file of the set raw, p50",
            baseline_value=p50(baseline) * 1000,
            max_ratio=5.0,
        )
    ]
