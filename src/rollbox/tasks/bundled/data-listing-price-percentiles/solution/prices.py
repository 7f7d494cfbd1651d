import csv
import json
import os


def area_key(name):
    return " ".join(name.split()).lower()


def parse_price(text):
    text = (text or "").strip().replace("$", "").replace(",", "")
    return float(text) if text else None


def nearest_rank(sorted_values, p):
    if not sorted_values:
        return None
    rank = -(-p * len(sorted_values) // 100)
    return sorted_values[max(rank, 1) - 1]


groups = {}
with open("data/listings.csv", newline="") as f:
    for row in csv.DictReader(f):
        key = area_key(row["neighbourhood"])
        entry = groups.setdefault(key, {"count": 0, "sold": 0, "prices": []})
        entry["count"] += 1
        if row["status"].strip().lower() == "sold":
            entry["sold"] += 1
        price = parse_price(row["price"])
        if price is not None:
            entry["prices"].append(price)

areas = {}
for key in sorted(groups):
    entry = groups[key]
    prices = sorted(entry["prices"])
    areas[key] = {
        "count": entry["count"],
        "sold_share": round(entry["sold"] / entry["count"], 4),
        "p25": nearest_rank(prices, 25),
        "p50": nearest_rank(prices, 50),
        "p90": nearest_rank(prices, 90),
    }

candidates = [(-a["p50"], k) for k, a in areas.items() if a["p50"] is not None]
priciest = min(candidates)[1] if candidates else None

os.makedirs("out", exist_ok=True)
with open("out/price_stats.json", "w") as f:
    json.dump({"neighbourhoods": areas, "priciest": priciest}, f, indent=2)
