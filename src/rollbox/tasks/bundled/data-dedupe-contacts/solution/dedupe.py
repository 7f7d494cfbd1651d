import csv
import json
import os

groups = {}
input_rows = 0
skipped = 0
with open("data/contacts.csv", newline="") as f:
    for index, row in enumerate(csv.DictReader(f)):
        input_rows += 1
        row = {k: (v or "").strip() for k, v in row.items()}
        key = row["email"].lower()
        if not key:
            skipped += 1
            continue
        groups.setdefault(key, []).append((row["updated_at"], index, row))

out_rows = []
for email in sorted(groups):
    records = [r for _, _, r in sorted(groups[email], key=lambda t: (t[0], t[1]), reverse=True)]
    winner = records[0]
    merged = {}
    for field in ("name", "phone"):
        merged[field] = next((r[field] for r in records if r[field]), "")
    out_rows.append([email, merged["name"], merged["phone"], winner["updated_at"], winner["id"]])

os.makedirs("out", exist_ok=True)
with open("out/contacts.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["email", "name", "phone", "updated_at", "source_id"])
    writer.writerows(out_rows)

stats = {
    "input_rows": input_rows,
    "skipped_no_email": skipped,
    "unique_contacts": len(groups),
    "duplicates_removed": input_rows - skipped - len(groups),
}
with open("out/dedupe_stats.json", "w") as f:
    json.dump(stats, f, indent=2)
