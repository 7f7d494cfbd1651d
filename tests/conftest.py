"""Shared fixtures: a small, valid task written into a temporary directory."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

TASK_TOML = '''\
id = "{id}"
title = "Make add() add"
family = "feature"
difficulty = "trivial"
split = "train"
instruction = """In calc.py, make add(a, b) return a + b."""

[judge]
type = "pytest"
'''

WORKSPACE = {"calc.py": "def add(a, b):\n    raise NotImplementedError\n"}
TESTS = {
    "test_calc.py": textwrap.dedent(
        """\
        from calc import add

        def test_small():
            assert add(2, 3) == 5

        def test_negative():
            assert add(-4, 1) == -3
        """
    )
}
SOLUTION = {"calc.py": "def add(a, b):\n    return a + b\n"}


def write_tree(base: Path, files: dict[str, str]) -> None:
    base.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


MakeTask = Callable[..., Path]


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    """make_task(id=..., toml=..., workspace=..., tests=..., solution=...) -> task dir."""

    def make(
        task_id: str = "feature-add",
        *,
        parent: Path | None = None,
        toml: str | None = None,
        workspace: dict[str, str] | None = None,
        tests: dict[str, str] | None = None,
        solution: dict[str, str] | None = None,
    ) -> Path:
        root = (parent or tmp_path) / task_id
        root.mkdir(parents=True)
        (root / "task.toml").write_text(toml if toml is not None else TASK_TOML.format(id=task_id))
        write_tree(root / "workspace", WORKSPACE if workspace is None else workspace)
        write_tree(root / "tests", TESTS if tests is None else tests)
        write_tree(root / "solution", SOLUTION if solution is None else solution)
        return root

    return make
