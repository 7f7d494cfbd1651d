"""A small least-recently-used cache with hit/miss statistics."""

from lrucache.cache import LRUCache
from lrucache.stats import CacheStats

__all__ = ["CacheStats", "LRUCache"]
