import os
import time
from datetime import datetime, timezone

import pytest

from booking import Booking, busy, conflicts, format_utc, free_slots, to_utc

UTC = timezone.utc


@pytest.fixture
def server_far_from_utc():
    """Pretend the server runs at UTC+05:30 (POSIX TZ syntax, no tz database needed)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "XYZ-05:30"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


BOOKINGS = [
    Booking("ber-1", "atlas", "2024-05-06T10:00+02:00", "2024-05-06T11:00+02:00"),  # 08:00-09:00Z
    Booking("nyc-1", "atlas", "2024-05-06T05:30-04:00", "2024-05-06T06:00-04:00"),  # 09:30-10:00Z
    Booking("utc-1", "atlas", "2024-05-06T12:00Z", "2024-05-06T13:00Z"),
    Booking("tyo-1", "atlas", "2024-05-06T18:00+09:00", "2024-05-06T18:30+09:00"),  # 09:00-09:30Z
    Booking("ber-2", "borealis", "2024-05-06T09:00+02:00", "2024-05-06T17:00+02:00"),
]


def test_to_utc_converts_offsets():
    assert to_utc("2024-05-06T10:00+02:00") == datetime(2024, 5, 6, 8, 0, tzinfo=UTC)
    assert to_utc("2024-05-06T21:15-03:00") == datetime(2024, 5, 7, 0, 15, tzinfo=UTC)
    assert to_utc(" 2024-05-06T07:00z ") == datetime(2024, 5, 6, 7, 0, tzinfo=UTC)
    assert to_utc("2024-05-06T10:00+02:00").utcoffset().total_seconds() == 0


def test_busy_in_utc_across_offices():
    assert busy(BOOKINGS, "atlas") == [
        ("2024-05-06T08:00Z", "2024-05-06T10:00Z"),
        ("2024-05-06T12:00Z", "2024-05-06T13:00Z"),
    ]
    assert busy(BOOKINGS, "borealis") == [("2024-05-06T07:00Z", "2024-05-06T15:00Z")]


def test_free_slots_across_offices():
    assert free_slots(BOOKINGS, "atlas", "2024-05-06T06:00Z", "2024-05-06T14:00Z") == [
        ("2024-05-06T06:00Z", "2024-05-06T08:00Z"),
        ("2024-05-06T10:00Z", "2024-05-06T12:00Z"),
        ("2024-05-06T13:00Z", "2024-05-06T14:00Z"),
    ]


def test_free_slots_window_given_with_offset():
    # 09:00-19:00 in Berlin (+02:00) is 07:00-17:00 UTC
    slots = free_slots(BOOKINGS, "borealis", "2024-05-06T09:00+02:00", "2024-05-06T19:00+02:00", 60)
    assert slots == [("2024-05-06T15:00Z", "2024-05-06T17:00Z")]
    assert free_slots(BOOKINGS, "atlas", "2024-05-06T06:00Z", "2024-05-06T14:00Z", 90) == [
        ("2024-05-06T06:00Z", "2024-05-06T08:00Z"),
        ("2024-05-06T10:00Z", "2024-05-06T12:00Z"),
    ]


def test_conflicts_between_offices():
    extra = BOOKINGS + [
        Booking("lon-1", "atlas", "2024-05-06T09:45+01:00", "2024-05-06T10:15+01:00"),  # 08:45-09:15Z
        Booking("syd-1", "atlas", "2024-05-06T22:00+10:00", "2024-05-06T23:00+10:00"),  # 12:00-13:00Z
    ]
    assert conflicts(extra) == [("ber-1", "lon-1"), ("lon-1", "tyo-1"), ("syd-1", "utc-1")]
    assert conflicts(BOOKINGS) == []


def test_booking_order_checked_on_real_instants():
    # starts 08:00Z, ends 08:45Z: valid although the wall-clock end is "earlier"
    ok = Booking("x", "atlas", "2024-05-06T11:00+03:00", "2024-05-06T08:45Z")
    assert busy([ok], "atlas") == [("2024-05-06T08:00Z", "2024-05-06T08:45Z")]
    bad = Booking("y", "atlas", "2024-05-06T10:00Z", "2024-05-06T11:00+02:00")
    with pytest.raises(ValueError):
        bad.interval()


def test_day_boundary():
    late = Booking("mow-1", "atlas", "2024-05-07T01:00+03:00", "2024-05-07T02:30+03:00")
    assert busy([late], "atlas") == [("2024-05-06T22:00Z", "2024-05-06T23:30Z")]


def test_naive_timestamps_are_utc_whatever_the_server_zone(server_far_from_utc):
    assert to_utc("2024-05-06T10:00") == datetime(2024, 5, 6, 10, 0, tzinfo=UTC)
    naive = Booking("n-1", "atlas", "2024-05-06T08:30", "2024-05-06T09:15")
    assert busy([naive], "atlas") == [("2024-05-06T08:30Z", "2024-05-06T09:15Z")]
    assert conflicts(BOOKINGS + [naive]) == [("ber-1", "n-1"), ("n-1", "tyo-1")]
    assert free_slots([naive], "atlas", "2024-05-06T08:00", "2024-05-06T10:00") == [
        ("2024-05-06T08:00Z", "2024-05-06T08:30Z"),
        ("2024-05-06T09:15Z", "2024-05-06T10:00Z"),
    ]
    assert format_utc(datetime(2024, 1, 2, 3, 4, tzinfo=UTC)) == "2024-01-02T03:04Z"
