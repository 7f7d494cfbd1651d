"""Monthly signup summary: writes out/monthly_signups.csv."""
import csv
import os

months = {}
with open("data/signups.csv", newline="") as f:
    for row in csv.DictReader(f):
        month = row["signup_date"][:6]
        entry = months.setdefault(month, {"signups": 0, "paid": 0})
        entry["signups"] += 1
        if row["plan"] == "pro":
            entry["paid"] += 1

os.makedirs("out", exist_ok=True)
with open("out/monthly_signups.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["month", "signups", "paid", "paid_share"])
    for month, entry in months.items():
        share = entry["paid"] / entry["signups"]
        writer.writerow([month, entry["signups"], entry["paid"], round(share, 3)])
