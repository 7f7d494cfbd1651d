"""Counting values into equal-width bins."""


def bin_edges(lo, hi, bins):
    """The ``bins + 1`` edges of ``bins`` equal-width bins covering [lo, hi]."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    if hi <= lo:
        raise ValueError("hi must be greater than lo")
    width = (hi - lo) / bins
    return [lo + i * width for i in range(bins)] + [hi]


def histogram(values, bins, lo=None, hi=None):
    """Count ``values`` into ``bins`` equal-width bins over [lo, hi].

    ``lo`` and ``hi`` default to the smallest and largest value (when all values are
    equal, the range is [v, v + 1]). Every bin is half-open, [left, right), except the
    last one, which is closed and so also counts values equal to ``hi``. Values outside
    [lo, hi] are ignored.

    Returns ``(counts, edges)``.
    """
    values = list(values)
    if lo is None or hi is None:
        if not values:
            raise ValueError("lo and hi are required when there are no values")
        lo = min(values) if lo is None else lo
        hi = max(values) if hi is None else hi
        if hi == lo:
            hi = lo + 1
    edges = bin_edges(lo, hi, bins)
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        if v < lo or v > hi:
            continue
        index = int((v - lo) / width)
        if index < bins:
            counts[index] += 1
    return counts, edges
