import pytest

from ratelimit import FakeClock, SlidingWindowLimiter


def make(limit, window, start=0.0):
    clock = FakeClock(start)
    return clock, SlidingWindowLimiter(limit, window, clock)


def test_request_exactly_one_window_later_is_allowed():
    clock, rl = make(3, 10)
    assert [rl.allow("k") for _ in range(3)] == [True, True, True]
    clock.advance(10)
    assert rl.allow("k") is True
    assert rl.allow("k") is True
    assert rl.allow("k") is True
    assert rl.allow("k") is False


def test_waiting_retry_after_is_enough():
    clock, rl = make(2, 8.5, start=100.0)
    assert rl.allow("api") is True
    clock.advance(2.25)
    assert rl.allow("api") is True
    assert rl.allow("api") is False
    wait = rl.retry_after("api")
    assert wait == pytest.approx(6.25)
    clock.advance(wait)
    assert rl.retry_after("api") == 0.0
    assert rl.allow("api") is True
    assert rl.allow("api") is False
    assert rl.retry_after("api") == pytest.approx(2.25)


def test_just_before_window_end_still_limited():
    clock, rl = make(1, 4)
    assert rl.allow("u") is True
    clock.advance(3.875)
    assert rl.allow("u") is False
    assert rl.remaining("u") == 0
    clock.advance(0.125)
    assert rl.remaining("u") == 1
    assert rl.allow("u") is True


def test_sliding_not_fixed_window():
    clock, rl = make(2, 16)
    assert rl.allow("s")
    clock.advance(12)
    assert rl.allow("s")
    clock.advance(2)
    assert not rl.allow("s")
    clock.advance(2)   # t=16: the request at t=0 has expired, the one at t=12 still counts
    assert rl.allow("s")
    assert not rl.allow("s")
    assert rl.retry_after("s") == pytest.approx(12)


def test_keys_are_independent_and_rejections_do_not_count():
    clock, rl = make(1, 5)
    assert rl.allow("a")
    assert rl.allow("b")
    clock.advance(1)
    for _ in range(5):
        assert not rl.allow("a")
    clock.advance(4)
    assert rl.allow("a")
    assert rl.remaining("c") == 1


def test_invalid_configuration():
    with pytest.raises(ValueError):
        SlidingWindowLimiter(0, 10, FakeClock())
    with pytest.raises(ValueError):
        SlidingWindowLimiter(1, 0, FakeClock())
    with pytest.raises(ValueError):
        FakeClock().advance(-1)
