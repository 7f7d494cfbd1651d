"""Parse human-written date ranges such as ``2024-03`` or ``2024-01-15..2024-02``."""

from daterange.calendar_utils import add_months, days_in_month, is_leap
from daterange.model import DateRange
from daterange.parser import parse_range

__all__ = ["DateRange", "add_months", "days_in_month", "is_leap", "parse_range"]
