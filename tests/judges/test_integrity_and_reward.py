"""Integrity checks and reward aggregation, as pure functions."""

from __future__ import annotations

import pytest

from rollbox.judges import Outcome, OutcomeStatus, Verdict, VerdictStatus
from rollbox.judges.integrity import Finding, allowed, check
from rollbox.judges.reward import RewardConfig, aggregate
from rollbox.tasks import load_task
from tests.conftest import MakeTask

PRISTINE = {
    "calc.py": b"x = 1\n",
    "tests/test_calc.py": b"def test(): pass\n",
    "setup.cfg": b"[metadata]\nname = calc\n",
    "pyproject.toml": b"[project]\nname = 'calc'\n",
}


@pytest.mark.parametrize(
    ("path", "data", "kind"),
    [
        ("conftest.py", b"", "pytest-plugin"),
        ("sub/dir/conftest.py", b"", "pytest-plugin"),
        ("pytest.ini", b"[pytest]\n", "pytest-config"),
        ("tox.ini", b"[pytest]\naddopts = -x\n", "pytest-config"),
        ("setup.cfg", b"[metadata]\n[tool:pytest]\naddopts = --co\n", "pytest-config"),
        ("pyproject.toml", b"[tool.pytest.ini_options]\naddopts = ''\n", "pytest-config"),
        ("sitecustomize.py", b"", "startup-hook"),
        ("usercustomize.py", b"", "startup-hook"),
        ("lib/evil.pth", b"import os\n", "startup-hook"),
        ("pytest.py", b"", "judge-module"),
        ("_pytest/__init__.py", b"", "judge-module"),
        ("pluggy.py", b"", "judge-module"),
        ("rollbox_judge_report.py", b"", "judge-path"),
        (".git/refs/heads/main", b"abc\n", "git"),
        ("tests/test_calc.py", b"def test(): assert True\n", "tests"),
        ("tests/test_calc.py", None, "tests"),
        ("test_calc.py", b"", "tests"),  # the hidden test's name, planted at the root
    ],
)
def test_each_kind_of_tampering_is_found(
    make_task: MakeTask, path: str, data: bytes | None, kind: str
) -> None:
    task = load_task(make_task())
    findings = check(task, {path: data, "calc.py": b"x = 2\n"}, PRISTINE)
    assert [(f.path, f.kind) for f in findings] == [(path, kind)]
    assert allowed({path: data, "calc.py": b"x = 2\n"}, findings) == {"calc.py": b"x = 2\n"}


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("calc.py", b"x = 3\n"),
        ("new_module.py", b""),
        ("setup.cfg", b"[metadata]\nname = calc2\n"),  # no pytest section: fine
        ("pyproject.toml", b"[project]\nname = 'calc2'\n"),
        ("docs/notes.txt", b"hi"),
        ("pkg/test_helpers_data.json", b"{}"),
    ],
)
def test_ordinary_changes_are_not_tampering(make_task: MakeTask, path: str, data: bytes) -> None:
    task = load_task(make_task())
    assert check(task, {path: data}, PRISTINE) == []


def _verdict(
    statuses: list[OutcomeStatus], status: VerdictStatus = VerdictStatus.judged
) -> Verdict:
    outcomes = tuple(Outcome(f"t{i}", s) for i, s in enumerate(statuses))
    return Verdict("t", "v", "pytest", status, outcomes)


P, F = OutcomeStatus.passed, OutcomeStatus.failed


def test_correct_and_clean_is_exactly_one() -> None:
    r = aggregate(_verdict([P, P]), [], {"lint_errors": 0}, partial_credit=False)
    assert r is not None and r.total == pytest.approx(1.0) and r.correctness == 1.0
    assert r.auxiliary == {"lint_clean": pytest.approx(0.05)}


def test_auxiliaries_never_pay_without_correctness() -> None:
    r = aggregate(_verdict([P, F]), [], {"lint_errors": 0}, partial_credit=False)
    assert r is not None and r.total == 0 and r.auxiliary == {}
    r = aggregate(_verdict([P, P]), [], {"lint_errors": 3}, partial_credit=False)
    assert r is not None and r.total == pytest.approx(0.95) and r.auxiliary == {}


def test_partial_credit_only_where_the_task_allows_it() -> None:
    r = aggregate(_verdict([P, P, P, F]), [], {}, partial_credit=True)
    assert r is not None and r.correctness == pytest.approx(0.75 * 0.5)
    assert r.total == pytest.approx(0.75 * 0.5 * 0.95) and r.total < 0.95
    r = aggregate(_verdict([P, P, P, F]), [], {}, partial_credit=False)
    assert r is not None and r.correctness == 0


def test_tampering_zeroes_correctness_and_costs() -> None:
    finding = Finding("conftest.py", "pytest-plugin", "")
    r = aggregate(_verdict([P, P]), [finding], {"lint_errors": 0}, partial_credit=True)
    assert r is not None and r.correctness == 0 and r.total == -0.5
    assert r.tampering == ("conftest.py",) and r.auxiliary == {}
    cfg = RewardConfig(tampering_penalty=0.0)
    assert aggregate(_verdict([P]), [finding], {}, partial_credit=False, config=cfg).total == 0  # type: ignore[union-attr]


def test_no_reward_when_undecided_or_flaky() -> None:
    for status in (VerdictStatus.undecided, VerdictStatus.flaky):
        assert aggregate(_verdict([P], status), [], {}, partial_credit=False) is None
