import csv
import os


def as_int(value):
    value = value.strip()
    return int(value) if value else 0


rows = []
with open("data/inventory.csv", newline="") as f:
    for row in csv.DictReader(f):
        available = as_int(row["on_hand"]) + as_int(row["on_order"])
        if available > as_int(row["reorder_point"]):
            continue
        qty = as_int(row["target_level"]) - available
        if qty <= 0:
            continue
        rows.append((row["sku"], row["name"], qty))

rows.sort(key=lambda r: (-r[2], r[0]))
os.makedirs("out", exist_ok=True)
with open("out/reorder.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["sku", "name", "order_qty"])
    writer.writerows(rows)
