"""Measured difficulty: pass@k per task version from rollouts, buckets, and sampling for training.

    stats = stats_from_runs(["runs/a", "runs/b"])        # {(task_id, version): TaskStats}
    store = DifficultyStore()                             # difficulty.json beside the registry
    store.add_run("runs/a"); store.save()
    store.get(task.id, task.version)                      # None: this version was never measured

**Counts.** Only decided episodes count (a reward was given); infrastructure and policy failures
and undecided verdicts are left out, as in the run summary. `n` is the decided episodes of a task
version, `c` those that passed. pass@k is the unbiased estimator of Chen et al. (2021)
(`rollbox.runner.pass_at_k`): the chance that at least one of k samples drawn from the n passes.

**Stored per version.** Statistics belong to one exact content of a task, so an edited task
starts with no statistics. `difficulty.json` maps task id -> version -> {n, c, pass@1, pass@2,
pass@4, ... (k up to n), runs: {run_id: {n, c}}}; each run's counts are kept apart so that adding
a run again (or a resumed run, grown) replaces its counts instead of adding them twice.

**Buckets** from pass@1, easiest first:

    solved-always   pass@1 >= 0.9      nothing left to learn
    easy            0.6 <= pass@1 < 0.9
    medium          0.3 <= pass@1 < 0.6
    hard            0 < pass@1 < 0.3
    unsolved        pass@1 == 0        no signal either, until something passes

**Sampling for training.** `drop_zero_variance` drops groups (the samples of one task in one
step) whose rewards are all the same: with group-relative advantages they contribute nothing.
`Curriculum` walks the buckets from the easiest one that still has something to learn and
moves on when the current bucket's pass rate exceeds a threshold.
"""

from __future__ import annotations

import json
import os
import random
import secrets
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rollbox.errors import ConfigError, StoreError
from rollbox.runner import pass_at_k
from rollbox.store.runstore import RunStore
from rollbox.tasks.registry import rollbox_home

__all__ = [
    "BUCKET_THRESHOLDS",
    "Bucket",
    "Curriculum",
    "DifficultyStore",
    "TaskStats",
    "bucket_of",
    "default_difficulty_path",
    "difficulty_rows",
    "drop_zero_variance",
    "group_by_task",
    "merge_counts",
    "pass_at_k",
    "run_counts",
    "stats_from_runs",
]


class Bucket(StrEnum):
    """Difficulty measured by pass@1, easiest first (the order is the curriculum's)."""

    solved_always = "solved-always"
    easy = "easy"
    medium = "medium"
    hard = "hard"
    unsolved = "unsolved"


BUCKET_THRESHOLDS: tuple[tuple[Bucket, float], ...] = (
    (Bucket.solved_always, 0.9),
    (Bucket.easy, 0.6),
    (Bucket.medium, 0.3),
)  # pass@1 at or above the bound; below the last: hard if > 0, unsolved if 0
BUCKET_ORDER: tuple[Bucket, ...] = tuple(Bucket)


def bucket_of(pass1: float) -> Bucket:
    """The bucket of a pass@1 value (see the module doc for the bounds)."""
    for bucket, bound in BUCKET_THRESHOLDS:
        if pass1 >= bound:
            return bucket
    return Bucket.hard if pass1 > 0 else Bucket.unsolved


def default_ks(n: int) -> list[int]:
    """The k reported for n samples: powers of two up to n, and n itself."""
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k <= n]
    return sorted({*ks, n}) if n >= 1 else []


@dataclass(frozen=True)
class TaskStats:
    """Decided episodes (n) and passes (c) of one task version."""

    task_id: str
    version: str
    n: int
    c: int

    @property
    def pass1(self) -> float:
        return self.c / self.n if self.n else 0.0

    def pass_at(self, k: int) -> float | None:
        """pass@k, or None when fewer than k episodes were decided."""
        if k < 1 or self.n < k:
            return None
        return pass_at_k(self.n, self.c, k)

    @property
    def bucket(self) -> Bucket | None:
        """None when no episode was decided."""
        return bucket_of(self.pass1) if self.n else None

    def to_dict(self, ks: Iterable[int] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "c": self.c}
        for k in default_ks(self.n) if ks is None else ks:
            out[f"pass@{k}"] = self.pass_at(k)
        return out


