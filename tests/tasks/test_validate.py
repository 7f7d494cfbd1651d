"""`rollbox tasks validate`: good tasks pass, and every planted defect is caught and named.

The tasks are really judged, in bwrap sandboxes; each planted task is the default `feature-add`
task of tests/conftest.py with one thing wrong.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_task, load_tasks
from rollbox.tasks.model import Task
from rollbox.tasks.validate import (
    REPORT_FILE,
    TaskValidation,
    ValidationReport,
    exploits,
    filter_valid,
    load_exclusions,
    read_records,
    report_paths,
    save_report,
    validate_task,
    validate_tasks,
)
from tests.conftest import SOLUTION, TASK_TOML, TESTS, WORKSPACE, MakeTask

SANDBOXES = Factory(BwrapConfig())


def reasons(r: TaskValidation) -> str:
    return "\n".join(r.reasons) or "(no reasons)"


def toml(task_id: str, *, judge: str = "", extra: str = "", split: str = "train") -> str:
    """The default task.toml, with `extra` before [judge] and `judge` lines under it."""
    text = TASK_TOML.format(id=task_id).replace('split = "train"', f'split = "{split}"')
    return text.replace("[judge]", f"{extra}\n[judge]") + judge


# ---- no sandbox: the exploits, the report file, the exclusions ------------------------------


def test_the_exploits_of_a_task_with_test_files_and_scripts(make_task: MakeTask) -> None:
    workspace = {
        **WORKSPACE,
        "tests/test_visible.py": "def test_x():\n    assert True\n",
        "run.sh": "#!/bin/bash\necho hi\n",
        "pkg/mod.py": '#!/usr/bin/env python3\n"""Doc."""\nfrom __future__ import annotations\n'
        "X = 1\n",
        "data.csv": "a,b\n1,2\n",
    }
    task = load_task(make_task(workspace=workspace))
    found = dict(exploits(task))
    assert list(found) == [
        "empty change",
        "planted conftest.py",
        "deleted test files",
        "exit 0 at import",
    ]
    assert found["empty change"] == {}
    assert b"pytest_runtest_makereport" in (found["planted conftest.py"]["conftest.py"] or b"")
    assert found["deleted test files"] == {"tests/test_visible.py": None}
    exits = found["exit 0 at import"]
    assert set(exits) == {"calc.py", "run.sh", "pkg/mod.py"}, "tests and data are left alone"
    assert exits["calc.py"] == b"import sys; sys.exit(0)\n" + WORKSPACE["calc.py"].encode()
    assert exits["run.sh"] == b"#!/bin/bash\nexit 0\necho hi\n"
    mod = (exits["pkg/mod.py"] or b"").decode()
    ast.parse(mod)  # the exit goes after the docstring and the __future__ import
    assert mod.splitlines()[3] == "import sys; sys.exit(0)" and mod.endswith("X = 1\n")


def _record(task: Task, *, ok: bool, reasons: tuple[str, ...] = ()) -> TaskValidation:
    return TaskValidation(
        id=task.id,
        version=task.version,
        split=str(task.split),
        judge=task.spec.judge.type,
        ok=ok,
        reasons=reasons,
        limit_s=60,
        validated_at="2030-01-01T00:00:00+00:00",
    )


def test_the_report_is_kept_per_version_and_excludes_what_failed(
    make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLBOX_HOME", str(tmp_path / "home"))
    tasks_dir = tmp_path / "set"
    good = load_task(make_task("feature-good", parent=tasks_dir, toml=toml("feature-good")))
    bad = load_task(make_task("feature-bad", parent=tasks_dir, toml=toml("feature-bad")))
    report = ValidationReport(
        tasks=(_record(good, ok=True), _record(bad, ok=False, reasons=("reference fails x",)))
    )
    where = save_report(report, tasks_dir)
    assert where == tasks_dir / REPORT_FILE
    data = json.loads(where.read_text())
    assert set(data["tasks"]) == {good.key, bad.key}
    assert data["tasks"][bad.key]["reasons"] == ["reference fails x"]
    assert load_exclusions(tasks_dir) == {"feature-bad": ["reference fails x"]}
    assert [t.id for t in filter_valid([good, bad], tasks_dir)] == ["feature-good"]
    assert [t.id for t in filter_valid([good, bad], tasks_dir, allow_invalid=True)] == [
        "feature-good",
        "feature-bad",
    ]
    # a task edited after validation is a new version: the old record does not cover it
    (bad.root / "workspace" / "calc.py").write_text("def add(a, b):\n    return 0\n")
    edited = load_task(bad.root)
    assert edited.version != bad.version
    assert load_exclusions(tasks_dir) == {}
    assert [t.id for t in filter_valid([good, edited], tasks_dir)] == [
        "feature-good",
        "feature-bad",
    ]
    # a second report merges into the file: both versions are kept
    save_report(ValidationReport(tasks=(_record(edited, ok=True),)), tasks_dir)
    assert set(read_records(tasks_dir)) == {good.key, bad.key, edited.key}


def test_a_directory_that_cannot_hold_the_report_falls_back_to_the_cache(
    make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLBOX_HOME", str(tmp_path / "home"))
    tasks_dir = tmp_path / "set"
    bad = load_task(make_task("feature-bad", parent=tasks_dir, toml=toml("feature-bad")))
    (tasks_dir / REPORT_FILE).mkdir()  # the report's place is taken: it cannot be written
    report = ValidationReport(tasks=(_record(bad, ok=False, reasons=("flaky: t",)),))
    where = save_report(report, tasks_dir)
    beside, cached = report_paths(tasks_dir)
    assert where == cached and cached.parent == tmp_path / "home" / "validation"
    assert beside.is_dir()
    assert load_exclusions(tasks_dir) == {"feature-bad": ["flaky: t"]}


def test_the_bundled_set_reports_to_the_cache_not_into_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLBOX_HOME", str(tmp_path / "home"))
    task = load_tasks("bundled").get("feature-is-even")
    where = save_report(ValidationReport(tasks=(_record(task, ok=True),)), "bundled")
    assert where.is_relative_to(tmp_path / "home")
    assert not (task.root.parent / REPORT_FILE).exists()
    assert task.key in read_records("bundled")


# ---- real sandboxes: a good task, and each planted defect -------------------------------------


async def test_a_good_task_passes_with_every_run_counted(make_task: MakeTask) -> None:
    task = load_task(make_task())
    r = await validate_task(task, SANDBOXES, repeat=3)
    assert r.ok, reasons(r)
    assert r.id == task.id and r.version == task.version and r.quarantined == ()
    # 3 reference + 3 start runs, the start once more with the code in the tests' process, and
    # the exit-0 exploit (the only one left to judge)
    assert r.runs == 8
    assert 0 < r.max_wall_s <= r.limit_s == 60
    paid = {e.name: (e.total, e.judged) for e in r.exploits}
    assert paid == {
        "empty change": (0.0, False),
        "planted conftest.py": (-0.5, False),
        "exit 0 at import": (0.0, True),
    }


COINS = 20  # the chance that 3 runs of 20 fair coins all agree is 4**-20, about 1e-12


async def test_a_flaky_test_is_caught_named_and_quarantined(make_task: MakeTask) -> None:
    coins = "".join(
        f"\ndef test_coin_{i}():\n    assert os.urandom(1)[0] % 2\n" for i in range(COINS)
    )
    tests = {"test_calc.py": "import os\n" + TESTS["test_calc.py"] + coins}
    task = load_task(make_task(tests=tests))
    r = await validate_task(task, SANDBOXES, repeat=3)
    assert not r.ok
    flaky = [x for x in r.reasons if x.startswith("flaky: ")]
    assert len(flaky) == 1, reasons(r)
    assert r.quarantined, reasons(r)
    assert all(q.startswith("test_calc.py::test_coin_") for q in r.quarantined), r.quarantined
    for q in r.quarantined:
        assert q in flaky[0]
    assert "passed 1/3" in flaky[0] or "passed 2/3" in flaky[0]


async def test_a_start_that_already_passes_is_caught(make_task: MakeTask) -> None:
    task = load_task(make_task(workspace=SOLUTION))
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    assert any(
        x.startswith("start already passes every required test") and "test_calc.py::test_small" in x
        for x in r.reasons
    ), reasons(r)


ALIASING = {
    "workspace": {"stack.py": "_items = []\n\n\ndef items():\n    return _items\n"},
    "solution": {"stack.py": "_items = []\n\n\ndef items():\n    return list(_items)\n"},
    "tests": {
        "test_stack.py": "from stack import items\n\n\n"
        "def test_starts_empty():\n    assert items() == []\n\n\n"
        "def test_callers_cannot_change_the_stack():\n"
        "    items().append(1)\n    assert items() == []\n"
    },
}


@pytest.mark.parametrize("isolation", ["process", "in-process"])
async def test_a_test_that_only_isolation_lets_pass_at_the_start_is_caught(
    make_task: MakeTask, isolation: str
) -> None:
    """The bug is aliasing (the module hands out its own list); in the code's own process the
    caller's append lands on a copy, so the start passes the test that should catch it."""
    extra = f'isolation = "{isolation}"\n' if isolation == "in-process" else ""
    task = load_task(
        make_task("feature-stack", toml=toml("feature-stack", judge=extra), **ALIASING)
    )
    r = await validate_task(task, SANDBOXES, repeat=1)
    sensitive = [x for x in r.reasons if "only with the code in its own process" in x]
    if isolation == "process":
        assert sensitive and "test_stack.py::test_callers_cannot_change_the_stack" in sensitive[0]
        assert "test_starts_empty" not in sensitive[0], reasons(r)
    else:
        assert r.ok and not sensitive, reasons(r)


