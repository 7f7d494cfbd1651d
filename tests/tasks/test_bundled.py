"""The bundled task set: big enough, spread out, and every task really checked."""

from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest

from rollbox.judges import check_reference
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import Task, load_tasks, read_tree

SANDBOXES = Factory(BwrapConfig())

BUNDLED = load_tasks("bundled")


def test_the_bundled_set_loads_without_errors() -> None:
    assert not BUNDLED.errors, [str(e) for e in BUNDLED.errors]


def test_at_least_sixty_tasks_over_five_families_and_both_splits() -> None:
    assert len(BUNDLED) >= 60
    families = Counter(str(t.family) for t in BUNDLED)
    assert set(families) == {"bugfix", "feature", "data", "ops", "docs"}
    assert min(families.values()) >= 10, families
    for family in families:
        splits = {str(t.split) for t in BUNDLED.filter(family=family)}
        assert splits == {"train", "eval"}, family


def test_difficulty_spreads_from_trivial_to_hard() -> None:
    counts = Counter(str(t.difficulty) for t in BUNDLED)
    assert set(counts) == {"trivial", "easy", "medium", "hard"}
    assert counts["trivial"] >= 6 and counts["hard"] >= 6, counts


def test_judges_match_families() -> None:
    expected = {
        "bugfix": "pytest",
        "feature": "pytest",
        "data": "output",
        "ops": "command",
        "docs": "document",
    }
    for t in BUNDLED:
        assert t.spec.judge.type == expected[str(t.family)], t.id


def _text(task: Task) -> str:
    parts = [
        task.instruction,
        *(d.decode("utf-8", "replace") for d in read_tree(task.workspace_dir).values()),
    ]
    return " ".join(parts).lower()


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_]+", text)
    return {tuple(words[i : i + k]) for i in range(max(len(words) - k + 1, 1))}


def test_no_near_duplicates_across_splits() -> None:
    """Train and eval share no task whose instruction and workspace nearly coincide."""
    sh = {t.id: _shingles(_text(t)) for t in BUNDLED}
    train = [t.id for t in BUNDLED.filter(split="train")]
    evals = [t.id for t in BUNDLED.filter(split="eval")]
    worst = []
    for a, b in itertools.product(train, evals):
        jac = len(sh[a] & sh[b]) / max(len(sh[a] | sh[b]), 1)
        worst.append((jac, a, b))
    worst.sort(reverse=True)
    assert worst[0][0] < 0.5, worst[:3]


def test_hidden_tests_differ_from_visible_tests() -> None:
    for t in BUNDLED:
        if t.visible_tests_dir is not None:
            hidden = set(read_tree(t.tests_dir).values())
            assert not hidden & set(read_tree(t.visible_tests_dir).values()), t.id


@pytest.mark.slow
@pytest.mark.parametrize("task", BUNDLED.tasks, ids=[t.id for t in BUNDLED])
async def test_start_fails_and_reference_passes(task: Task) -> None:
    """Really runs the hidden checks, on the starting workspace and on the reference."""
    check = await check_reference(task, SANDBOXES)
    assert check.ok, check.problems
