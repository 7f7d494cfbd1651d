"""Small numeric helpers used by the report generators."""


def lerp(a, b, t):
    """Linear interpolation between a and b (t=0 gives a, t=1 gives b)."""
    return a + (b - a) * t


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    values = list(values)
    if not values:
        raise ValueError("mean() of an empty sequence")
    return sum(values) / len(values)


def clamp(value, low, high):
    """Limit value to the closed range [low, high].

    Either bound may be None (no limit on that side).
    Raises ValueError if both bounds are given and low > high.
    """
    if low is not None and high is not None and low > high:
        raise ValueError(f"low ({low!r}) is greater than high ({high!r})")
    if low is not None and value < low:
        return low
    if high is not None and value > high:
        return high
    return value