async def test_a_reference_that_fails_is_caught_per_test(make_task: MakeTask) -> None:
    wrong = {"calc.py": "def add(a, b):\n    return abs(a) + abs(b)\n"}
    task = load_task(make_task(solution=wrong))
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    assert any(x.startswith("reference fails test_calc.py::test_negative") for x in r.reasons), (
        reasons(r)
    )
    assert not any("test_small" in x for x in r.reasons), reasons(r)


async def test_declared_pass_to_pass_is_checked_test_by_test(make_task: MakeTask) -> None:
    tests = {
        "test_calc.py": textwrap.dedent(
            """\
            from calc import add, sub

            def test_add():
                assert add(2, 3) == 5

            def test_sub_kept():
                assert sub(5, 3) == 2

            def test_sub_zero():
                assert sub(0, 0) == 0
            """
        )
    }
    workspace = {"calc.py": "def add(a, b):\n    return 0\n\ndef sub(a, b):\n    return a - b\n"}
    solution = {"calc.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"}
    judge = 'pass_to_pass = ["test_calc.py::test_add", "test_calc.py::test_sub_kept"]\n'
    task = load_task(
        make_task(
            toml=toml("feature-add", judge=judge),
            workspace=workspace,
            tests=tests,
            solution=solution,
        )
    )
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    assert "start already passes test_calc.py::test_sub_zero (not in pass_to_pass)" in r.reasons
    assert "pass_to_pass tests fail at the start: test_calc.py::test_add" in r.reasons
    assert len(r.reasons) == 2, reasons(r)
    assert r.pass_to_pass == ("test_calc.py::test_add", "test_calc.py::test_sub_kept")


