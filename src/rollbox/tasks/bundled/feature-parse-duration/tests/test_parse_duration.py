import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3h", 10800),
        ("7m", 420),
        ("59s", 59),
        ("2d", 172800),
        ("1h1m1s", 3661),
        ("3d4h5m6s", 3 * 86400 + 4 * 3600 + 5 * 60 + 6),
        ("2d45s", 172845),
        ("4h20s", 14420),
        ("0m", 0),
        ("0h0m", 0),
        ("150m", 9000),
        ("100000s", 100000),
    ],
)
def test_valid(text, expected):
    assert parse_duration(text) == expected


def test_surrounding_whitespace_ignored():
    assert parse_duration("  12m\n") == 720
    assert parse_duration("\t1d6h ") == 108000


def test_returns_int():
    assert type(parse_duration("5m")) is int


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "m",
        "25",
        "5x",
        "5H",
        "10s5m",
        "3m2h",
        "1h1h",
        "2m3m",
        "-4s",
        "+4s",
        "1.5h",
        "1h 30m",
        "1 h",
        "h5",
        "3ms",
        "1d2",
    ],
)
def test_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_round_trip():
    for n in [0, 1, 59, 60, 61, 3599, 3600, 86399, 86400, 90061, 987654, 31536000]:
        assert parse_duration(format_duration(n)) == n


def test_format_unchanged():
    assert format_duration(93784) == "1d2h3m4s"
