import pytest

from numeric import clamp, lerp, mean


def test_value_inside_is_returned_unchanged():
    assert clamp(42, 17, 99) == 42
    assert type(clamp(42, 17.0, 99.0)) is int


def test_value_below_low():
    assert clamp(3, 8, 20) == 8


def test_value_above_high():
    assert clamp(250, -4, 100) == 100


def test_boundaries_are_inclusive():
    assert clamp(-4, -4, 100) == -4
    assert clamp(100, -4, 100) == 100


def test_floats():
    assert clamp(0.75, 0.1, 0.5) == 0.5
    assert clamp(-2.5, -1.5, 1.5) == -1.5


def test_equal_bounds():
    assert clamp(9, 6, 6) == 6
    assert clamp(2, 6, 6) == 6


def test_no_lower_bound():
    assert clamp(-1000, None, 30) == -1000
    assert clamp(31, None, 30) == 30


def test_no_upper_bound():
    assert clamp(10**9, 12, None) == 10**9
    assert clamp(11, 12, None) == 12


def test_no_bounds():
    assert clamp(-77.25, None, None) == -77.25


def test_inverted_bounds_raise():
    with pytest.raises(ValueError):
        clamp(5, 11, 3)


def test_inverted_bounds_raise_even_when_value_inside():
    with pytest.raises(ValueError):
        clamp(7, 7.5, 7.25)


def test_other_helpers_still_work():
    assert lerp(2, 6, 0.25) == 3
    assert mean([3, 4, 8]) == 5
