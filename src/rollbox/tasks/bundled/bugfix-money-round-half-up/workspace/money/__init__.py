"""Small helpers for handling monetary amounts."""

from money.currency import minor_units
from money.rounding import quantize, to_minor

__all__ = ["minor_units", "quantize", "to_minor"]
