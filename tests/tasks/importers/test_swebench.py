"""The SWE-bench importer on a tiny repository made with git: a base with a bug, the fix, and a
later commit that must not reach the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollbox.errors import ConfigError
from rollbox.judges.history import git_leaks
from rollbox.tasks import load_task, read_tree
from rollbox.tasks.importers import ImportOptions, ImportReport, import_tasks
from rollbox.tasks.model import PytestJudge
from tests.tasks.importers.conftest import BASE_FILES, LATER_MARKER, SwebenchSource, git


def _import(
    source: SwebenchSource, dest: Path, src: Path | None = None, repo: Path | None = None
) -> ImportReport:
    options = ImportOptions(repo=repo or source.repos)
    return import_tasks("swebench", src or source.jsonl, dest, options)


def test_ids_and_skips(swebench_source: SwebenchSource, tmp_path: Path) -> None:
    report = _import(swebench_source, tmp_path)
    assert [i.id for i in report.imported] == ["swebench-acme__calc-1", "swebench-acme__calc-2"]
    reasons = {s.source_id: s.reason for s in report.skipped}
    assert reasons["other__missing-1"].startswith("no clone of other/missing under")
    assert reasons["acme__calc-3"].startswith("base commit 0123456789ab is not in the clone")
    assert reasons["acme__calc-4"].startswith("the patch does not apply to the base commit")
    assert reasons["acme__calc-5"].startswith(
        "FAIL_TO_PASS id 'test_mean (calc.tests.T)' is not a pytest node id"
    )
    assert len(reasons) == 4


def test_workspace_is_the_base_tree_without_history(
    swebench_source: SwebenchSource, tmp_path: Path
) -> None:
    _import(swebench_source, tmp_path)
    task = load_task(tmp_path / "swebench-acme__calc-1")
    ws = read_tree(task.workspace_dir)
    assert not (task.workspace_dir / ".git").exists()
    assert git_leaks(task.workspace_dir) == []
    for rel, text in BASE_FILES.items():  # the base versions, tests included
        assert ws[rel].decode().split() == text.split(), rel
    assert "calc/later.py" not in ws
    everything = b"".join(p.read_bytes() for p in task.root.rglob("*") if p.is_file())
    assert LATER_MARKER.encode() not in everything
    assert b"// len" in ws["calc/ops.py"]  # the bug is there, the clone's HEAD has the fix
    assert ws["docs/README.md"] == ws["README.md"]  # a link in the tree becomes a copy
    assert "docs/dangling.md" not in ws


def test_hidden_tests_spec_and_reference(swebench_source: SwebenchSource, tmp_path: Path) -> None:
    _import(swebench_source, tmp_path)
    task = load_task(tmp_path / "swebench-acme__calc-1")
    hidden = read_tree(task.tests_dir)
    assert set(hidden) == {"tests/test_ops.py", "tests/conftest.py"}  # repo paths kept
    assert b"def test_mean_fraction" in hidden["tests/test_ops.py"]  # the test patch applied
    judge = task.spec.judge
    assert isinstance(judge, PytestJudge)
    assert judge.required == (
        "tests/test_ops.py::test_mean_fraction",
        "tests/test_ops.py::test_add",
        "tests/test_ops.py::test_mean_of_equal",
    )
    assert judge.pass_to_pass == (
        "tests/test_ops.py::test_add",
        "tests/test_ops.py::test_mean_of_equal",
    )
    assert task.solution_diff is not None
    assert task.solution_diff.read_text() == swebench_source.instance["patch"]
    assert (str(task.family), str(task.difficulty)) == ("bugfix", "hard")
    assert task.spec.title == "acme__calc-1: mean() rounds down"
    assert "`mean([1, 2])` is 1, not 1.5." in task.instruction
    assert "use true division" not in task.instruction  # hints are not given
    assert task.spec.tags == ("swebench", "repo:acme/calc", "version:0.1")

    bare = load_task(tmp_path / "swebench-acme__calc-2")
    assert isinstance(bare.spec.judge, PytestJudge)
    assert bare.spec.judge.required == (
        "tests/test_ops.py::test_mean_fraction",
        "tests/test_ops.py::test_add",
    )


def test_one_clone_as_repo_and_a_json_list(swebench_source: SwebenchSource, tmp_path: Path) -> None:
    listed = tmp_path / "instances.json"
    listed.write_text(json.dumps([swebench_source.instance]))
    report = _import(swebench_source, tmp_path / "out", src=listed, repo=swebench_source.clone)
    assert [i.id for i in report.imported] == ["swebench-acme__calc-1"]


def test_environment_packages_from_the_instance(
    swebench_source: SwebenchSource, tmp_path: Path
) -> None:
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(swebench_source.instance | {"python_packages": '["attrs==23.1"]'}))
    report = _import(swebench_source, tmp_path / "out", src=src)
    task = load_task(report.imported[0].path)
    assert task.spec.environment.python_packages == ("attrs==23.1",)


def test_a_test_file_outside_the_patch_is_taken_at_the_base(
    swebench_source: SwebenchSource, tmp_path: Path
) -> None:
    clone = swebench_source.clone
    base = swebench_source.base
    item = swebench_source.instance | {
        "instance_id": "acme__calc-9",
        "test_patch": git(clone, "diff", base, "HEAD", "--", "calc/later.py"),
        "FAIL_TO_PASS": '["tests/test_ops.py::test_add"]',
        "PASS_TO_PASS": "[]",
    }
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(item))
    report = _import(swebench_source, tmp_path / "out", src=src)
    # the test patch adds a non-test file only: it is hidden too, the named test file is at base
    hidden = read_tree(load_task(report.imported[0].path).tests_dir)
    assert set(hidden) == {"calc/later.py", "tests/test_ops.py", "tests/conftest.py"}


def test_repo_is_required(swebench_source: SwebenchSource, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="swebench needs --repo"):
        import_tasks("swebench", swebench_source.jsonl, tmp_path)
