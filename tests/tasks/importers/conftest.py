"""Fixtures for the importers: the source collections under fixtures/ (Exercism test files among
them, so pytest must not collect that directory) and a small SWE-bench source built with git."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

collect_ignore = ["fixtures"]

FIXTURES = Path(__file__).parent / "fixtures"
LATER_MARKER = "ROLLBOX_LATER_COMMIT_MARKER"

_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "rollbox",
    "GIT_AUTHOR_EMAIL": "rollbox@example.invalid",
    "GIT_COMMITTER_NAME": "rollbox",
    "GIT_COMMITTER_EMAIL": "rollbox@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git(repo: Path, *args: str) -> str:
    res = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=_GIT_ENV,
        check=True,
    )
    return res.stdout


def write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


BASE_FILES = {
    "README.md": "# calc\n\nA tiny package with a bug.\n",
    "calc/__init__.py": "from calc.ops import add, mean\n",
    "calc/ops.py": """\
        def add(a, b):
            return a + b


        def mean(xs):
            return sum(xs) // len(xs)
        """,
    "tests/conftest.py": """\
        import pytest


        @pytest.fixture
        def numbers():
            return [1, 2]
        """,
    "tests/test_ops.py": """\
        from calc import add, mean


        def test_add():
            assert add(2, 3) == 5


        def test_mean_of_equal(numbers):
            assert mean([2, 2]) == 2
        """,
}
FIX_FILES = {
    "calc/ops.py": """\
        def add(a, b):
            return a + b


        def mean(xs):
            return sum(xs) / len(xs)
        """,
    "tests/test_ops.py": """\
        from calc import add, mean


        def test_add():
            assert add(2, 3) == 5


        def test_mean_of_equal(numbers):
            assert mean([2, 2]) == 2


        def test_mean_fraction(numbers):
            assert mean(numbers) == 1.5
        """,
}
LATER_FILES = {"calc/later.py": f"SECRET = {LATER_MARKER!r}\n"}


@dataclass(frozen=True)
class SwebenchSource:
    jsonl: Path
    repos: Path  # a directory of clones, named owner__name
    clone: Path
    base: str
    instance: dict[str, object]


def make_swebench_source(root: Path) -> SwebenchSource:
    """A clone of `acme/calc` (base commit with a bug, the fix, a later commit, HEAD at the
    latest) and a JSONL of instances: two good ones and four that must be skipped."""
    repos = root / "repos"
    clone = repos / "acme__calc"
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    write(clone, BASE_FILES)
    (clone / "docs").mkdir()
    (clone / "docs" / "README.md").symlink_to("../README.md")
    (clone / "docs" / "dangling.md").symlink_to("../nowhere.md")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "base: mean() rounds down")
    base = git(clone, "rev-parse", "HEAD").strip()
    write(clone, FIX_FILES)
    git(clone, "commit", "-qam", "fix mean()")
    fix = git(clone, "rev-parse", "HEAD").strip()
    write(clone, LATER_FILES)
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "a later commit that must not leak")
    git(clone, "tag", "v9", "HEAD")
    gold = git(clone, "diff", base, fix, "--", "calc")
    test_patch = git(clone, "diff", base, fix, "--", "tests")
    good: dict[str, object] = {
        "repo": "acme/calc",
        "instance_id": "acme__calc-1",
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "problem_statement": "### mean() rounds down\n\n`mean([1, 2])` is 1, not 1.5.\n",
        "hints_text": "use true division",
        "created_at": "2024-01-01T00:00:00Z",
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps(["tests/test_ops.py::test_mean_fraction"]),
        "PASS_TO_PASS": json.dumps(
            ["tests/test_ops.py::test_add", "tests/test_ops.py::test_mean_of_equal"]
        ),
        "environment_setup_commit": base,
    }
    instances = [
        good,
        # sympy style: bare test names, and lists rather than JSON-encoded lists
        good
        | {
            "instance_id": "acme__calc-2",
            "FAIL_TO_PASS": ["test_mean_fraction"],
            "PASS_TO_PASS": ["test_add"],
        },
        good | {"instance_id": "other__missing-1", "repo": "other/missing"},
        good | {"instance_id": "acme__calc-3", "base_commit": "0123456789abcdef" * 2 + "01234567"},
        good | {"instance_id": "acme__calc-4", "patch": gold.replace("// len", "%% len")},
        good | {"instance_id": "acme__calc-5", "FAIL_TO_PASS": '["test_mean (calc.tests.T)"]'},
    ]
    jsonl = root / "swebench.jsonl"
    jsonl.write_text("".join(json.dumps(i) + "\n" for i in instances))
    return SwebenchSource(jsonl, repos, clone, base, good)


@pytest.fixture(scope="session")
def swebench_source(tmp_path_factory: pytest.TempPathFactory) -> SwebenchSource:
    return make_swebench_source(tmp_path_factory.mktemp("swebench"))
