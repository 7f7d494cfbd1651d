"""Clocks for the cache. Anything with a now() -> float method will do."""

import time


class MonotonicClock:
    """The real clock: seconds from time.monotonic()."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to (for tests and simulations)."""

    def __init__(self, start: float = 0.0):
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += seconds
