import pytest

from lrucache import LRUCache


def test_get_hit_refreshes_recency():
    cache = LRUCache(3)
    for k in "abc":
        cache.put(k, k.upper())
    assert cache.get("a") == "A"
    cache.put("d", "D")
    assert "b" not in cache
    assert cache.keys() == ["c", "a", "d"]


def test_several_reads_change_eviction_order():
    cache = LRUCache(3)
    for k in (1, 2, 3):
        cache.put(k, k * 10)
    cache.get(2)
    cache.get(1)
    cache.put(4, 40)
    cache.put(5, 50)
    assert cache.keys() == [1, 4, 5]
    assert cache.get(3) is None
    assert cache.get(2, "gone") == "gone"


def test_capacity_one_keeps_last_put():
    cache = LRUCache(1)
    cache.put("x", 1)
    assert cache.get("x") == 1
    cache.put("y", 2)
    assert cache.keys() == ["y"]
    assert cache.stats.evictions == 1


def test_miss_does_not_change_order():
    cache = LRUCache(2)
    cache.put("p", 1)
    cache.put("q", 2)
    assert cache.get("zzz") is None
    cache.put("r", 3)
    assert cache.keys() == ["q", "r"]


def test_membership_and_len_do_not_refresh():
    cache = LRUCache(2)
    cache.put("p", 1)
    cache.put("q", 2)
    assert "p" in cache
    assert len(cache) == 2
    cache.put("r", 3)
    assert "p" not in cache
    assert cache.keys() == ["q", "r"]


def test_put_existing_key_updates_and_refreshes():
    cache = LRUCache(2)
    cache.put("p", 1)
    cache.put("q", 2)
    cache.put("p", 11)
    cache.put("r", 3)
    assert cache.keys() == ["p", "r"]
    assert cache.get("p") == 11


def test_falsy_values_are_hits():
    cache = LRUCache(2)
    cache.put("zero", 0)
    cache.put("none", None)
    assert cache.get("zero", "dflt") == 0
    assert cache.get("none", "dflt") is None
    assert cache.stats.hits == 2
    assert cache.stats.misses == 0
    assert cache.keys() == ["zero", "none"]


def test_stats_and_pop():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.get("a")
    cache.get("b")
    cache.get("a")
    assert (cache.stats.hits, cache.stats.misses) == (2, 1)
    assert cache.stats.hit_rate == pytest.approx(2 / 3)
    assert cache.pop("a") == 1
    assert cache.pop("a", "none") == "none"
    assert len(cache) == 0


def test_invalid_capacity():
    with pytest.raises(ValueError):
        LRUCache(0)
