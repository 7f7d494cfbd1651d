"""`rollbox run`: the main job end to end (scripted policies; the real model is in
tests/policies and the demo), resume after SIGKILL, and clear errors for bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollbox.runner import pass_at_k, summarize
from tests.conftest import MakeTask
from tests.test_cli import rollbox

ROLLBOX = [sys.executable, "-m", "rollbox.cli"]


def lines(run_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    p = run_dir / "trajectories.jsonl"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text().splitlines() if x.endswith("}")]


def test_run_with_the_oracle_writes_trajectories_and_a_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = rollbox("run", "--policy", "oracle", "--difficulty", "trivial", "--split", "eval",
                "--samples-per-task", "2", "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    for key in ("n_episodes", "pass_rate", "pass_at_k", "mean_turns", "infra_failures",
                "tokens_generated", "sandbox_seconds"):  # fmt: skip
        assert key in summary, key
    assert summary["n_episodes"] == 6 and summary["pass_rate"] == 1.0
    assert summary["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert summary["infra_failures"] == 0 and summary["mean_turns"] >= 2
    assert set(summary["by_family"]) == {"data", "feature", "ops"}
    trajs = lines(out)
    assert sorted(t["episode_id"] for t in trajs) == sorted(summary["solved"])
    assert all(t["judgement"]["status"] == "judged" for t in trajs)
    assert "all" in r.stdout and "pass@1 100%" in r.stdout
    # run again: nothing is redone, the summary is the same
    started = {t["episode_id"]: t["started_at"] for t in trajs}
    again = rollbox("run", "--policy", "oracle", "--difficulty", "trivial", "--split", "eval",
                    "--samples-per-task", "2", "--out", str(out))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert {t["episode_id"]: t["started_at"] for t in lines(out)} == started
    assert json.loads((out / "summary.json").read_text())["n_episodes"] == 6


@pytest.mark.slow
def test_a_run_killed_midway_resumes_with_every_episode_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [*ROLLBOX, "run", "--policy", "oracle", "--concurrency", "2", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while len(lines(out)) < 8 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {t["episode_id"]: t for t in lines(out)}
    assert 8 <= len(before) < 65, len(before)

    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    after = lines(out)
    ids = [t["episode_id"] for t in after]
    assert len(ids) == len(set(ids)) == 65, "every episode exactly once"
    by_id = {t["episode_id"]: t for t in after}
    for eid, t in before.items():  # finished episodes were not redone
        assert by_id[eid]["started_at"] == t["started_at"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_episodes"] == 65 and summary["pass_rate"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "gpt-17"], "unknown policy 'gpt-17'"),
        (["--policy", "openai:http://127.0.0.1:9/v1"], "cannot reach http://127.0.0.1:9/v1"),
        (["--policy", "oracle", "--concurrency", "0"], "--concurrency must be at least 1"),
        (["--policy", "scripted:/nonexistent.json"], "cannot read the script"),
        (["--policy", "oracle", "--split", "test"], "--split must be train or eval"),
        (["--policy", "oracle", "--family", "poetry"], "no tasks to run"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    r = rollbox("run", *args, "--out", str(tmp_path / "run"))
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "run").exists(), "a run that never started leaves no run directory"


def test_a_directory_without_tasks_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = rollbox("run", "--policy", "oracle", "--tasks", str(tmp_path / "empty"))
    assert r.returncode == 2 and "no tasks to run" in r.stderr and "Traceback" not in r.stderr


def test_a_different_config_in_the_same_run_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = ["run", "--policy", "oracle", "--task", "feature-is-even", "--out", str(out)]
    assert rollbox(*base).returncode == 0
    r = rollbox(*base, "--seed", "5")
    assert r.returncode == 2 and "seed" in r.stderr and "Traceback" not in r.stderr


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(4, 0, 1) == 0.0 and pass_at_k(4, 4, 2) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # 1 - C(3,3)/C(5,3)
    assert pass_at_k(5, 3, 3) == 1.0  # n - c < k: every draw of 3 holds a pass
    assert pass_at_k(10, 3, 4) == pytest.approx(1 - 35 / 210)


def test_summary_keeps_failures_of_the_machinery_apart() -> None:
    from rollbox.agent.types import Trajectory

    def traj(tid: str, s: int, *, passed: bool, reward: float | None, stop: str) -> Trajectory:
        return Trajectory(
            episode_id=f"{tid}#{s}", run_id="r", task_id=tid, task_version="v", family="f",
            difficulty="easy", split="train", sample=s, seed=s, policy={"name": "p"},
            messages=(), steps=(), terminated=stop == "submitted", truncated=False,
            stop_reason=stop, passed=passed, reward=reward, completion_tokens=3,
        )  # type: ignore[arg-type]  # fmt: skip

    s = summarize([
        traj("a", 0, passed=True, reward=1.0, stop="submitted"),
        traj("a", 1, passed=False, reward=0.0, stop="max_turns"),
        traj("b", 0, passed=False, reward=None, stop="infra_error"),
        traj("b", 1, passed=False, reward=0.0, stop="submitted"),
    ])  # fmt: skip
    assert s["n_episodes"] == 4 and s["n_decided"] == 3 and s["infra_failures"] == 1
    assert s["pass_rate"] == pytest.approx(1 / 3)
    assert s["pass_at_k"]["1"] == pytest.approx((0.5 + 0.0) / 2)
    assert s["tokens_generated"] == 12 and s["solved"] == ["a#0"]


@pytest.mark.slow
def test_tasks_that_failed_validation_are_left_out_unless_allowed(
    make_task: MakeTask, tmp_path: Path
) -> None:
    base = tmp_path / "set"
    make_task("feature-good", parent=base)
    broken = {"calc.py": "def add(a, b):\n    return a - b\n"}
    make_task("feature-bad-reference", parent=base, solution=broken)
    report = tmp_path / "validation.json"
    v = rollbox("tasks", "validate", str(base), "--repeat", "1", "--json", str(report))
    assert v.returncode == 1, v.stdout + v.stderr
    assert "feature-bad-reference" in report.read_text()

    r = rollbox("run", "--policy", "oracle", "--tasks", str(base), "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    assert [t["task_id"] for t in lines(tmp_path / "a")] == ["feature-good"]
    assert "failed validation" in r.stderr

    r = rollbox("run", "--policy", "oracle", "--tasks", str(base), "--task",
                "feature-bad-reference", "--out", str(tmp_path / "b"))  # fmt: skip
    assert r.returncode == 2 and "failed validation" in r.stderr and "--allow-invalid" in r.stderr

    r = rollbox("run", "--policy", "oracle", "--tasks", str(base), "--allow-invalid",
                "--out", str(tmp_path / "c"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert sorted(t["task_id"] for t in lines(tmp_path / "c")) == [
        "feature-bad-reference",
        "feature-good",
    ]


@pytest.mark.slow
def test_the_bundled_model_acts_through_tools_and_is_judged(tmp_path: Path) -> None:
    """The real SmolLM2 in the real loop (whether it solves the task is up to it: the demo
    shows that; here every record a learner needs must be there)."""
    out = tmp_path / "run"
    r = rollbox("run", "--policy", "smollm2", "--task", "feature-greet-name",
                "--samples-per-task", "2", "--max-turns", "2", "--max-tokens-per-turn", "64",
                "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    trajs = lines(out)
    assert len(trajs) == 2
    for t in trajs:
        assert t["policy"]["name"].startswith("hf:SmolLM2") and t["policy"]["version"]
        assert t["stop_reason"] in ("submitted", "max_turns", "max_tokens")
        assert t["judgement"]["status"] == "judged" and t["reward"] is not None
        assert t["completion_tokens"] > 0
        for s in t["steps"]:
            a = s["action"]
            assert len(a["token_ids"]) == len(a["logprobs"]) == a["completion_tokens"] > 0
            assert all(lp <= 0 for lp in a["logprobs"])
        assert t["messages"][0]["role"] == "system" and "<write_file" in t["messages"][0]["content"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tokens_generated"] == sum(t["completion_tokens"] for t in trajs)
