"""A small in-process cache with time-based expiry."""

from cachekit.cache import TTLCache
from cachekit.clock import ManualClock, MonotonicClock

__all__ = ["ManualClock", "MonotonicClock", "TTLCache"]
