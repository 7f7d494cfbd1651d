"""Plain-text stock report."""


def stock_report(ledger):
    """One line per SKU with stock on hand, sorted by SKU, under a header line."""
    lines = [f"Stock at {ledger.warehouse}"]
    for sku in ledger.skus():
        qty = ledger.on_hand(sku)
        if qty:
            lines.append(f"  {sku}: {qty}")
    return "\n".join(lines)
