"""Reading the raw event export."""
import csv
from datetime import datetime


def parse_timestamp(text):
    """Parse an ISO 8601 timestamp such as 2024-05-01T09:00:00+02:00."""
    return datetime.fromisoformat(text.strip())


def load_events(path):
    """Return {user_id: [timestamp, ...]} for every row with a user id."""
    events = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            user = row["user_id"].strip()
            if not user:
                continue
            events.setdefault(user, []).append(parse_timestamp(row["timestamp"]))
    return events
