"""Sliding-window rate limiter.

At most ``limit`` requests per key are allowed in any window of ``window`` seconds.
A request made at time t counts against its key for requests made strictly before
t + window; from t + window on it no longer counts. Rejected requests never count.
"""

from collections import deque

from ratelimit.clock import MonotonicClock


class SlidingWindowLimiter:
    def __init__(self, limit, window, clock=None):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if window <= 0:
            raise ValueError("window must be positive")
        self.limit = limit
        self.window = window
        self.clock = clock or MonotonicClock()
        self._hits = {}

    def _recent(self, key, now):
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] < now - self.window:
            hits.popleft()
        return hits

    def allow(self, key):
        """Record a request for ``key`` and say whether it is allowed."""
        now = self.clock.now()
        hits = self._recent(key, now)
        if len(hits) >= self.limit:
            return False
        hits.append(now)
        return True

    def remaining(self, key):
        """How many more requests ``key`` may make right now."""
        return self.limit - len(self._recent(key, self.clock.now()))

    def retry_after(self, key):
        """Seconds until ``key`` may make a request again (0.0 when it may now)."""
        now = self.clock.now()
        hits = self._recent(key, now)
        if len(hits) < self.limit:
            return 0.0
        return hits[0] + self.window - now
