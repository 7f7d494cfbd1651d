"""Importers: public task collections converted into native task directories.

    import_tasks("humaneval", Path("HumanEval.jsonl.gz"), Path("tasks/humaneval"))

Each source kind maps to one function that yields a `TaskDraft` (or a `Skipped` with its
reason) per item; `run_import` writes the drafts, each loaded and checked by the ordinary loader
before it is moved into place. See docs/importers.md for what maps to what.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from rich.table import Table
from rich.text import Text

from rollbox.errors import ConfigError
from rollbox.tasks.importers.common import (
    Imported,
    ImportOptions,
    ImportReport,
    Skipped,
    TaskDraft,
    run_import,
)
from rollbox.tasks.importers.exercism import exercism_drafts
from rollbox.tasks.importers.humaneval import humaneval_drafts, mbpp_drafts
from rollbox.tasks.importers.swebench import swebench_drafts
from rollbox.tasks.model import Difficulty, Family, Split

Drafts = Callable[[Path, ImportOptions], Iterator[TaskDraft | Skipped]]

SOURCES: dict[str, Drafts] = {
    "exercism": exercism_drafts,
    "humaneval": humaneval_drafts,
    "mbpp": mbpp_drafts,
    "swebench": swebench_drafts,
}


def import_tasks(
    kind: str, src: Path, dest: Path, options: ImportOptions | None = None
) -> ImportReport:
    """Convert the collection at `src` into task directories under `dest`.

    Raises ConfigError for an unknown kind, a missing or malformed source, or a task that
    would overwrite a different one already in `dest`.
    """
    if kind not in SOURCES:
        raise ConfigError(f"unknown source kind {kind!r}: use one of {', '.join(SOURCES)}")
    options = options or ImportOptions()
    return run_import(kind, src, dest, SOURCES[kind](src, options), options)


def parse_options(
    *,
    split: str = "train",
    family: str | None = None,
    difficulty: str | None = None,
    limit: int | None = None,
    repo: Path | None = None,
) -> ImportOptions:
    """Options from command-line strings; ConfigError names the bad one."""
    choices = {"--split": (split, Split), "--family": (family, Family)}
    choices["--difficulty"] = (difficulty, Difficulty)
    for flag, (value, enum) in choices.items():
        if value is not None and value not in enum.__members__:
            raise ConfigError(
                f"{flag} must be one of {', '.join(enum.__members__)} (got {value!r})"
            )
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1 (got {limit})")
    return ImportOptions(
        split=Split(split),
        family=Family(family) if family else None,
        difficulty=Difficulty(difficulty) if difficulty else None,
        limit=limit,
        repo=repo,
    )


def report_table(report: ImportReport) -> Table:
    """The report as a table: one row per imported task, then one per skipped item."""
    table = Table(title=f"import {report.kind}: {report.source}", title_justify="left")
    for col in ("item", "task", "status"):
        table.add_column(col, no_wrap=True)
    table.add_column("reason", overflow="fold")
    for i in report.imported:
        colour = "green" if i.status == "new" else "dim"
        table.add_row(Text(i.source_id), Text(i.id), Text(i.status, style=colour), "")
    for s in report.skipped:
        table.add_row(Text(s.source_id), "", Text("skipped", style="yellow"), Text(s.reason))
    return table


__all__ = [
    "SOURCES",
    "ImportOptions",
    "ImportReport",
    "Imported",
    "Skipped",
    "TaskDraft",
    "import_tasks",
    "parse_options",
    "report_table",
]
