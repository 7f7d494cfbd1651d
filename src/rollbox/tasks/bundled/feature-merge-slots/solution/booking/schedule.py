"""Calendar operations on lists of slots."""

from typing import Iterable

from booking.models import Slot


def merge_slots(slots: Iterable[Slot], gap: int = 0) -> list[Slot]:
    """Merge overlapping slots, and slots separated by at most `gap` minutes."""
    if gap < 0:
        raise ValueError("gap must not be negative")
    merged: list[tuple[int, int]] = []
    for slot in sorted(slots, key=lambda s: (s.start, s.end)):
        if merged and slot.start - merged[-1][1] <= gap:
            start, end = merged[-1]
            merged[-1] = (start, max(end, slot.end))
        else:
            merged.append((slot.start, slot.end))
    return [Slot(start, end) for start, end in merged]


def free_slots(busy: Iterable[Slot], window: Slot) -> list[Slot]:
    """Return the parts of `window` not covered by any slot in `busy`."""
    free = []
    cursor = window.start
    for slot in merge_slots(busy):
        if slot.end <= cursor:
            continue
        if slot.start >= window.end:
            break
        if slot.start > cursor:
            free.append(Slot(cursor, slot.start))
        cursor = max(cursor, slot.end)
        if cursor >= window.end:
            break
    if cursor < window.end:
        free.append(Slot(cursor, window.end))
    return free
