"""Calendar operations on lists of slots."""

from typing import Iterable

from booking.models import Slot


def merge_slots(slots: Iterable[Slot], gap: int = 0) -> list[Slot]:
    """Merge overlapping slots, and slots separated by at most `gap` minutes."""
    raise NotImplementedError


def free_slots(busy: Iterable[Slot], window: Slot) -> list[Slot]:
    """Return the parts of `window` not covered by any slot in `busy`."""
    raise NotImplementedError
