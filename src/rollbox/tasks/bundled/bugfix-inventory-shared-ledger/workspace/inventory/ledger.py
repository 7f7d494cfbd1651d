"""An append-only stock ledger for one warehouse."""

from inventory.models import Movement


class InsufficientStock(Exception):
    """Raised when shipping more than is on hand."""


class Ledger:
    def __init__(self, warehouse, movements=[]):
        self.warehouse = warehouse
        self.movements = movements

    def receive(self, sku, qty, ref=""):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self.movements.append(Movement(sku, qty, ref))

    def ship(self, sku, qty, ref=""):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        available = self.on_hand(sku)
        if qty > available:
            raise InsufficientStock(f"{self.warehouse}: {sku} has {available}, asked {qty}")
        self.movements.append(Movement(sku, -qty, ref))

    def on_hand(self, sku):
        return sum(m.qty for m in self.movements if m.sku == sku)

    def skus(self):
        return sorted({m.sku for m in self.movements})
