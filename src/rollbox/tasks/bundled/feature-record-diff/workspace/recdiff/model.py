"""Change types produced by diff_records, and helpers to report them."""

from dataclasses import dataclass
from typing import Any


class _Missing:
    """Sentinel for a field that a record does not have."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class DiffError(ValueError):
    """Raised when an input is not a valid key-sorted record sequence."""


@dataclass(frozen=True)
class Added:
    key: Any
    record: dict


@dataclass(frozen=True)
class Removed:
    key: Any
    record: dict


@dataclass(frozen=True)
class Modified:
    key: Any
    fields: dict  # field name -> (old value, new value); MISSING for an absent side


def summarize(changes) -> dict:
    """Count changes by kind: {"added": n, "removed": n, "modified": n}."""
    counts = {"added": 0, "removed": 0, "modified": 0}
    for change in changes:
        if isinstance(change, Added):
            counts["added"] += 1
        elif isinstance(change, Removed):
            counts["removed"] += 1
        elif isinstance(change, Modified):
            counts["modified"] += 1
        else:
            raise TypeError(f"not a change: {change!r}")
    return counts


def format_change(change) -> str:
    """One human-readable line per change, for the sync log."""
    if isinstance(change, Added):
        return f"+ {change.key!r}"
    if isinstance(change, Removed):
        return f"- {change.key!r}"
    details = ", ".join(f"{name}: {old!r} -> {new!r}" for name, (old, new) in sorted(change.fields.items()))
    return f"~ {change.key!r} ({details})"