def difficulty_rows(
    stats: Iterable[TaskStats], k: int | None = None
) -> tuple[int, list[dict[str, Any]]]:
    """(k, one row per task version: task, version, n, c, pass@1, pass@k, bucket); k defaults
    to the fewest decided episodes any task version has (pass@k is None where n < k)."""
    items = [s for s in stats if s.n]
    if k is None:
        k = min((s.n for s in items), default=1)
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    rows = [
        {
            "task": s.task_id,
            "version": s.version,
            "n": s.n,
            "c": s.c,
            "pass@1": s.pass1,
            f"pass@{k}": s.pass_at(k),
            "bucket": str(s.bucket),
        }
        for s in items
    ]
    return k, rows


# ---- counting from runs ---------------------------------------------------------------------

Counts = dict[tuple[str, str], tuple[int, int]]  # (task_id, version) -> (n, c)


def run_counts(run_dir: Path | str) -> tuple[str, Counts]:
    """(run_id, counts) of one run directory: decided episodes and passes per task version."""
    n: dict[tuple[str, str], int] = defaultdict(int)
    c: dict[tuple[str, str], int] = defaultdict(int)
    with RunStore.open(run_dir) as store:
        for t in store.trajectories():
            if t.reward is None:
                continue
            key = (t.task_id, t.task_version)
            n[key] += 1
            c[key] += t.passed
        run_id = store.run_id
    return run_id, {key: (n[key], c[key]) for key in sorted(n)}


def stats_from_runs(run_dirs: Iterable[Path | str]) -> dict[tuple[str, str], TaskStats]:
    """Statistics per (task_id, version) over every run given (a run given twice counts once)."""
    return merge_counts(dict(run_counts(d) for d in run_dirs).values())


def merge_counts(all_counts: Iterable[Counts]) -> dict[tuple[str, str], TaskStats]:
    """Counts of several runs added up, per (task_id, version)."""
    n: dict[tuple[str, str], int] = defaultdict(int)
    c: dict[tuple[str, str], int] = defaultdict(int)
    for counts in all_counts:
        for key, (kn, kc) in counts.items():
            n[key] += kn
            c[key] += kc
    return {key: TaskStats(key[0], key[1], n[key], c[key]) for key in sorted(n)}


# ---- the store --------------------------------------------------------------------------------


def default_difficulty_path() -> Path:
    """difficulty.json beside the task registry (see rollbox.tasks.registry.rollbox_home)."""
    return rollbox_home() / "difficulty.json"


