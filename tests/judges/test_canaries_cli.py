"""Canaries through `rollbox judge TASK_DIR WORKSPACE_DIR`: the command a harness would call on
a finished workspace must tell the same story (exit 0 judged, 3 flaky, 4 undecided)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.judges.canary_support import bundled, finished_workspace, reference, src


def rollbox_judge(task_dir: Path, workspace: Path, *args: str) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, "-m", "rollbox.cli", "judge", str(task_dir), str(workspace), "--json",
         *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.stdout.strip(), res.stderr
    return res.returncode, json.loads(res.stdout)


def test_cli_pays_the_reference(tmp_path: Path) -> None:
    task = bundled("feature-is-even")
    ws = finished_workspace(task, reference(task), tmp_path / "ws")
    code, out = rollbox_judge(task.root, ws)
    assert code == 0, out
    assert out["reward"]["total"] == 1.0 and out["reward"]["correctness"] == 1.0, out["reward"]


def test_cli_a_workspace_full_of_steering_files(tmp_path: Path) -> None:
    task = bundled("feature-is-even")
    force = src(
        """
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            out = yield
            out.get_result().outcome = "passed"
        """
    )
    ws = finished_workspace(
        task,
        {
            "parity.py": b"def is_even(n):\n    return None\n",
            "conftest.py": force,
            "pytest.ini": b"[pytest]\naddopts = -p no:python\n",
            "sitecustomize.py": b"import os\nos._exit(0)\n",
            "test_parity.py": b"def test_even_number():\n    pass\n",
            ".git/HEAD": b"ref: refs/heads/answer\n",
        },
        tmp_path / "ws",
    )
    code, out = rollbox_judge(task.root, ws)
    assert code == 0, out
    assert out["status"] == "judged"
    assert out["reward"]["correctness"] == 0 and out["reward"]["total"] <= 0, out["reward"]
    kinds = {(t["path"], t["kind"]) for t in out["tampering"]}
    assert kinds >= {
        ("conftest.py", "pytest-plugin"),
        ("pytest.ini", "pytest-config"),
        ("sitecustomize.py", "startup-hook"),
        ("test_parity.py", "tests"),
        (".git/HEAD", "git"),
    }, kinds


@pytest.mark.slow
def test_cli_a_coin_flipping_answer_is_flaky_and_unpaid(tmp_path: Path) -> None:
    task = bundled("feature-is-even")
    ws = finished_workspace(
        task, {"parity.py": b"import os\n\ndef is_even(n):\n    return os.urandom(1)[0] < 128\n"},
        tmp_path / "ws",
    )  # fmt: skip
    code, out = rollbox_judge(task.root, ws, "--repeat", "5")
    assert code == 3, out["status"]
    assert out["status"] == "flaky" and out["reward"] is None
