"""A task set: a thin, immutable view over loaded tasks."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rollbox.errors import TaskFormatError
    from rollbox.tasks.model import Task


@dataclass(frozen=True)
class TaskSet(Sequence["Task"]):
    """Tasks in a stable order, with the errors of the tasks that failed to load."""

    tasks: tuple[Task, ...]
    errors: tuple[TaskFormatError, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self.tasks[i]

    def get(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def _view(self, tasks: Sequence[Task]) -> TaskSet:
        return TaskSet(tuple(tasks), self.errors)

    def filter(
        self,
        *,
        split: str | None = None,
        family: str | None = None,
        difficulty: str | None = None,
    ) -> TaskSet:
        """The tasks that match every criterion given."""
        return self._view(
            [
                t
                for t in self.tasks
                if (split is None or t.split == split)
                and (family is None or t.family == family)
                and (difficulty is None or t.difficulty == difficulty)
            ]
        )

    def head(self, n: int) -> TaskSet:
        return self._view(self.tasks[:n])

    def shuffle(self, seed: int) -> TaskSet:
        order = list(self.tasks)
        random.Random(seed).shuffle(order)
        return self._view(order)
