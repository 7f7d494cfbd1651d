import pytest

from inventory import InsufficientStock, Ledger, Movement, stock_report


def test_new_ledgers_start_empty():
    north = Ledger("north")
    north.receive("BOLT-8", 40, "po-17")
    south = Ledger("south")
    assert south.movements == []
    assert south.on_hand("BOLT-8") == 0
    assert south.skus() == []


def test_ledgers_do_not_share_movements():
    a = Ledger("a")
    b = Ledger("b")
    a.receive("NUT-3", 5)
    b.receive("NUT-3", 7)
    b.ship("NUT-3", 2)
    assert a.on_hand("NUT-3") == 5
    assert b.on_hand("NUT-3") == 5
    assert len(a.movements) == 1
    assert len(b.movements) == 2
    assert stock_report(Ledger("c")) == "Stock at c"


def test_shipping_checks_own_stock_only():
    full = Ledger("full")
    full.receive("WASHER", 100)
    empty = Ledger("empty")
    with pytest.raises(InsufficientStock):
        empty.ship("WASHER", 1)


def test_opening_movements_are_used():
    opening = [Movement("GEAR", 12, "opening"), Movement("GEAR", -2, "scrap")]
    ledger = Ledger("east", opening)
    assert ledger.on_hand("GEAR") == 10
    ledger.ship("GEAR", 10, "so-1")
    assert ledger.on_hand("GEAR") == 0
    with pytest.raises(InsufficientStock):
        ledger.ship("GEAR", 1)


def test_validation_and_report():
    ledger = Ledger("west")
    with pytest.raises(ValueError):
        ledger.receive("X", 0)
    with pytest.raises(ValueError):
        ledger.ship("X", -1)
    ledger.receive("SPRING", 4)
    ledger.receive("AXLE", 2)
    ledger.receive("CLIP", 3)
    ledger.ship("CLIP", 3)
    assert stock_report(ledger) == "Stock at west\n  AXLE: 2\n  SPRING: 4"
    assert ledger.skus() == ["AXLE", "CLIP", "SPRING"]
