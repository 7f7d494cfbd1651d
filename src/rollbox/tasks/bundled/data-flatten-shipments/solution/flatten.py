import csv
import json
import os


def render(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "|".join(render(v) for v in value)
    return json.dumps(value)


def flatten(obj, prefix=""):
    flat = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = render(value)
    return flat


with open("data/shipments.json") as f:
    records = json.load(f)

rows = [flatten(r) for r in records]
keys = set()
for row in rows:
    keys.update(row)
keys.discard("id")
columns = ["id"] + sorted(keys)

os.makedirs("out", exist_ok=True)
with open("out/shipments.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row.get(c, "") for c in columns])