OPS_TOML = """\
id = "{id}"
title = "Make add() add"
family = "ops"
difficulty = "trivial"
split = "train"
instruction = "In calc.py, make add(a, b) return a + b."

[judge]
type = "command"

[[judge.checks]]
name = "adds"
command = 'python3 -c "import calc; assert calc.add(2, 3) == 5"'
"""


async def test_a_judge_that_an_early_exit_fools_is_caught(make_task: MakeTask) -> None:
    """The check runs the code in its own process and trusts its status: `sys.exit(0)` at
    import passes it."""
    task = load_task(make_task("ops-add", toml=OPS_TOML.format(id="ops-add")))
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    paid = [x for x in r.reasons if x.startswith("exploit paid: exit 0 at import earned")]
    assert paid and "(correctness 1)" in paid[0], reasons(r)
    assert len(r.reasons) == 1, reasons(r)  # the start fails and the reference passes


async def test_a_weak_check_that_the_start_passes_is_caught(make_task: MakeTask) -> None:
    weak = OPS_TOML.format(id="ops-add").replace(
        """'python3 -c "import calc; assert calc.add(2, 3) == 5"'""", '"true"'
    )
    task = load_task(make_task("ops-add", toml=weak))
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    assert "start already passes every outcome (adds)" in r.reasons, reasons(r)
    assert any(x.startswith("exploit paid: empty change earned") for x in r.reasons), reasons(r)


