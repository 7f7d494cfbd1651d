"""Streaming diff of two record sequences sorted by a key field."""

from recdiff.model import MISSING, Added, DiffError, Modified, Removed


def diff_records(old, new, key="id", ignore=()):
    """Compare two key-sorted record iterables; return Added/Removed/Modified changes."""
    raise NotImplementedError
