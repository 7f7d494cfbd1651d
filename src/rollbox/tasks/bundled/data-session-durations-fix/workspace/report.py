"""Per-user session report: writes out/sessions.json."""
import json
import os

from sessions.parse import load_events
from sessions.sessionize import split_sessions
from sessions.stats import median

events = load_events("data/events.csv")
users = {}
all_durations = []
for user, timestamps in sorted(events.items()):
    durations = [int((end - start).total_seconds()) for start, end in split_sessions(timestamps)]
    all_durations.extend(durations)
    users[user] = {
        "sessions": len(durations),
        "total_seconds": sum(durations),
        "longest_seconds": max(durations),
    }

result = {
    "users": users,
    "overall": {
        "sessions": len(all_durations),
        "median_session_seconds": median(all_durations) if all_durations else None,
    },
}
os.makedirs("out", exist_ok=True)
with open("out/sessions.json", "w") as f:
    json.dump(result, f, indent=2)
