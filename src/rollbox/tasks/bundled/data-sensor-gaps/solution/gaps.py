import csv
import json
import os
from datetime import datetime, timezone

FMT = "%Y-%m-%dT%H:%M:%SZ"


def parse(ts):
    return datetime.strptime(ts.strip(), FMT).replace(tzinfo=timezone.utc)


with open("data/sensors.json") as f:
    config = json.load(f)
intervals = {s["id"]: s["interval_s"] for s in config["sensors"]}

seen = {sid: set() for sid in intervals}
unknown = 0
empty = 0
with open("data/readings.csv", newline="") as f:
    for row in csv.DictReader(f):
        sid = row["sensor_id"].strip()
        if sid not in intervals:
            unknown += 1
            continue
        if not (row["value"] or "").strip():
            empty += 1
            continue
        seen[sid].add(parse(row["timestamp"]))

gaps = []
summary = {}
for sid in sorted(intervals):
    interval = intervals[sid]
    times = sorted(seen[sid])
    n_gaps = 0
    n_missing = 0
    for prev, cur in zip(times, times[1:]):
        delta = int((cur - prev).total_seconds())
        if delta * 2 > 3 * interval:
            missing = -(-delta // interval) - 1
            gaps.append({
                "sensor_id": sid,
                "from": prev.strftime(FMT),
                "to": cur.strftime(FMT),
                "seconds": delta,
                "missing": missing,
            })
            n_gaps += 1
            n_missing += missing
    readings = len(times)
    summary[sid] = {
        "readings": readings,
        "gaps": n_gaps,
        "missing": n_missing,
        "coverage": round(readings / (readings + n_missing), 4) if readings else None,
    }

result = {
    "gaps": gaps,
    "sensors": summary,
    "ignored_rows": {"unknown_sensor": unknown, "empty_value": empty},
}
os.makedirs("out", exist_ok=True)
with open("out/gaps.json", "w") as f:
    json.dump(result, f, indent=2)
