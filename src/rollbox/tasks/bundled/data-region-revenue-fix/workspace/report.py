import csv
import json
import os

totals = {}
with open("data/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        region = row["region"]
        amount = float(row["unit_price"])
        totals[region] = totals.get(region, 0.0) + amount

os.makedirs("out", exist_ok=True)
result = {region: round(total, 2) for region, total in sorted(totals.items())}
with open("out/region_totals.json", "w") as f:
    json.dump(result, f, indent=2)
