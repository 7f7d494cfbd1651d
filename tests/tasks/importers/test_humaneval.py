"""The HumanEval and MBPP importers on small files in the benchmarks' own layouts."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from rollbox.tasks import load_task, read_tree
from rollbox.tasks.importers import import_tasks
from tests.tasks.importers.conftest import FIXTURES

HUMANEVAL = FIXTURES / "humaneval.jsonl"
MBPP = FIXTURES / "mbpp.jsonl"


def _problems(path: Path) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {str(r["task_id"]): r for r in rows}


def _body(source: str, name: str) -> list[ast.stmt]:
    fn = next(
        n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name
    )
    return fn.body


def test_humaneval_ids_and_skips(tmp_path: Path) -> None:
    report = import_tasks("humaneval", HUMANEVAL, tmp_path)
    assert [i.id for i in report.imported] == ["humaneval-0", "humaneval-1", "humaneval-2"]
    assert [(s.source_id, s.reason) for s in report.skipped] == [
        (
            "HumanEval/3",
            "the reference (prompt + canonical_solution) does not parse (line 6: invalid syntax)",
        ),
        ("HumanEval/4", "missing field(s): entry_point"),
    ]
    for i in report.imported:
        load_task(i.path)


def test_humaneval_gzip_gives_the_same_tasks(tmp_path: Path) -> None:
    packed = tmp_path / "HumanEval.jsonl.gz"
    packed.write_bytes(gzip.compress(HUMANEVAL.read_bytes()))
    plain = import_tasks("humaneval", HUMANEVAL, tmp_path / "a")
    gz = import_tasks("humaneval", packed, tmp_path / "b")
    assert [(i.id, i.version) for i in gz.imported] == [(i.id, i.version) for i in plain.imported]


def test_humaneval_workspace_keeps_the_prompt_and_stubs_the_entry_point(tmp_path: Path) -> None:
    import_tasks("humaneval", HUMANEVAL, tmp_path)
    problem = _problems(HUMANEVAL)["HumanEval/1"]
    task = load_task(tmp_path / "humaneval-1")
    stub = read_tree(task.workspace_dir)["solution.py"].decode()
    assert stub.startswith(str(problem["prompt"]).rstrip())
    body = _body(stub, "unrotate")
    assert len(body) == 2 and ast.unparse(body[1]) == "raise NotImplementedError"
    assert len(_body(stub, "rotate")) == 2  # the prompt's helper keeps its own body
    reference = read_tree(task.solution_dir)["solution.py"].decode()
    assert reference == str(problem["prompt"]) + str(problem["canonical_solution"])
    hidden = read_tree(task.tests_dir)["test_solution.py"].decode()
    assert "def check(candidate)" in hidden and "METADATA" in hidden
    assert "check(unrotate)" in hidden
    # the benchmark's helper comes from the pristine prompt, not from the candidate's module
    assert "from solution import unrotate" in hidden and "def rotate(" in hidden
    assert "```python\ndef rotate(" in task.instruction


def test_mbpp_ids_skips_and_layout(tmp_path: Path) -> None:
    report = import_tasks("mbpp", MBPP, tmp_path)
    assert [i.id for i in report.imported] == [
        "mbpp-11",
        "mbpp-12",
        "mbpp-13",
        "mbpp-16",
        "mbpp-17",
    ]
    reasons = {s.source_id: s.reason for s in report.skipped}
    assert reasons["MBPP/14"].startswith("the reference code does not parse (line 2:")
    assert reasons["MBPP/15"] == "the tests call no function that the reference code defines"

    task = load_task(tmp_path / "mbpp-11")
    stub = read_tree(task.workspace_dir)["solution.py"].decode()
    assert stub == "def remove_Vowels(s):\n    raise NotImplementedError\n"
    assert "def remove_Vowels(s):" in task.instruction
    assert 'assert remove_Vowels("hello") == "hll"' in task.instruction  # the first test, shown
    hidden = read_tree(task.tests_dir)["test_solution.py"].decode()
    tests = [n.name for n in ast.parse(hidden).body if isinstance(n, ast.FunctionDef)]
    assert tests == ["test_1", "test_2", "test_3"]  # every assert is a hidden test
    assert "\r" not in read_tree(task.solution_dir)["solution.py"].decode()

    circle = load_task(tmp_path / "mbpp-12")
    stub = read_tree(circle.workspace_dir)["solution.py"].decode()
    assert stub.startswith("import math\n") and "PLACES" not in stub  # imports kept, not the rest
    hidden = read_tree(circle.tests_dir)["test_solution.py"].decode()
    assert "def test_challenge_1():" in hidden

    setup = read_tree(load_task(tmp_path / "mbpp-13").tests_dir)["test_solution.py"].decode()
    assert "data = [3, 1, 2]" in setup

    sanitized = load_task(tmp_path / "mbpp-16")  # the sanitized layout: prompt, test_imports
    assert sanitized.instruction.startswith("Write a function to compute the hypotenuse")

    pairs = load_task(tmp_path / "mbpp-17")
    stub = read_tree(pairs.workspace_dir)["solution.py"].decode()
    assert "class Pair(object):" in stub and "self.a = a" in stub  # the interface, whole
    assert len(_body(stub, "max_chain_length")) == 1
    assert "`Pair`, which the tests use" in pairs.instruction


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"test_list": []}, "no tests in 'test_list'"),
        ({"test_list": "assert f(1) == 1"}, "field 'test_list' is not a list of strings"),
        ({"test_setup_code": "x ="}, "test_setup_code does not parse"),
        ({"text": None, "prompt": None}, "missing field(s): text (or prompt)"),
    ],
)
def test_mbpp_bad_items_are_skipped(tmp_path: Path, change: dict[str, object], reason: str) -> None:
    item = _problems(MBPP)["11"] | change
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(item) + "\n")
    report = import_tasks("mbpp", src, tmp_path / "out")
    assert report.imported == ()
    assert report.skipped[0].reason.startswith(reason)