class DifficultyStore:
    """Difficulty per task version, kept in one JSON file (see the module doc for its shape)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_difficulty_path()
        self._runs: dict[tuple[str, str], dict[str, tuple[int, int]]] = defaultdict(dict)
        if self.path.exists():
            self._load()

    def add_counts(self, run_id: str, counts: Counts) -> None:
        """A run's counts; they replace what the same run contributed before."""
        for key in [k for k, runs in self._runs.items() if run_id in runs]:
            del self._runs[key][run_id]
        for key, nc in counts.items():
            self._runs[key][run_id] = nc

    def add_run(self, run_dir: Path | str) -> str:
        """Count a run directory's episodes in (again: its counts are replaced); its run_id."""
        run_id, counts = run_counts(run_dir)
        self.add_counts(run_id, counts)
        return run_id

    def get(self, task_id: str, version: str) -> TaskStats | None:
        """The statistics of this exact version, or None when it was never measured."""
        runs = self._runs.get((task_id, version))
        if not runs:
            return None
        return TaskStats(
            task_id,
            version,
            sum(n for n, _ in runs.values()),
            sum(c for _, c in runs.values()),
        )

    def all(self) -> dict[tuple[str, str], TaskStats]:
        out = {}
        for key in sorted(self._runs):
            stats = self.get(*key)
            if stats is not None:
                out[key] = stats
        return out

    def to_dict(self) -> dict[str, dict[str, dict[str, Any]]]:
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for (task_id, version), stats in self.all().items():
            entry = stats.to_dict()
            entry["runs"] = {
                r: {"n": n, "c": c} for r, (n, c) in sorted(self._runs[(task_id, version)].items())
            }
            out.setdefault(task_id, {})[version] = entry
        return out

    def save(self) -> Path:
        """Write the file atomically (a reader sees the old one or the new one)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        return self.path

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as e:
            raise StoreError(f"{self.path}: cannot read the difficulty file: {e}") from None
        try:
            for task_id, versions in data.items():
                for version, entry in versions.items():
                    for run_id, nc in entry["runs"].items():
                        self._runs[(task_id, version)][run_id] = (int(nc["n"]), int(nc["c"]))
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise StoreError(f"{self.path}: not a difficulty file ({e!r})") from None


# ---- sampling for training -------------------------------------------------------------------


class _Rewarded(Protocol):
    @property
    def reward(self) -> float | None: ...


class _Keyed(_Rewarded, Protocol):
    @property
    def task_id(self) -> str: ...

    @property
    def task_version(self) -> str: ...


T = TypeVar("T", bound=_Rewarded)
K = TypeVar("K", bound=_Keyed)


def group_by_task(trajs: Iterable[K], key: Callable[[K], Hashable] | None = None) -> list[list[K]]:
    """Trajectories grouped by task version (or by `key`), groups in order of first appearance.

    For groups of one training step, pass that step's trajectories (or a key that includes it).
    """
    groups: dict[Hashable, list[K]] = {}
    for t in trajs:
        k = key(t) if key is not None else (t.task_id, t.task_version)
        groups.setdefault(k, []).append(t)
    return list(groups.values())


def drop_zero_variance(groups: Iterable[Sequence[T]], *, eps: float = 1e-9) -> list[list[T]]:
    """The groups whose rewards vary; undecided samples (reward None) are left out first, and a
    group needs two decided samples whose rewards differ by more than `eps`."""
    kept = []
    for group in groups:
        decided = [t for t in group if t.reward is not None]
        rewards = [t.reward for t in decided if t.reward is not None]
        if len(rewards) >= 2 and max(rewards) - min(rewards) > eps:
            kept.append(decided)
    return kept


class Curriculum:
    """Batches of task ids from one bucket at a time, easiest first; deterministic by seed.

    Tasks are placed in buckets once, from the statistics given at the start (a baseline).
    The curriculum starts at the easiest bucket with tasks, `solved-always` aside unless
    `include_solved`. Each `next_batch(stats)` first looks at the current bucket's pass rate in
    `stats` (recent statistics, by task id: passes over decided episodes, pooled over the
    bucket's tasks that have any); once it exceeds `advance_at` over at least `min_episodes`,
    the curriculum moves to the next bucket with tasks (the last one, `unsolved`, it keeps).
    Within a bucket, tasks come in shuffled rounds: each once before any twice.
    """

    def __init__(
        self,
        buckets: Mapping[str, Bucket],
        *,
        advance_at: float = 0.8,
        min_episodes: int = 8,
        seed: int = 0,
        include_solved: bool = False,
    ) -> None:
        if not 0.0 <= advance_at <= 1.0:
            raise ConfigError(f"advance_at must be in [0, 1], got {advance_at}")
        self.advance_at = advance_at
        self.min_episodes = min_episodes
        self._rng = random.Random(seed)
        order = [b for b in BUCKET_ORDER if include_solved or b is not Bucket.solved_always]
        self.members: dict[Bucket, list[str]] = {
            b: sorted(t for t, tb in buckets.items() if tb is b) for b in order
        }
        self.stages = [b for b in order if self.members[b]]
        if not self.stages:
            raise ConfigError("the curriculum has no tasks to train on")
        self._stage = 0
        self._queue: list[str] = []

    @classmethod
    def from_stats(cls, stats: Iterable[TaskStats], **kwargs: Any) -> Curriculum:
        """Buckets from baseline statistics, one per task id (tasks with no decided episode
        are left out)."""
        buckets: dict[str, Bucket] = {}
        for s in stats:
            if s.bucket is not None:
                buckets[s.task_id] = s.bucket
        return cls(buckets, **kwargs)

    @property
    def stage(self) -> Bucket:
        """The bucket batches come from now."""
        return self.stages[self._stage]

    def pass_rate(self, stats: Mapping[str, TaskStats]) -> tuple[float, int]:
        """(pass rate, decided episodes) of the current bucket's tasks in `stats`."""
        picked = [stats[t] for t in self.members[self.stage] if t in stats]
        n = sum(s.n for s in picked)
        return (sum(s.c for s in picked) / n if n else 0.0), n

    def next_batch(self, size: int, stats: Mapping[str, TaskStats] | None = None) -> list[str]:
        """The next `size` task ids, after moving on if `stats` show the bucket is learnt."""
        if size < 1:
            raise ConfigError(f"a batch needs at least one task, got {size}")
        if stats is not None:
            while self._stage + 1 < len(self.stages):
                rate, n = self.pass_rate(stats)
                if n < self.min_episodes or rate <= self.advance_at:
                    break
                self._stage += 1
                self._queue = []
        batch: list[str] = []
        while len(batch) < size:
            if not self._queue:
                self._queue = list(self.members[self.stage])
                self._rng.shuffle(self._queue)
            batch.append(self._queue.pop())
        return batch
