"""Revenue per country in EUR: writes out/country_totals.json."""
import csv
import json
import os

from fx import load_rates, to_eur

rates = load_rates("data/rates.json")
totals = {}
unconverted = []
with open("data/orders.csv", newline="") as f:
    for row in csv.DictReader(f):
        try:
            eur = to_eur(float(row["amount"]), row["currency"], row["date"], rates)
        except KeyError:
            unconverted.append(row["order_id"])
            continue
        country = totals.setdefault(row["country"], {"orders": 0, "total_eur": 0.0})
        country["orders"] += 1
        country["total_eur"] += round(eur, 2)

result = {
    "countries": {
        name: {"orders": c["orders"], "total_eur": round(c["total_eur"], 2)}
        for name, c in sorted(totals.items())
    },
    "grand_total_eur": round(sum(c["total_eur"] for c in totals.values()), 2),
    "unconverted": sorted(unconverted),
}
os.makedirs("out", exist_ok=True)
with open("out/country_totals.json", "w") as f:
    json.dump(result, f, indent=2)
