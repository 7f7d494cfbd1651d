"""Count error log lines per hour and per service."""
import csv
import json
import os

ERROR_LEVELS = {"ERROR", "CRITICAL"}

by_hour = {}
by_service = {}
total = 0
with open("data/app_log.csv", newline="") as f:
    for row in csv.DictReader(f):
        if row["level"].strip().upper() not in ERROR_LEVELS:
            continue
        total += 1
        hour = row["timestamp"].strip()[:13].replace(" ", "T")
        by_hour[hour] = by_hour.get(hour, 0) + 1
        by_service[row["service"]] = by_service.get(row["service"], 0) + 1

result = {"total_errors": total, "by_hour": by_hour, "by_service": by_service}
os.makedirs("out", exist_ok=True)
with open("out/errors.json", "w") as f:
    json.dump(result, f, indent=2, sort_keys=True)
