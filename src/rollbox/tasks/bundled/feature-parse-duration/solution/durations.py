"""Compact duration strings such as "2h15m" used in job configs."""

import re

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))

_PATTERN = re.compile("".join(rf"(?:([0-9]+){unit})?" for unit, _ in UNITS))


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
    stripped = text.strip()
    match = _PATTERN.fullmatch(stripped)
    if not stripped or match is None:
        raise ValueError(f"invalid duration: {text!r}")
    total = 0
    for (unit, size), count in zip(UNITS, match.groups()):
        if count is not None:
            total += int(count) * size
    return total