async def test_a_run_over_the_time_limit_is_caught(make_task: MakeTask) -> None:
    tests = {"test_calc.py": "import time\n" + TESTS["test_calc.py"].replace(
        "def test_small():\n", "def test_small():\n    time.sleep(5)\n"
    )}  # fmt: skip
    task = load_task(
        make_task(toml=toml("feature-add", extra="[limits]\ntimeout_s = 1.5\n"), tests=tests)
    )
    r = await validate_task(task, SANDBOXES, repeat=1)
    assert not r.ok
    over = [x for x in r.reasons if x.startswith("took ")]
    assert over and over[0].endswith("> limit 1.5 s"), reasons(r)
    assert r.max_wall_s > 1.5


def _git(ws: Path, *args: str) -> None:
    who = {
        f"GIT_{role}_{what}": "t" for role in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL")
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws.parent), **who}
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, env=env)


async def test_a_workspace_whose_git_history_holds_the_fix_is_caught(make_task: MakeTask) -> None:
    root = make_task()
    ws = root / "workspace"
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", ".")
    _git(ws, "commit", "-q", "-m", "base")
    (ws / "calc.py").write_text(SOLUTION["calc.py"])
    _git(ws, "commit", "-q", "-am", "the fix")
    _git(ws, "tag", "v2")
    _git(ws, "reset", "-q", "--hard", "HEAD~1")
    r = await validate_task(load_task(root), SANDBOXES, repeat=1)
    assert not r.ok
    assert any(x == "the workspace's git history leaks: ref refs/tags/v2" for x in r.reasons), (
        reasons(r)
    )


async def test_an_eval_task_that_nearly_duplicates_a_train_task_is_rejected(
    make_task: MakeTask, tmp_path: Path
) -> None:
    train = load_task(make_task("feature-add", toml=toml("feature-add")))
    held_out = load_task(make_task("feature-add-2", toml=toml("feature-add-2", split="eval")))
    report = await validate_tasks([train, held_out], SANDBOXES, repeat=1, tasks_dir=tmp_path)
    assert report.get("feature-add").ok, reasons(report.get("feature-add"))
    dup = report.get("feature-add-2")
    assert not dup.ok
    assert len(dup.reasons) == 1 and dup.reasons[0].startswith(
        "near-duplicate of train task feature-add (similarity 1.00"
    ), reasons(dup)


# ---- the command, and the bundled set --------------------------------------------------------


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ROLLBOX_HOME": str(home), "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", "tasks", "validate", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_command_prints_a_table_writes_the_reports_and_exits_by_the_result(
    make_task: MakeTask, tmp_path: Path
) -> None:
    tasks_dir = tmp_path / "set"
    make_task("feature-add", parent=tasks_dir)
    make_task("feature-done", parent=tasks_dir, toml=toml("feature-done"), workspace=SOLUTION)
    out = tmp_path / "report.json"
    res = _cli(str(tasks_dir), "--repeat", "2", "--json", str(out), home=tmp_path / "home")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "REJECTED" in res.stdout and "start already passes every required test" in res.stdout
    assert "1 of 2 tasks valid, 1 rejected" in res.stdout
    data = json.loads(out.read_text())
    assert data["repeat"] == 2 and len(data["tasks"]) == 2
    rows = {t["id"]: t for t in data["tasks"]}
    assert rows["feature-add"]["ok"] is True and rows["feature-done"]["ok"] is False
    for field in ("version", "reasons", "quarantined", "max_wall_s", "runs", "exploits"):
        assert field in rows["feature-add"], field
    # 2 reference + 2 start runs, the start once more in-process, the exit-0 exploit
    assert rows["feature-add"]["runs"] == 6
    assert load_exclusions(tasks_dir).keys() == {"feature-done"}
    assert str(tasks_dir / REPORT_FILE) in res.stdout

    (tasks_dir / "feature-done").rename(tmp_path / "moved-out")
    res = _cli(str(tasks_dir), "--repeat", "1", home=tmp_path / "home")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 of 1 tasks valid, 0 rejected" in res.stdout

    res = _cli(str(tasks_dir), "--repeat", "0", home=tmp_path / "home")
    assert res.returncode == 2 and "error:" in res.stderr


@pytest.mark.slow
async def test_every_bundled_task_is_valid() -> None:
    tasks = list(load_tasks("bundled"))
    report = await validate_tasks(tasks, SANDBOXES, repeat=2, concurrency=os.cpu_count() or 2)
    bad = {t.id: t.reasons for t in report.rejected}
    assert not bad, json.dumps(bad, indent=1)
    assert len(report.tasks) == len(tasks) >= 60
    assert all(not e.paid for t in report.tasks for e in t.exploits)
