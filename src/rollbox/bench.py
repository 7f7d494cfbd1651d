"""Benchmarks as a command: each figure beside a baseline measured in the same run.

A benchmark is a module in the checkout's `benchmarks/` folder named `bench_<name>.py` with a
function `run(quick: bool) -> list[Figure]`. These machines are noisy, so a figure is always a
ratio against a baseline timed in the same run, interleaved with it.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rollbox.errors import ConfigError


@dataclass(frozen=True)
class Figure:
    bench: str
    name: str
    value: float
    unit: str
    baseline: str | None
    baseline_value: float | None
    ratio: float | None
    target: str | None
    met: bool | None

    @classmethod
    def make(
        cls,
        bench: str,
        name: str,
        value: float,
        unit: str,
        *,
        baseline: str | None = None,
        baseline_value: float | None = None,
        max_ratio: float | None = None,
        min_ratio: float | None = None,
        max_value: float | None = None,
    ) -> Figure:
        ratio = value / baseline_value if baseline_value else None
        target, met = None, None
        if max_ratio is not None and ratio is not None:
            target, met = f"ratio <= {max_ratio:g}", ratio <= max_ratio
        elif min_ratio is not None and ratio is not None:
            target, met = f"ratio >= {min_ratio:g}", ratio >= min_ratio
        elif max_value is not None:
            target, met = f"value <= {max_value:g} {unit}", value <= max_value
        return cls(bench, name, value, unit, baseline, baseline_value, ratio, target, met)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_times(
    subject: Callable[[], object], baseline: Callable[[], object], repeat: int
) -> tuple[list[float], list[float]]:
    """Seconds per call of each, measured alternately so that noise hits both alike."""
    subject()
    baseline()  # warm both up
    s_times: list[float] = []
    b_times: list[float] = []
    for _ in range(repeat):
        for fn, out in ((subject, s_times), (baseline, b_times)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return s_times, b_times


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def benchmarks_dir() -> Path:
    """The checkout's benchmarks/ folder (benchmarks are not installed with the package)."""
    d = Path(__file__).resolve().parents[2] / "benchmarks"
    if not d.is_dir():
        raise ConfigError(
            f"no benchmarks folder at {d}: benchmarks run from a source checkout of rollbox"
        )
    return d


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in benchmarks_dir().glob("bench_*.py"))


def run_benchmark(name: str, *, quick: bool = False) -> list[Figure]:
    names = available()
    if name not in names:
        raise ConfigError(f"unknown benchmark {name!r}; available: all, {', '.join(names)}")
    path = benchmarks_dir() / f"bench_{name}.py"
    spec = importlib.util.spec_from_file_location(f"rollbox_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures: list[Figure] = module.run(quick)
    return figures
