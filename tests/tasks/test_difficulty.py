"""Measured difficulty: the estimator, storage per task version, and sampling for training."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rollbox.agent.types import Trajectory
from rollbox.errors import ConfigError, StoreError
from rollbox.store.runstore import RunStore
from rollbox.tasks import load_tasks
from rollbox.tasks.difficulty import (
    Bucket,
    Curriculum,
    DifficultyStore,
    TaskStats,
    bucket_of,
    difficulty_rows,
    drop_zero_variance,
    group_by_task,
    pass_at_k,
    run_counts,
    stats_from_runs,
)


def traj(
    task: str,
    sample: int,
    *,
    passed: bool | None,
    version: str = "v1",
    run_id: str = "run-a",
    reward: float | None = None,
) -> Trajectory:
    """An episode: passed None is undecided (no reward)."""
    if reward is None and passed is not None:
        reward = 1.0 if passed else 0.0
    return Trajectory(
        episode_id=f"{task}#{sample}",
        run_id=run_id,
        task_id=task,
        task_version=version,
        family="feature",
        difficulty="easy",
        split="train",
        sample=sample,
        seed=sample,
        policy={"name": "scripted", "version": "1"},
        messages=(),
        steps=(),
        terminated=True,
        truncated=False,
        stop_reason="submitted" if passed is not None else "infra_error",
        reward=reward,
        passed=bool(passed),
    )


def make_run(path: Path, run_id: str, episodes: list[Trajectory]) -> Path:
    with RunStore.create(path, {"task_versions": {}}, run_id=run_id) as store:
        for t in episodes:
            store.add(t.model_copy(update={"run_id": run_id}))
    return path


# ---- the estimator and buckets ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (10, 1, 5, 0.5),  # 1 - C(9,5)/C(10,5) = 1 - 126/252
        (4, 0, 2, 0.0),
        (3, 3, 2, 1.0),
        (6, 4, 3, 1.0),  # n - c < k: every draw of 3 holds a pass
    ],
)
def test_pass_at_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)
    assert TaskStats("t", "v", n, c).pass_at(k) == pytest.approx(expected)


def test_pass_at_k_needs_k_samples() -> None:
    s = TaskStats("t", "v", 3, 1)
    assert s.pass_at(4) is None
    assert s.to_dict() == pytest.approx({"n": 3, "c": 1, "pass@1": 1 / 3, "pass@2": 2 / 3,
                                         "pass@3": 1.0})  # fmt: skip


@pytest.mark.parametrize(
    ("pass1", "bucket"),
    [
        (1.0, Bucket.solved_always),
        (0.9, Bucket.solved_always),
        (0.89, Bucket.easy),
        (0.6, Bucket.easy),
        (0.59, Bucket.medium),
        (0.3, Bucket.medium),
        (0.29, Bucket.hard),
        (0.01, Bucket.hard),
        (0.0, Bucket.unsolved),
    ],
)
def test_buckets(pass1: float, bucket: Bucket) -> None:
    assert bucket_of(pass1) is bucket


# ---- counting and storing ---------------------------------------------------------------------


def test_only_decided_episodes_count(tmp_path: Path) -> None:
    run = make_run(
        tmp_path / "r",
        "run-a",
        [
            traj("a", 0, passed=True),
            traj("a", 1, passed=False),
            traj("a", 2, passed=None),  # undecided: not counted
            traj("b", 0, passed=False, version="v7"),
        ],
    )
    run_id, counts = run_counts(run)
    assert run_id == "run-a"
    assert counts == {("a", "v1"): (2, 1), ("b", "v7"): (1, 0)}
    # a run given twice counts once
    stats = stats_from_runs([run, run])
    assert stats[("a", "v1")] == TaskStats("a", "v1", 2, 1)


def test_runs_add_up(tmp_path: Path) -> None:
    r1 = make_run(tmp_path / "1", "run-1", [traj("a", 0, passed=True)])
    r2 = make_run(tmp_path / "2", "run-2", [traj("a", 0, passed=False), traj("a", 1, passed=True)])
    assert stats_from_runs([r1, r2])[("a", "v1")] == TaskStats("a", "v1", 3, 2)


def test_the_store_is_keyed_by_version(tmp_path: Path) -> None:
    run = make_run(
        tmp_path / "r", "run-a", [traj("a", i, passed=i < 3, version="v1") for i in range(4)]
    )
    store = DifficultyStore(tmp_path / "difficulty.json")
    store.add_run(run)
    assert store.get("a", "v1") == TaskStats("a", "v1", 4, 3)
    assert store.get("a", "v2") is None  # the task changed: it starts fresh
    path = store.save()
    data = json.loads(path.read_text())
    assert data == {
        "a": {
            "v1": {
                "n": 4,
                "c": 3,
                "pass@1": 0.75,
                "pass@2": 1.0,
                "pass@4": 1.0,
                "runs": {"run-a": {"n": 4, "c": 3}},
            }
        }
    }
    again = DifficultyStore(path)
    again.add_run(run)  # the same run again replaces its counts
    assert again.get("a", "v1") == TaskStats("a", "v1", 4, 3)
    again.add_counts("run-b", {("a", "v2"): (2, 0)})
    assert again.get("a", "v2") == TaskStats("a", "v2", 2, 0)
    assert again.get("a", "v1") == TaskStats("a", "v1", 4, 3)
    again.add_counts("run-a", {("b", "v1"): (1, 1)})  # run-a, counted anew, no longer has a
    assert again.get("a", "v1") is None and again.get("b", "v1") == TaskStats("b", "v1", 1, 1)


def test_a_damaged_store_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "difficulty.json"
    path.write_text('{"a": {"v1": {"n": 1}}}')
    with pytest.raises(StoreError, match="not a difficulty file"):
        DifficultyStore(path)


def test_rows_use_one_k() -> None:
    k, rows = difficulty_rows([TaskStats("a", "v", 4, 1), TaskStats("b", "w", 2, 2)])
    assert k == 2
    assert [(r["task"], r["pass@2"], r["bucket"]) for r in rows] == [
        ("a", 0.5, "hard"),
        ("b", 1.0, "solved-always"),
    ]
    k, rows = difficulty_rows([TaskStats("a", "v", 4, 1), TaskStats("b", "w", 2, 2)], 4)
    assert [r["pass@4"] for r in rows] == [1.0, None]
    with pytest.raises(ConfigError):
        difficulty_rows([], 0)


# ---- sampling for training --------------------------------------------------------------------


def test_drop_zero_variance() -> None:
    episodes = [
        *(traj("all-pass", i, passed=True) for i in range(3)),
        *(traj("all-fail", i, passed=False) for i in range(3)),
        traj("mixed", 0, passed=True),
        traj("mixed", 1, passed=False),
        traj("mixed", 2, passed=None),
        traj("one-left", 0, passed=True),
        traj("one-left", 1, passed=None),
        traj("partial", 0, passed=False, reward=0.5),
        traj("partial", 1, passed=False, reward=0.25),
    ]
    groups = group_by_task(episodes)
    firsts = [g[0].task_id for g in groups]
    assert firsts == ["all-pass", "all-fail", "mixed", "one-left", "partial"]
    kept = drop_zero_variance(groups)
    assert [[t.episode_id for t in g] for g in kept] == [
        ["mixed#0", "mixed#1"],
        ["partial#0", "partial#1"],
    ]


def curriculum(**kwargs: object) -> Curriculum:
    buckets = {
        "s1": Bucket.solved_always,
        "e1": Bucket.easy,
        "e2": Bucket.easy,
        "e3": Bucket.easy,
        "h1": Bucket.hard,
        "h2": Bucket.hard,
        "u1": Bucket.unsolved,
    }
    return Curriculum(buckets, **kwargs)  # type: ignore[arg-type]


def test_curriculum_starts_with_the_easiest_bucket_with_something_to_learn() -> None:
    c = curriculum(seed=1)
    assert c.stage is Bucket.easy and c.stages == [Bucket.easy, Bucket.hard, Bucket.unsolved]
    batch = c.next_batch(3)
    assert sorted(batch) == ["e1", "e2", "e3"]  # each once before any twice
    assert set(c.next_batch(7)) == {"e1", "e2", "e3"}
    assert curriculum(include_solved=True).stage is Bucket.solved_always


def test_curriculum_is_deterministic_by_seed() -> None:
    a, b = curriculum(seed=5), curriculum(seed=5)
    assert [a.next_batch(4) for _ in range(5)] == [b.next_batch(4) for _ in range(5)]
    seqs = {tuple(curriculum(seed=s).next_batch(9)) for s in range(6)}
    assert len(seqs) > 1


def test_curriculum_advances_when_the_bucket_is_learnt() -> None:
    c = curriculum(min_episodes=8, advance_at=0.8)
    low = {t: TaskStats(t, "v", 4, 2) for t in ("e1", "e2", "e3")}
    c.next_batch(2, low)
    assert c.stage is Bucket.easy
    few = {"e1": TaskStats("e1", "v", 4, 4)}  # 100% but too few episodes to trust
    c.next_batch(2, few)
    assert c.stage is Bucket.easy
    learnt = {t: TaskStats(t, "v", 4, 4) for t in ("e1", "e2", "e3")}
    learnt["h1"] = TaskStats("h1", "v", 4, 1)
    assert set(c.next_batch(4, learnt)) == {"h1", "h2"}
    assert c.stage is Bucket.hard
    assert c.pass_rate(learnt) == (0.25, 4)
    everything = {t: TaskStats(t, "v", 10, 10) for t in ("h1", "h2", "u1")}
    c.next_batch(1, everything)
    assert c.stage is Bucket.unsolved
    c.next_batch(1, everything)  # the last bucket is kept
    assert c.stage is Bucket.unsolved


def test_curriculum_from_baseline_stats() -> None:
    c = Curriculum.from_stats(
        [TaskStats("a", "v", 10, 10), TaskStats("b", "v", 10, 5), TaskStats("c", "v", 0, 0)]
    )
    assert c.stages == [Bucket.medium]
    with pytest.raises(ConfigError, match="no tasks"):
        Curriculum.from_stats([TaskStats("a", "v", 10, 10)])


# ---- the command, on a real run ---------------------------------------------------------------


def rollbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "oracle"
    res = rollbox(
        "run", "--policy", "oracle", "--task", "feature-is-even", "--samples-per-task", "2",
        "--out", str(out),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return out


def test_the_run_records_its_task_versions(oracle_run: Path) -> None:
    config = json.loads((oracle_run / "run.json").read_text())["config"]
    current = load_tasks("bundled").get("feature-is-even").version
    assert config["task_versions"] == {"feature-is-even": current}
    res = rollbox("tasks", "diff", str(oracle_run), "bundled", "--json")
    assert res.returncode == 1, res.stderr  # the run used one task of the set
    d = json.loads(res.stdout)
    assert d["unchanged"] == 1 and d["changed"] == [] and d["removed"] == []
    assert len(d["added"]) == len(load_tasks("bundled")) - 1


def test_cli_difficulty(oracle_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "d.json"
    res = rollbox("tasks", "difficulty", str(oracle_run), "--json", "--store", str(store))
    assert res.returncode == 0, res.stderr
    [row] = json.loads(res.stdout)
    assert (row["task"], row["n"], row["c"], row["pass@1"], row["pass@2"], row["bucket"]) == (
        "feature-is-even", 2, 2, 1.0, 1.0, "solved-always",
    )  # fmt: skip
    saved = json.loads(store.read_text())
    assert saved["feature-is-even"][row["version"]]["n"] == 2
    res = rollbox("tasks", "difficulty", str(oracle_run))
    assert res.returncode == 0 and "solved-always" in res.stdout and "pass@2" in res.stdout


def test_cli_difficulty_bad_input(tmp_path: Path) -> None:
    res = rollbox("tasks", "difficulty", str(tmp_path / "missing"))
    assert res.returncode == 2
    assert "no rollbox run here" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
