"""Compact duration strings such as "2h15m" used in job configs."""

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def format_duration(seconds: int) -> str:
    """Format a non-negative number of seconds, e.g. 8130 -> "2h15m30s", 0 -> "0s"."""
    if seconds < 0:
        raise ValueError("negative duration")
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def parse_duration(text: str) -> int:
    """Parse a compact duration string and return the total number of seconds.

    Raises ValueError if text is not a valid duration.
    """
    raise NotImplementedError
