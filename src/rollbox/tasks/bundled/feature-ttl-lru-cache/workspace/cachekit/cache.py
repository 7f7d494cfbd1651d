"""Least-recently-used cache whose entries expire after a fixed time to live."""

from cachekit.clock import MonotonicClock


class TTLCache:
    """LRU cache with per-entry expiry measured by an injected clock."""

    def __init__(self, capacity, ttl, clock=None):
        raise NotImplementedError

    def put(self, key, value):
        """Store value under key; its lifetime starts now."""
        raise NotImplementedError

    def get(self, key, default=None):
        """Return the live value for key (counts a hit) or default (counts a miss)."""
        raise NotImplementedError

    def peek(self, key, default=None):
        """Like get, without touching recency or statistics."""
        raise NotImplementedError

    def delete(self, key):
        """Remove key; True if it was present and live."""
        raise NotImplementedError

    def __contains__(self, key):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def keys(self):
        """Live keys, least recently used first."""
        raise NotImplementedError

    def stats(self):
        """{"hits": ..., "misses": ..., "evictions": ...}"""
        raise NotImplementedError
