import csv
import json
import os
import statistics

with open("data/grades.csv", newline="") as f:
    scores = [float(row["score"]) for row in csv.DictReader(f)]

result = {
    "count": len(scores),
    "mean": round(statistics.mean(scores), 2),
    "median": round(statistics.mean(scores), 2),
    "min": min(scores),
    "max": max(scores),
}

os.makedirs("out", exist_ok=True)
with open("out/grade_stats.json", "w") as f:
    json.dump(result, f, indent=2)
