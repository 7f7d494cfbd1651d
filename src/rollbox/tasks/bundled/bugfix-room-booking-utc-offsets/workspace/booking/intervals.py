"""Half-open time intervals ``(start, end)``, start < end."""


def merge(intervals):
    """Sorted, non-overlapping intervals covering the same time; touching ones are joined."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def gaps(intervals, start, end):
    """The parts of ``[start, end)`` not covered by ``intervals``."""
    free = []
    cursor = start
    for busy_start, busy_end in merge(intervals):
        if busy_end <= cursor:
            continue
        if busy_start >= end:
            break
        if busy_start > cursor:
            free.append((cursor, busy_start))
        cursor = max(cursor, busy_end)
    if cursor < end:
        free.append((cursor, end))
    return free


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]
