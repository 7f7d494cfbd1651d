import csv
import json
import os
from datetime import date, datetime
from decimal import Decimal


def cents(text):
    text = text.strip().replace(",", "")
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    value = int((Decimal(text) * 100).to_integral_value())
    return -value if negative else value


ledger = []
with open("data/ledger.csv", newline="") as f:
    for row in csv.DictReader(f):
        ledger.append({
            "id": row["entry_id"].strip(),
            "date": date.fromisoformat(row["date"].strip()),
            "cents": cents(row["amount"]),
        })

bank = []
with open("data/bank.csv", newline="") as f:
    for row in csv.DictReader(f):
        bank.append({
            "id": row["txn_id"].strip(),
            "date": datetime.strptime(row["posted"].strip(), "%d/%m/%Y").date(),
            "cents": cents(row["amount"]),
        })

used = set()
matched = []
unmatched_ledger = []
for entry in sorted(ledger, key=lambda e: (e["date"], e["id"])):
    candidates = []
    for txn in bank:
        if txn["id"] in used or txn["cents"] != entry["cents"]:
            continue
        days = abs((txn["date"] - entry["date"]).days)
        if days <= 3:
            candidates.append((days, txn["date"], txn["id"]))
    if not candidates:
        unmatched_ledger.append(entry["id"])
        continue
    days, _, txn_id = min(candidates)
    used.add(txn_id)
    matched.append({
        "entry_id": entry["id"],
        "txn_id": txn_id,
        "amount": entry["cents"] / 100,
        "days_apart": days,
    })

ledger_total = sum(e["cents"] for e in ledger)
bank_total = sum(t["cents"] for t in bank)
result = {
    "matched": sorted(matched, key=lambda m: m["entry_id"]),
    "unmatched_ledger": sorted(unmatched_ledger),
    "unmatched_bank": sorted(t["id"] for t in bank if t["id"] not in used),
    "totals": {
        "ledger": ledger_total / 100,
        "bank": bank_total / 100,
        "difference": (bank_total - ledger_total) / 100,
    },
}
os.makedirs("out", exist_ok=True)
with open("out/reconciliation.json", "w") as f:
    json.dump(result, f, indent=2)
