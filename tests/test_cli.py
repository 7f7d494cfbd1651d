"""The `rollbox` command, run as a user runs it: a real process, its output and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import MakeTask

FIGURE_KEYS = {
    "bench",
    "name",
    "value",
    "unit",
    "baseline",
    "baseline_value",
    "ratio",
    "target",
    "met",
}


def rollbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_tasks_list_json_lists_the_bundled_set() -> None:
    res = rollbox("tasks", "list", "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) >= 60
    assert {r["family"] for r in rows} == {"bugfix", "feature", "data", "ops", "docs"}
    assert {r["split"] for r in rows} == {"train", "eval"}
    assert all(len(r["version"]) == 16 and r["difficulty"] for r in rows)


def test_tasks_list_filters() -> None:
    rows = json.loads(
        rollbox("tasks", "list", "--json", "--split", "eval", "--family", "ops").stdout
    )
    assert rows and {(r["split"], r["family"]) for r in rows} == {("eval", "ops")}


def test_tasks_list_reports_bad_tasks_and_still_lists_good(
    make_task: MakeTask, tmp_path: Path
) -> None:
    base = tmp_path / "set"
    make_task("good", parent=base)
    bad = make_task("bad", parent=base)
    (bad / "task.toml").write_text("id = ")
    res = rollbox("tasks", "list", str(base), "--json")
    assert res.returncode == 1
    assert [r["id"] for r in json.loads(res.stdout)] == ["good"]
    assert "task.toml" in res.stderr and "invalid TOML" in res.stderr
    assert "Traceback" not in res.stderr


def test_tasks_show_prints_what_the_agent_sees(make_task: MakeTask) -> None:
    root = make_task()
    res = rollbox("tasks", "show", str(root))
    assert res.returncode == 0, res.stderr
    assert "In calc.py, make add(a, b) return a + b." in res.stdout
    assert "calc.py" in res.stdout and "feature-add" in res.stdout
    assert "test_negative" not in res.stdout and "test_calc.py" not in res.stdout, (
        "hidden tests are never shown"
    )
    res = rollbox("tasks", "show", "feature-is-even")
    assert res.returncode == 0 and "parity.py" in res.stdout


def test_bad_input_is_one_clear_line() -> None:
    for args, message in (
        (("tasks", "show", "no-such-task"), "no task 'no-such-task'"),
        (("tasks", "list", "/no/such/dir"), "does not exist"),
        (("bench", "no-such-bench"), "unknown benchmark"),
    ):
        res = rollbox(*args)
        assert res.returncode == 2, args
        assert message in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_an_empty_directory_has_no_tasks(tmp_path: Path) -> None:
    res = rollbox("tasks", "list", str(tmp_path))
    assert res.returncode == 2 and "no tasks" in res.stderr


def test_tasks_check_on_a_directory(make_task: MakeTask, tmp_path: Path) -> None:
    base = tmp_path / "set"
    make_task("good", parent=base)
    make_task("broken", parent=base, solution={"calc.py": "def add(a, b):\n    return a - b\n"})
    res = rollbox("tasks", "check", str(base), "--json")
    assert res.returncode == 1
    rows = {r["task"]: r for r in json.loads(res.stdout)}
    assert rows["good"]["ok"] is True
    assert rows["broken"]["ok"] is False
    assert "the reference fails" in rows["broken"]["problems"][0]


def test_bench_json_has_every_field() -> None:
    res = rollbox("bench", "tasks", "--json", "--quick")
    assert res.returncode == 0, res.stderr
    figures = json.loads(res.stdout)
    assert figures and all(set(f) == FIGURE_KEYS for f in figures)
    f = figures[0]
    assert f["baseline_value"] > 0 and abs(f["ratio"] - f["value"] / f["baseline_value"]) < 1e-9
