"""Least-recently-used cache whose entries expire after a fixed time to live."""

from collections import OrderedDict

from cachekit.clock import MonotonicClock

_MISSING = object()


class TTLCache:
    """LRU cache with per-entry expiry measured by an injected clock."""

    def __init__(self, capacity, ttl, clock=None):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError("capacity must be an int >= 1")
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
            raise ValueError("ttl must be a number > 0")
        self._capacity = capacity
        self._ttl = ttl
        self._clock = clock if clock is not None else MonotonicClock()
        # key -> (expires_at, value); order: least recently used first
        self._entries = OrderedDict()
        self._hits = 0
        self._misses = 0
        self._evictions = 0

    def _live(self, key, now):
        """Return the entry for key if live; drop it if expired."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if now >= entry[0]:
            del self._entries[key]
            return None
        return entry

    def _purge(self, now):
        for key in [k for k, (expires, _) in self._entries.items() if now >= expires]:
            del self._entries[key]

    def put(self, key, value):
        """Store value under key; its lifetime starts now."""
        now = self._clock.now()
        if self._live(key, now) is None and len(self._entries) >= self._capacity:
            self._purge(now)
            if len(self._entries) >= self._capacity:
                self._entries.popitem(last=False)
                self._evictions += 1
        self._entries[key] = (now + self._ttl, value)
        self._entries.move_to_end(key)

    def get(self, key, default=None):
        """Return the live value for key (counts a hit) or default (counts a miss)."""
        entry = self._live(key, self._clock.now())
        if entry is None:
            self._misses += 1
            return default
        self._hits += 1
        self._entries.move_to_end(key)
        return entry[1]

    def peek(self, key, default=None):
        """Like get, without touching recency or statistics."""
        entry = self._live(key, self._clock.now())
        return default if entry is None else entry[1]

    def delete(self, key):
        """Remove key; True if it was present and live."""
        if self._live(key, self._clock.now()) is None:
            return False
        del self._entries[key]
        return True

    def __contains__(self, key):
        return self._live(key, self._clock.now()) is not None

    def __len__(self):
        self._purge(self._clock.now())
        return len(self._entries)

    def keys(self):
        """Live keys, least recently used first."""
        self._purge(self._clock.now())
        return list(self._entries)

    def stats(self):
        """{"hits": ..., "misses": ..., "evictions": ...}"""
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}
