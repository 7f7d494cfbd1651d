"""Splitting one user's events into sessions."""
from datetime import timedelta

GAP = timedelta(minutes=30)


def split_sessions(timestamps):
    """Return a list of (start, end) pairs, one per session."""
    sessions = []
    start = prev = None
    for ts in sorted(timestamps):
        if prev is None:
            start = ts
        elif ts - prev > GAP:
            sessions.append((start, prev))
            start = ts
        prev = ts
    if start is not None:
        sessions.append((start, prev))
    return sessions
