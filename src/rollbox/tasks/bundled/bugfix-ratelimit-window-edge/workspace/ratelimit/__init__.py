"""Per-key sliding-window rate limiting."""

from ratelimit.clock import FakeClock, MonotonicClock
from ratelimit.limiter import SlidingWindowLimiter

__all__ = ["FakeClock", "MonotonicClock", "SlidingWindowLimiter"]
