"""An inclusive range of calendar days."""

import datetime
from dataclasses import dataclass


@dataclass(frozen=True)
class DateRange:
    start: datetime.date
    end: datetime.date  # inclusive

    def __post_init__(self):
        if self.end < self.start:
            raise ValueError(f"range ends ({self.end}) before it starts ({self.start})")

    def __contains__(self, day):
        return self.start <= day <= self.end

    def __len__(self):
        return (self.end - self.start).days + 1

    def days(self):
        day = self.start
        while day <= self.end:
            yield day
            day += datetime.timedelta(days=1)
