import csv
import json
import os
from decimal import Decimal

totals = {}
counts = {}
names = {}
with open("data/orders.csv", newline="") as f:
    for row in csv.DictReader(f):
        if row["status"] != "completed":
            continue
        cid = row["customer_id"]
        totals[cid] = totals.get(cid, Decimal("0")) + Decimal(row["amount"])
        counts[cid] = counts.get(cid, 0) + 1
        names.setdefault(cid, row["customer_name"])

ranked = sorted(totals, key=lambda cid: (-round(totals[cid], 2), cid))[:5]
result = [
    {
        "customer_id": cid,
        "name": names[cid],
        "total": float(round(totals[cid], 2)),
        "orders": counts[cid],
    }
    for cid in ranked
]

os.makedirs("out", exist_ok=True)
with open("out/top_customers.json", "w") as f:
    json.dump(result, f, indent=2)
