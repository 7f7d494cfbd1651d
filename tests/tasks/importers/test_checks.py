"""Every task imported from the fixtures, judged in real bwrap sandboxes: its start fails and its
reference passes; and what a candidate cannot get away with."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollbox.judges import check_reference, judge_changes
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import Task, load_task
from rollbox.tasks.importers import ImportOptions, import_tasks
from tests.tasks.importers.conftest import FIXTURES, SwebenchSource

pytestmark = pytest.mark.slow

SANDBOXES = Factory(BwrapConfig())

SOURCES = {
    "exercism": FIXTURES / "exercism-track",
    "humaneval": FIXTURES / "humaneval.jsonl",
    "mbpp": FIXTURES / "mbpp.jsonl",
}


def _imported(kind: str, src: Path, dest: Path, options: ImportOptions | None = None) -> list[Task]:
    report = import_tasks(kind, src, dest, options)
    assert report.imported
    return [load_task(i.path) for i in report.imported]


async def _all_check(tasks: list[Task]) -> None:
    problems = {}
    for task in tasks:  # one at a time: that is quicker than at once on a small machine
        result = await check_reference(task, SANDBOXES)
        if not result.ok:
            problems[task.id] = result.problems
    assert not problems, problems


@pytest.mark.parametrize("kind", sorted(SOURCES))
async def test_imported_tasks_fail_at_the_start_and_pass_with_the_reference(
    kind: str, tmp_path: Path
) -> None:
    await _all_check(_imported(kind, SOURCES[kind], tmp_path))


async def test_swebench_task_checks_and_keeps_pass_to_pass_passing(
    swebench_source: SwebenchSource, tmp_path: Path
) -> None:
    tasks = _imported(
        "swebench", swebench_source.jsonl, tmp_path, ImportOptions(repo=swebench_source.repos)
    )
    task = tasks[0]
    result = await check_reference(task, SANDBOXES)
    assert result.ok, result.problems
    start = {o.name: o.passed for o in result.start.outcomes}
    assert start == {
        "tests/test_ops.py::test_mean_fraction": False,
        "tests/test_ops.py::test_add": True,
        "tests/test_ops.py::test_mean_of_equal": True,
    }


async def test_humaneval_check_uses_the_benchmarks_helpers_not_the_candidates(
    tmp_path: Path,
) -> None:
    task = _imported("humaneval", SOURCES["humaneval"], tmp_path)[1]
    assert task.id == "humaneval-1"
    # identity both ways: it passes only if the check used the candidate's rotate()
    cheat = "def rotate(s, k):\n    return s\n\n\ndef unrotate(s, k):\n    return s\n"
    verdict = (await judge_changes(task, {"solution.py": cheat.encode()}, SANDBOXES)).verdict
    assert verdict.decided and not verdict.passed


async def test_swebench_candidate_cannot_pass_by_editing_the_workspace_tests(
    swebench_source: SwebenchSource, tmp_path: Path
) -> None:
    task = _imported(
        "swebench", swebench_source.jsonl, tmp_path, ImportOptions(repo=swebench_source.repos)
    )[0]
    fake = b"def test_mean_fraction():\n    pass\n"
    result = await judge_changes(task, {"tests/test_ops.py": fake}, SANDBOXES)
    assert not result.verdict.passed
    assert [f.kind for f in result.findings] == ["tests"]
