import pytest

from cachekit import ManualClock, TTLCache


@pytest.fixture
def clock():
    return ManualClock(start=1000.0)


def make(clock, capacity=3, ttl=30):
    return TTLCache(capacity=capacity, ttl=ttl, clock=clock)


@pytest.mark.parametrize("capacity", [0, -2, 2.5])
def test_bad_capacity(clock, capacity):
    with pytest.raises(ValueError):
        TTLCache(capacity=capacity, ttl=5, clock=clock)


@pytest.mark.parametrize("ttl", [0, -1, -0.5])
def test_bad_ttl(clock, ttl):
    with pytest.raises(ValueError):
        TTLCache(capacity=2, ttl=ttl, clock=clock)


def test_default_clock_works():
    cache = TTLCache(capacity=1, ttl=3600)
    cache.put("k", "v")
    assert cache.get("k") == "v"


def test_get_missing_returns_default(clock):
    cache = make(clock)
    assert cache.get("nope") is None
    assert cache.get("nope", "fallback") == "fallback"


def test_falsy_values_are_stored(clock):
    cache = make(clock)
    cache.put("zero", 0)
    cache.put("none", None)
    assert cache.get("zero", 99) == 0
    assert cache.get("none", 99) is None
    assert "none" in cache


def test_expiry_boundary(clock):
    cache = make(clock, ttl=30)
    cache.put("x", "val")
    clock.advance(29.5)
    assert cache.get("x") == "val"
    clock.advance(0.5)
    assert cache.get("x", "gone") == "gone"
    assert "x" not in cache
    assert len(cache) == 0


def test_get_does_not_extend_lifetime(clock):
    cache = make(clock, ttl=30)
    cache.put("x", 1)
    clock.advance(20)
    assert cache.get("x") == 1
    clock.advance(15)
    assert cache.get("x") is None


def test_put_replacing_restarts_lifetime(clock):
    cache = make(clock, ttl=30)
    cache.put("x", 1)
    clock.advance(20)
    cache.put("x", 2)
    clock.advance(25)
    assert cache.get("x") == 2


def test_lru_eviction(clock):
    cache = make(clock, capacity=3)
    for k in "abc":
        cache.put(k, k.upper())
    cache.put("d", "D")
    assert "a" not in cache
    assert cache.keys() == ["b", "c", "d"]
    assert cache.stats()["evictions"] == 1


def test_get_refreshes_recency(clock):
    cache = make(clock, capacity=3)
    for k in "abc":
        cache.put(k, k)
    assert cache.get("a") == "a"
    cache.put("d", "d")
    assert cache.keys() == ["c", "a", "d"]


def test_put_existing_refreshes_recency_without_eviction(clock):
    cache = make(clock, capacity=3)
    for k in "abc":
        cache.put(k, 1)
    cache.put("a", 2)
    assert cache.keys() == ["b", "c", "a"]
    assert cache.stats()["evictions"] == 0
    assert len(cache) == 3


def test_peek_contains_len_keys_do_not_touch_recency(clock):
    cache = make(clock, capacity=3)
    for k in "abc":
        cache.put(k, k * 2)
    assert cache.peek("a") == "aa"
    assert "a" in cache
    assert len(cache) == 3
    cache.keys()
    cache.put("d", "dd")
    assert "a" not in cache
    assert cache.keys() == ["b", "c", "d"]


def test_peek_does_not_count_stats(clock):
    cache = make(clock)
    cache.put("k", 5)
    assert cache.peek("k") == 5
    assert cache.peek("missing", -1) == -1
    assert cache.stats() == {"hits": 0, "misses": 0, "evictions": 0}


def test_expired_entries_make_room_before_lru_eviction(clock):
    cache = make(clock, capacity=3, ttl=30)
    cache.put("old", 1)
    clock.advance(10)
    cache.put("mid", 2)
    cache.put("new", 3)
    cache.get("old")  # most recently used, but it will expire first
    clock.advance(21)  # "old" is expired now, the others are not
    cache.put("fresh", 4)
    assert cache.keys() == ["mid", "new", "fresh"]
    assert cache.stats()["evictions"] == 0


def test_replacing_an_expired_key_counts_as_new(clock):
    cache = make(clock, capacity=2, ttl=30)
    cache.put("a", 1)
    clock.advance(5)
    cache.put("b", 2)
    clock.advance(26)  # "a" expired
    cache.put("a", 3)
    assert cache.keys() == ["b", "a"]
    assert cache.stats()["evictions"] == 0


def test_len_and_keys_skip_expired(clock):
    cache = make(clock, capacity=5, ttl=30)
    cache.put("p", 1)
    clock.advance(15)
    cache.put("q", 2)
    cache.put("r", 3)
    clock.advance(15)
    assert len(cache) == 2
    assert cache.keys() == ["q", "r"]


def test_delete(clock):
    cache = make(clock, ttl=30)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.delete("a") is True
    assert cache.delete("a") is False
    assert cache.delete("never") is False
    clock.advance(30)
    assert cache.delete("b") is False
    assert len(cache) == 0


def test_stats(clock):
    cache = make(clock, capacity=2, ttl=30)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.get("a")
    cache.get("zzz")
    cache.put("c", 3)  # evicts b
    cache.get("b")
    clock.advance(31)
    cache.get("a")  # expired: miss
    cache.delete("c")
    assert cache.stats() == {"hits": 2, "misses": 3, "evictions": 1}


def test_capacity_one(clock):
    cache = make(clock, capacity=1)
    cache.put(1, "one")
    cache.put(2, "two")
    assert cache.get(1) is None
    assert cache.get(2) == "two"
    assert cache.stats()["evictions"] == 1


def test_float_ttl(clock):
    cache = make(clock, ttl=0.5)
    cache.put("k", "v")
    clock.advance(0.25)
    assert "k" in cache
    clock.advance(0.25)
    assert "k" not in cache


def test_tuple_keys(clock):
    cache = make(clock)
    cache.put(("user", 7), {"name": "x"})
    assert cache.get(("user", 7)) == {"name": "x"}
