"""Booking calendar primitives."""

from booking.models import Slot
from booking.schedule import free_slots, merge_slots

__all__ = ["Slot", "free_slots", "merge_slots"]
