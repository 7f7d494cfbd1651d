"""Currency metadata: how many digits follow the decimal point."""

MINOR_UNITS = {
    "EUR": 2,
    "USD": 2,
    "GBP": 2,
    "JPY": 0,
    "KWD": 3,
}


def minor_units(code):
    """Number of decimal places used by the currency ``code`` (case-insensitive)."""
    try:
        return MINOR_UNITS[code.upper()]
    except KeyError:
        raise ValueError(f"unknown currency: {code!r}") from None
