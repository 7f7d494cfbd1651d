"""`rollbox tasks import`, run as a user runs it: a real process, its output and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tasks.importers.conftest import FIXTURES, SwebenchSource


def rollbox(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", "tasks", "import", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"},
    )


def test_prints_the_report_and_exits_0(tmp_path: Path) -> None:
    res = rollbox("mbpp", FIXTURES / "mbpp.jsonl", tmp_path, "--split", "eval")
    assert res.returncode == 0, res.stderr
    assert "mbpp-17" in res.stdout and "MBPP/14" in res.stdout
    assert "the tests call no function that the reference code defines" in res.stdout
    assert "5 task(s) imported" in res.stdout and "2 item(s) skipped" in res.stdout
    assert 'split = "eval"' in (tmp_path / "mbpp-11" / "task.toml").read_text()


def test_json_report(tmp_path: Path, swebench_source: SwebenchSource) -> None:
    src, repos = swebench_source.jsonl, swebench_source.repos
    args = ("swebench", src, tmp_path, "--repo", repos, "--limit", "1", "--family", "feature")
    res = rollbox(*args, "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert [i["id"] for i in report["imported"]] == ["swebench-acme__calc-1"]
    assert report["imported"][0]["status"] == "new"
    assert report["skipped"] == []  # --limit 1: nothing after the first task is converted
    assert 'family = "feature"' in (tmp_path / "swebench-acme__calc-1" / "task.toml").read_text()
    again = json.loads(rollbox(*args, "--json").stdout)
    assert again["imported"][0]["status"] == "unchanged"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("humaneval", "missing.jsonl"), "error: source 'missing.jsonl' does not exist"),
        (("humaneval", "{bad}"), "bad.jsonl:2: not valid JSON"),
        (("leetcode", "{good}"), "error: unknown source kind 'leetcode': use one of exercism, "),
        (("humaneval", "{good}", "--split", "test"), "error: --split must be one of train, eval"),
        (("swebench", "{good}"), "error: swebench needs --repo"),
        (("exercism", "{tmp}"), "error: no Exercism exercises in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0"}\n{"task_id": \n')
    good = FIXTURES / "humaneval.jsonl"
    real = [a.format(bad=bad, good=good, tmp=tmp_path) for a in args]
    res = subprocess.run(
        [sys.executable, "-m", "rollbox.cli", "tasks", "import", real[0], real[1],
         str(tmp_path / "out"), *real[2:]],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "300"},
    )  # fmt: skip
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()  # a bad source is found before anything is written


def test_refuses_to_overwrite_a_different_task(tmp_path: Path) -> None:
    assert rollbox("humaneval", FIXTURES / "humaneval.jsonl", tmp_path).returncode == 0
    (tmp_path / "humaneval-0" / "tests" / "test_solution.py").write_text("def test_x(): pass\n")
    res = rollbox("humaneval", FIXTURES / "humaneval.jsonl", tmp_path)
    assert res.returncode == 2
    assert "humaneval-0 already holds a different task" in res.stderr
    assert "Traceback" not in res.stderr


def validate(dest: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", "tasks", "validate", str(dest), "--repeat", "2",
         "--json", str(dest.parent / f"{dest.name}-validation.json")],
        capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"},
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["exercism", "humaneval", "mbpp", "swebench"])
def test_import_then_validate_end_to_end(
    tmp_path: Path, swebench_source: SwebenchSource, kind: str
) -> None:
    """The acceptance path: `rollbox tasks import KIND SRC DEST`, then `rollbox tasks validate
    DEST` accepts what was imported (start fails, reference passes, runs agree, exploits
    unpaid), in real sandboxes."""
    src: dict[str, tuple[str | Path, ...]] = {
        "exercism": (FIXTURES / "exercism-track",),
        "humaneval": (FIXTURES / "humaneval.jsonl",),
        "mbpp": (FIXTURES / "mbpp.jsonl",),
        "swebench": (swebench_source.jsonl, "--repo", swebench_source.repos),
    }
    dest = tmp_path / kind
    first, *rest = src[kind]
    imported = rollbox(kind, first, dest, *rest, "--json")
    assert imported.returncode == 0, imported.stderr
    ids = [i["id"] for i in json.loads(imported.stdout)["imported"]]
    assert ids
    res = validate(dest)
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads((tmp_path / f"{kind}-validation.json").read_text())
    rows = report["tasks"] if isinstance(report, dict) and "tasks" in report else report
    assert sorted(r["id"] for r in rows) == sorted(ids)
    assert all(r["ok"] for r in rows)
