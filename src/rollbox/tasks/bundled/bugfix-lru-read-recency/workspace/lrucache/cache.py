"""Least-recently-used cache.

Both ``get`` (on a hit) and ``put`` make a key the most recently used one. When the cache
is over capacity, the least recently used key is evicted. ``key in cache``, ``len()`` and
``keys()`` only look: they do not change the order.
"""

from collections import OrderedDict

from lrucache.stats import CacheStats

_MISSING = object()


class LRUCache:
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.stats = CacheStats()
        self._data = OrderedDict()  # least recently used first

    def get(self, key, default=None):
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            self.stats.misses += 1
            return default
        self.stats.hits += 1
        return value

    def put(self, key, value):
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = value
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)
            self.stats.evictions += 1

    def pop(self, key, default=None):
        """Remove ``key`` and return its value (``default`` when absent)."""
        return self._data.pop(key, default)

    def keys(self):
        """Keys from least to most recently used."""
        return list(self._data)

    def __contains__(self, key):
        return key in self._data

    def __len__(self):
        return len(self._data)
