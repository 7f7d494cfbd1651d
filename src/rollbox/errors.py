"""Errors, named by the boundary they cross, under one base.

    RollboxError
    ├── ConfigError            a bad option or configuration given by the user
    ├── TaskError              a task that cannot be loaded or used
    │   └── TaskFormatError    a malformed task directory (names the file and the problem)
    ├── SandboxError           the execution environment failed (infrastructure, not the policy)
    ├── JudgeError             a judge could not decide (never scored as the policy's failure)
    ├── PolicyError            the policy could not act (model or endpoint failure)
    │   └── ContextLengthError the conversation no longer fits the policy's context
    └── StoreError             a run directory that cannot be used (corrupt, newer, busy)
        └── DuplicateEpisodeError  an episode the run already holds

The CLI translates every RollboxError into one clear line and a non-zero exit; anything else is
a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class RollboxError(Exception):
    """Base of every error rollbox raises on purpose."""


class ConfigError(RollboxError, ValueError):
    """A bad option or configuration given by the user."""


class TaskError(RollboxError):
    """A task that cannot be loaded or used."""


class TaskFormatError(TaskError, ValueError):
    """A malformed task directory: names the file at fault and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class SandboxError(RollboxError):
    """The execution environment failed: infrastructure, not the policy."""


class JudgeError(RollboxError):
    """A judge could not decide; never to be scored as the policy's failure."""


class PolicyError(RollboxError):
    """The policy could not act."""


class ContextLengthError(PolicyError):
    """The prompt (plus the tokens asked for) does not fit the policy's context window."""


class StoreError(RollboxError):
    """The run directory cannot be used as it is: corrupt, newer than this rollbox, or busy."""


class DuplicateEpisodeError(StoreError, ValueError):
    """`add()` of an episode_id the run already holds."""
