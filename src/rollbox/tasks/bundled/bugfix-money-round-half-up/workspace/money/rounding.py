"""Rounding of monetary amounts to a currency's minor unit."""

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

from money.currency import minor_units


def quantize(amount, currency):
    """Round ``amount`` to the minor unit of ``currency`` and return a Decimal.

    Halves are rounded away from zero (commercial rounding), e.g. 2.345 EUR -> 2.35 EUR.
    """
    exponent = Decimal(1).scaleb(-minor_units(currency))
    return Decimal(str(amount)).quantize(exponent, rounding=ROUND_HALF_EVEN)


def to_minor(amount, currency):
    """The rounded amount as an integer number of minor units (cents, fils, yen)."""
    rounded = quantize(amount, currency)
    return int(rounded.scaleb(minor_units(currency)))
