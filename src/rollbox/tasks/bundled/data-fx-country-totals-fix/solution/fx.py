"""Currency conversion helpers."""
import json


def load_rates(path):
    """Return the rates table: {date: {currency: units per 1 EUR}}."""
    with open(path) as f:
        data = json.load(f)
    return data["rates"]


def to_eur(amount, currency, date, rates):
    """Convert `amount` of `currency` on `date` (YYYY-MM-DD) to EUR.

    Raises KeyError when no usable rate exists.
    """
    if currency == "EUR":
        return amount
    usable = [d for d in rates if d <= date and currency in rates[d]]
    if not usable:
        raise KeyError(currency)
    rate = rates[max(usable)][currency]
    return amount / rate
