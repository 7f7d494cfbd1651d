"""Ledger records."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Movement:
    """One change of stock: positive ``qty`` for goods in, negative for goods out."""

    sku: str
    qty: int
    ref: str = ""
