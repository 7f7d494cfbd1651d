"""Timestamps: everything is compared and reported in UTC."""

from datetime import datetime, timezone


def to_utc(value):
    """Parse an ISO-8601 timestamp (string) into an aware datetime in UTC.

    A timestamp with a UTC offset (``+02:00``, ``-05:00``, ``Z``) denotes that instant, e.g.
    ``2024-05-06T10:00+02:00`` is 08:00 UTC. A timestamp without an offset is already UTC;
    it is never interpreted in the server's local time zone.
    """
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def format_utc(moment):
    """``YYYY-MM-DDTHH:MMZ`` for an aware datetime."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
