"""Judgements end to end: copy-out of a finished workspace, repeated runs, the fast path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.judges import VerdictStatus, judge_changes, judge_workspace, make_judge
from rollbox.judges.fastpath import FastTestJudge
from rollbox.sandbox import BwrapConfig, Factory, state
from rollbox.tasks import load_task, load_tasks, materialize, reference_changes
from tests.conftest import TASK_TOML, MakeTask
from tests.sandbox.test_hostile_support import processes_naming

SANDBOXES = Factory(BwrapConfig())
BUNDLED = load_tasks("bundled")


async def test_a_finished_workspace_is_copied_out_without_links(
    make_task: MakeTask, tmp_path: Path
) -> None:
    task = load_task(make_task())
    ws = materialize(task, tmp_path / "done", reference=True)
    (ws / "passwd").symlink_to("/etc/passwd")
    (ws / "calc_link.py").symlink_to(ws / "calc.py")
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"junk")
    os.mkfifo(ws / "pipe")
    j = await judge_workspace(task, ws, SANDBOXES)
    assert j.reward is not None and j.reward.correctness == 1.0, j.verdict.diagnostics
    kinds = {f.path: f.kind for f in j.findings}
    assert kinds == {"passwd": "link", "calc_link.py": "link", "pipe": "special-file"}


async def test_runs_that_disagree_give_a_flaky_verdict_and_no_reward(make_task: MakeTask) -> None:
    tests = {
        "test_calc.py": "import os\nfrom calc import add\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_coin():\n    assert os.urandom(1)[0] % 2\n"
    }
    task = load_task(make_task(tests=tests))
    j = await judge_changes(task, reference_changes(task), SANDBOXES, repeat=16)
    assert j.verdict.status is VerdictStatus.flaky and j.reward is None
    assert j.disagreements == ("test_calc.py::test_coin",)
    assert len(j.runs) == 16


async def test_a_judge_that_cannot_prepare_raises_instead_of_paying_zero(
    make_task: MakeTask,
) -> None:
    toml = TASK_TOML.format(id="feature-add").replace(
        "[judge]", '[environment]\npython_packages = ["rbx-no-such-package==1"]\n\n[judge]'
    )
    task = load_task(make_task(toml=toml))
    os.environ["PIP_NO_INDEX"] = "1"
    try:
        with pytest.raises(SandboxError, match="rbx-no-such-package"):
            await judge_changes(task, reference_changes(task), SANDBOXES)
    finally:
        del os.environ["PIP_NO_INDEX"]


def _rollbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("task_id", ["feature-is-even", "data-region-revenue-fix"])
def test_rollbox_judge_pays_the_reference_and_not_the_start_or_a_planted_conftest(
    task_id: str, tmp_path: Path
) -> None:
    task = BUNDLED.get(task_id)
    ref = materialize(task, tmp_path / "ref", reference=True)
    res = _rollbox("judge", str(task.root), str(ref))
    assert res.returncode == 0, res.stderr
    assert "reward 1 = correctness 1" in res.stdout
    data = json.loads(_rollbox("judge", str(task.root), str(ref), "--json").stdout)
    assert data["reward"]["total"] == pytest.approx(1.0) and data["reward"]["correctness"] == 1

    start = materialize(task, tmp_path / "start", reference=False)
    data = json.loads(_rollbox("judge", str(task.root), str(start), "--json").stdout)
    assert data["reward"]["total"] == 0 and data["status"] == "judged"

    cheat = materialize(task, tmp_path / "cheat", reference=False)
    (cheat / "conftest.py").write_text(
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
    )
    res = _rollbox("judge", str(task.root), str(cheat))
    assert "tampering conftest.py" in res.stdout
    data = json.loads(_rollbox("judge", str(task.root), str(cheat), "--json").stdout)
    assert data["reward"]["correctness"] == 0 and data["reward"]["total"] < 0
    assert [t["path"] for t in data["tampering"]] == ["conftest.py"]


def test_rollbox_judge_says_when_the_code_ran_in_the_tests_process(tmp_path: Path) -> None:
    """The verdict records where the code under test ran; the command warns about the weaker
    opt-out and says nothing for the default."""
    for task_id, isolation in (
        ("bugfix-config-profile-leak", "in-process"),
        ("feature-is-even", "process"),
    ):
        task = BUNDLED.get(task_id)
        ref = materialize(task, tmp_path / task_id, reference=True)
        data = json.loads(_rollbox("judge", str(task.root), str(ref), "--json").stdout)
        assert data["verdict"]["meta"]["isolation"] == isolation
        res = _rollbox("judge", str(task.root), str(ref))
        assert ("ran in the tests' own process" in res.stdout) == (isolation == "in-process")


def test_rollbox_judge_bad_input(tmp_path: Path) -> None:
    res = _rollbox("judge", str(tmp_path), str(tmp_path))
    assert res.returncode == 2 and "task.toml" in res.stderr and "Traceback" not in res.stderr
    task = BUNDLED.get("feature-is-even")
    res = _rollbox("judge", str(task.root), str(tmp_path / "nope"))
    assert res.returncode == 2 and "not a directory" in res.stderr


PYTEST_TASKS = [t for t in BUNDLED if t.spec.judge.type == "pytest"]


@pytest.mark.slow
async def test_fast_path_verdicts_equal_cold_verdicts_on_every_bundled_task() -> None:
    """The fast path changes nothing but speed, on every bundled pytest task; closed, it leaves
    no sandbox open (a warm pair's code sandbox included)."""
    own = state.owner().dir
    before = processes_naming(own).keys()
    async with FastTestJudge(SANDBOXES) as fast:
        for task in PYTEST_TASKS:
            cold = make_judge(task)
            for changes in ({}, reference_changes(task)):
                a = await cold.judge(task, changes, SANDBOXES)
                b = await fast.judge(task, changes, SANDBOXES)
                assert a.status == b.status, task.id
                assert [(o.name, o.status) for o in a.outcomes] == [
                    (o.name, o.status) for o in b.outcomes
                ], task.id
    assert len(PYTEST_TASKS) >= 20
    left = processes_naming(own).keys() - before
    assert not left, f"{len(left)} sandboxes of the fast path are still open after close()"
