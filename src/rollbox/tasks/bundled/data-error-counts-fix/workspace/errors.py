"""Count error log lines per hour and per service."""
import csv
import json
import os

by_hour = {}
by_service = {}
rows = []
with open("data/app_log.csv", newline="") as f:
    for row in csv.DictReader(f):
        rows.append(row)
        if row["level"] == "ERROR":
            hour = row["timestamp"][:13]
            by_hour[hour] = by_hour.get(hour, 0) + 1
            by_service[row["service"]] = by_service.get(row["service"], 0) + 1

result = {"total_errors": len(rows), "by_hour": by_hour, "by_service": by_service}
os.makedirs("out", exist_ok=True)
with open("out/errors.json", "w") as f:
    json.dump(result, f, indent=2, sort_keys=True)
