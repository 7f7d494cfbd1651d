"""Meeting-room availability across offices in different time zones."""

from booking.availability import Booking, busy, conflicts, free_slots
from booking.timeparse import format_utc, to_utc

__all__ = ["Booking", "busy", "conflicts", "format_utc", "free_slots", "to_utc"]
