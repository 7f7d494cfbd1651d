"""Git history newer than a task's base is found, in every form it can take."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rollbox.errors import TaskError
from rollbox.judges import judge_changes
from rollbox.judges.history import git_leaks
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_task
from tests.conftest import MakeTask


def git(ws: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws.parent), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def repo(tmp_path: Path) -> tuple[Path, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "calc.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "base")
    return ws, git(ws, "rev-parse", "HEAD")


def future(ws: Path) -> str:
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(ws, "commit", "-q", "-am", "the fix")
    return git(ws, "rev-parse", "HEAD")


def test_a_clean_base_has_no_leaks(tmp_path: Path) -> None:
    ws, _ = repo(tmp_path)
    assert git_leaks(ws) == []
    assert git_leaks(tmp_path) == [], "no .git: nothing to leak"


@pytest.mark.parametrize("how", ["branch", "tag", "reflog", "dangling", "remote", "stash"])
def test_each_way_of_keeping_the_future_is_found(tmp_path: Path, how: str) -> None:
    ws, base = repo(tmp_path)
    if how == "branch":
        git(ws, "checkout", "-q", "-b", "fix")
        future(ws)
        git(ws, "checkout", "-q", "main")
    elif how == "tag":
        future(ws)
        git(ws, "tag", "v2")
        git(ws, "reset", "-q", "--hard", base)
    elif how in ("reflog", "dangling"):
        future(ws)
        git(ws, "reset", "-q", "--hard", base)
        if how == "dangling":
            git(ws, "reflog", "expire", "--expire=now", "--all")
    elif how == "remote":
        git(ws, "remote", "add", "origin", "https://example.invalid/repo.git")
    elif how == "stash":
        (ws / "calc.py").write_text("def add(a, b):\n    return a + b  # stashed\n")
        git(ws, "stash", "-q")
    leaks = git_leaks(ws)
    assert leaks, how
    assert git(ws, "rev-parse", "HEAD") == base


async def test_the_judge_refuses_a_task_whose_workspace_leaks(
    make_task: MakeTask, tmp_path: Path
) -> None:
    root = make_task()
    ws = root / "workspace"
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "base")
    base = git(ws, "rev-parse", "HEAD")
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(ws, "commit", "-q", "-am", "fix")
    git(ws, "tag", "answer")
    git(ws, "reset", "-q", "--hard", base)
    task = load_task(root)
    with pytest.raises(TaskError, match="git history"):
        await judge_changes(task, {}, Factory(BwrapConfig()))
