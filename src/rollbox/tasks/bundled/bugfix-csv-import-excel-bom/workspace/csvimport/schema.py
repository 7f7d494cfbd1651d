"""The columns a product CSV may have, and the errors an import can raise."""

from decimal import Decimal, InvalidOperation


class ImportError_(Exception):
    """Base class of import problems (named so it does not shadow the builtin)."""


class MissingColumnError(ImportError_):
    def __init__(self, column):
        super().__init__(f"missing required column: {column}")
        self.column = column


class RowError(ImportError_):
    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line


def parse_price(text):
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"bad price {text!r}") from None
    if value < 0:
        raise ValueError(f"negative price {text!r}")
    return value


def parse_qty(text):
    text = text.strip()
    if not text:
        return 0
    if not text.isdigit():
        raise ValueError(f"bad quantity {text!r}")
    return int(text)


# column name -> (required, parser)
COLUMNS = {
    "sku": (True, str.strip),
    "name": (False, str.strip),
    "price": (True, parse_price),
    "qty": (False, parse_qty),
}
