"""Which rooms are busy, when they are free, and which bookings clash."""

from dataclasses import dataclass
from datetime import timedelta

from booking.intervals import gaps, merge, overlaps
from booking.timeparse import format_utc, to_utc


@dataclass(frozen=True)
class Booking:
    id: str
    room: str
    start: str  # ISO-8601, as entered in the booking office
    end: str

    def interval(self):
        start, end = to_utc(self.start), to_utc(self.end)
        if end <= start:
            raise ValueError(f"booking {self.id} ends before it starts")
        return start, end


def busy(bookings, room):
    """Merged busy intervals of ``room`` as ``(start, end)`` pairs of ``YYYY-MM-DDTHH:MMZ``."""
    spans = merge(b.interval() for b in bookings if b.room == room)
    return [(format_utc(s), format_utc(e)) for s, e in spans]


def free_slots(bookings, room, window_start, window_end, min_minutes=0):
    """Free periods of ``room`` within the window, at least ``min_minutes`` long, in UTC."""
    start, end = to_utc(window_start), to_utc(window_end)
    spans = [b.interval() for b in bookings if b.room == room]
    minimum = timedelta(minutes=min_minutes)
    return [
        (format_utc(s), format_utc(e)) for s, e in gaps(spans, start, end) if e - s >= minimum
    ]


def conflicts(bookings):
    """Sorted ``(id, id)`` pairs (smaller id first) of overlapping bookings of one room."""
    found = []
    items = [(b, b.interval()) for b in bookings]
    for i, (a, span_a) in enumerate(items):
        for b, span_b in items[i + 1:]:
            if a.room == b.room and overlaps(span_a, span_b):
                found.append(tuple(sorted((a.id, b.id))))
    return sorted(found)
