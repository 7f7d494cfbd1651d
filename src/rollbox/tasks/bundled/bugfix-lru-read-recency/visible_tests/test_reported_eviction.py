from lrucache import LRUCache


def test_recently_read_entry_survives_eviction():
    cache = LRUCache(2)
    cache.put("user:1", "alice")
    cache.put("user:2", "bob")
    assert cache.get("user:1") == "alice"
    cache.put("user:3", "carol")  # should evict user:2, the least recently used
    assert cache.get("user:1") == "alice"
