"""Clocks: anything with a ``now()`` method returning seconds as a float."""

import time


class MonotonicClock:
    def now(self):
        return time.monotonic()


class FakeClock:
    """A clock for tests and simulations: time only moves when told to."""

    def __init__(self, start=0.0):
        self._now = float(start)

    def now(self):
        return self._now

    def advance(self, seconds):
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        self._now += seconds
