import datetime as dt

import pytest

from daterange import DateRange, add_months, days_in_month, is_leap, parse_range


@pytest.mark.parametrize(
    "year, leap",
    [(1600, True), (1700, False), (1800, False), (1900, False), (1996, True),
     (2000, True), (2023, False), (2024, True), (2100, False), (2400, True)],
)
def test_is_leap(year, leap):
    assert is_leap(year) is leap


def test_february_length():
    assert days_in_month(2400, 2) == 29
    assert days_in_month(1600, 2) == 29
    assert days_in_month(2100, 2) == 28
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2400, 3) == 31
    with pytest.raises(ValueError):
        days_in_month(2024, 13)


def test_month_term_in_quadricentennial_year():
    r = parse_range("2400-02")
    assert r == DateRange(dt.date(2400, 2, 1), dt.date(2400, 2, 29))
    assert len(r) == 29
    assert dt.date(2400, 2, 29) in r
    assert len(parse_range("1900-02")) == 28


def test_feb_29_day_term():
    assert parse_range("1600-02-29") == DateRange(dt.date(1600, 2, 29), dt.date(1600, 2, 29))
    with pytest.raises(ValueError):
        parse_range("2100-02-29")
    with pytest.raises(ValueError):
        parse_range("2023-02-29")


def test_span_ending_in_february():
    r = parse_range("2399-12-30..2400-02")
    assert r.start == dt.date(2399, 12, 30)
    assert r.end == dt.date(2400, 2, 29)
    assert len(r) == 2 + 31 + 29
    assert list(r.days())[-1] == dt.date(2400, 2, 29)


def test_add_months_clamps_to_month_end():
    assert add_months(dt.date(2000, 1, 31), 1) == dt.date(2000, 2, 29)
    assert add_months(dt.date(2399, 11, 30), 3) == dt.date(2400, 2, 29)
    assert add_months(dt.date(2100, 3, 31), -1) == dt.date(2100, 2, 28)
    assert add_months(dt.date(2023, 5, 15), -17) == dt.date(2021, 12, 15)
    assert add_months(dt.date(2024, 2, 29), 12) == dt.date(2025, 2, 28)


def test_existing_behaviour():
    assert len(parse_range("2024")) == 366
    assert len(parse_range("2023")) == 365
    r = parse_range(" 2023-11-20 .. 2024-01 ")
    assert (r.start, r.end) == (dt.date(2023, 11, 20), dt.date(2024, 1, 31))
    for bad in ("2024-1", "24-01-01", "2024-04-31", "2024-00", "2024-03..2024-02"):
        with pytest.raises(ValueError):
            parse_range(bad)
