from cachekit import ManualClock, TTLCache


def test_put_and_get():
    cache = TTLCache(capacity=2, ttl=10, clock=ManualClock())
    cache.put("a", 1)
    assert cache.get("a") == 1


def test_entry_expires():
    clock = ManualClock()
    cache = TTLCache(capacity=2, ttl=10, clock=clock)
    cache.put("a", 1)
    clock.advance(10)
    assert cache.get("a") is None
