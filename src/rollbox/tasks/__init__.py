"""Tasks: the format, loading, and the bundled task set."""

from rollbox.tasks.loader import (
    BUNDLED,
    bundled_dir,
    load_task,
    load_tasks,
    materialize,
    read_tree,
    reference_changes,
    resolve_tasks_dir,
)
from rollbox.tasks.model import Difficulty, Family, Split, Task, TaskSpec
from rollbox.tasks.taskset import TaskSet

__all__ = [
    "BUNDLED",
    "Difficulty",
    "Family",
    "Split",
    "Task",
    "TaskSet",
    "TaskSpec",
    "bundled_dir",
    "load_task",
    "load_tasks",
    "materialize",
    "read_tree",
    "reference_changes",
    "resolve_tasks_dir",
]
