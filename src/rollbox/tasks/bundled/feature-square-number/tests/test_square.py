from square import square


def test_positive_integer():
    assert square(7) == 49


def test_larger_integer():
    assert square(12) == 144


def test_zero():
    assert square(0) == 0


def test_negative_integer():
    assert square(-3) == 9


def test_float():
    assert square(2.5) == 6.25
