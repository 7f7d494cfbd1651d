"""Stock ledger for small warehouses."""

from inventory.ledger import InsufficientStock, Ledger
from inventory.models import Movement
from inventory.report import stock_report

__all__ = ["InsufficientStock", "Ledger", "Movement", "stock_report"]
