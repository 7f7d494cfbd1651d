from parity import is_even


def test_even_number():
    assert is_even(10) is True


def test_odd_number():
    assert is_even(13) is False


def test_zero_is_even():
    assert is_even(0) is True


def test_negative_even():
    assert is_even(-6) is True


def test_negative_odd():
    assert is_even(-1) is False


def test_large_odd():
    assert is_even(1000001) is False
