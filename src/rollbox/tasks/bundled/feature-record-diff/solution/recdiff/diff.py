"""Streaming diff of two record sequences sorted by a key field."""

from recdiff.model import MISSING, Added, DiffError, Modified, Removed

_END = object()


def _less(a, b) -> bool:
    try:
        return a < b
    except TypeError:
        raise DiffError(f"keys {a!r} and {b!r} cannot be compared") from None


def _checked(records, key, label):
    """Yield (key value, record), checking that keys exist and strictly ascend."""
    previous = _END
    for record in records:
        try:
            value = record[key]
        except (KeyError, TypeError):
            raise DiffError(f"{label} record without key field {key!r}: {record!r}") from None
        if previous is not _END and not _less(previous, value):
            raise DiffError(f"{label} keys not strictly ascending at {value!r}")
        previous = value
        yield value, record


def _compare(old_record, new_record, key, ignore):
    fields = {}
    names = sorted(set(old_record) | set(new_record), key=str)
    for name in names:
        if name == key or name in ignore:
            continue
        a = old_record.get(name, MISSING)
        b = new_record.get(name, MISSING)
        if a is MISSING or b is MISSING or a != b:
            fields[name] = (a, b)
    return fields


def diff_records(old, new, key="id", ignore=()):
    """Compare two key-sorted record iterables; return Added/Removed/Modified changes."""
    ignore = frozenset(ignore)
    old_it = _checked(old, key, "old")
    new_it = _checked(new, key, "new")
    a = next(old_it, _END)
    b = next(new_it, _END)
    changes = []
    while a is not _END or b is not _END:
        if b is _END or (a is not _END and _less(a[0], b[0])):
            changes.append(Removed(a[0], a[1]))
            a = next(old_it, _END)
        elif a is _END or _less(b[0], a[0]):
            changes.append(Added(b[0], b[1]))
            b = next(new_it, _END)
        else:
            fields = _compare(a[1], b[1], key, ignore)
            if fields:
                changes.append(Modified(a[0], fields))
            a = next(old_it, _END)
            b = next(new_it, _END)
    return changes
