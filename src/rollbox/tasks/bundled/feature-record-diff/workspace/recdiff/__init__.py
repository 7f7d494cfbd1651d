"""Diffing of key-sorted record exports."""

from recdiff.diff import diff_records
from recdiff.model import MISSING, Added, DiffError, Modified, Removed, format_change, summarize

__all__ = [
    "MISSING",
    "Added",
    "DiffError",
    "Modified",
    "Removed",
    "diff_records",
    "format_change",
    "summarize",
]
