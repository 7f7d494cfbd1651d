"""Git history in a task's workspace must hold nothing newer than the checked-out base.

A policy that can read `git log --all`, a tag, a reflog entry, a remote or a dangling commit can
read the fix instead of writing it. This finds each of those in a workspace's `.git`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rollbox.errors import TaskError

_SAFE = ["-c", "core.fsmonitor=false", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null"]


def _git(workspace: Path, *args: str) -> list[str]:
    res = subprocess.run(
        ["git", *_SAFE, "-C", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"},
    )
    if res.returncode != 0:
        raise TaskError(f"git {' '.join(args)} failed in {workspace}: {res.stderr.strip()}")
    return [line for line in res.stdout.splitlines() if line.strip()]


def git_leaks(workspace: Path) -> list[str]:
    """Everything in the workspace's git metadata beyond its checked-out commit."""
    if not (workspace / ".git").exists():
        return []
    problems: list[str] = []
    head = _git(workspace, "rev-parse", "HEAD")[0]
    branch = (
        _git(workspace, "symbolic-ref", "-q", "--short", "HEAD") if _has_branch(workspace) else []
    )
    for ref in _git(workspace, "for-each-ref", "--format=%(refname)"):
        if branch and ref == f"refs/heads/{branch[0]}":
            continue
        problems.append(f"ref {ref}")
    problems += [f"remote {r}" for r in _git(workspace, "remote")]
    past = set(_git(workspace, "rev-list", "HEAD"))
    reachable = set(_git(workspace, "rev-list", "--all", "--reflog"))
    problems += [f"commit {c[:12]} (in a ref or reflog) is not in HEAD's history"
                 for c in sorted(reachable - past)]  # fmt: skip
    dangling = _git(workspace, "fsck", "--unreachable", "--no-reflogs", "--no-progress")
    problems += [f"unreachable {line}" for line in dangling if " commit " in f" {line} "]
    stash = _git(workspace, "stash", "list") if head else []
    problems += [f"stash {s}" for s in stash]
    return problems


def _has_branch(workspace: Path) -> bool:
    res = subprocess.run(
        ["git", *_SAFE, "-C", str(workspace), "symbolic-ref", "-q", "HEAD"],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"},
    )
    return res.returncode == 0
