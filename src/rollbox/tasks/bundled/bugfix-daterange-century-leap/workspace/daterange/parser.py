"""Parsing of range expressions.

A single term is ``YYYY`` (a whole year), ``YYYY-MM`` (a whole month) or ``YYYY-MM-DD``
(one day). ``A..B`` is the range from the first day of term A to the last day of term B.
"""

import datetime
import re

from daterange.calendar_utils import days_in_month
from daterange.model import DateRange

_TERM = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def _term_bounds(text):
    m = _TERM.match(text.strip())
    if not m:
        raise ValueError(f"not a date term: {text!r}")
    year = int(m.group(1))
    if m.group(2) is None:
        return datetime.date(year, 1, 1), datetime.date(year, 12, 31)
    month = int(m.group(2))
    last = days_in_month(year, month)
    if m.group(3) is None:
        return datetime.date(year, month, 1), datetime.date(year, month, last)
    day = int(m.group(3))
    if not 1 <= day <= last:
        raise ValueError(f"day out of range for {year}-{month:02d}: {day}")
    return datetime.date(year, month, day), datetime.date(year, month, day)


def parse_range(text):
    """Parse ``text`` into a DateRange; raises ValueError for anything malformed."""
    if ".." in text:
        left, _, right = text.partition("..")
        start, _ = _term_bounds(left)
        _, end = _term_bounds(right)
    else:
        start, end = _term_bounds(text)
    return DateRange(start, end)
