from decimal import Decimal

import pytest

from money import minor_units, quantize, to_minor


@pytest.mark.parametrize(
    "amount, currency, expected",
    [
        ("6.125", "EUR", "6.13"),
        ("0.125", "USD", "0.13"),
        ("10.005", "gbp", "10.01"),
        ("2.5", "JPY", "3"),
        ("4.5", "JPY", "5"),
        ("1.0005", "KWD", "1.001"),
        ("-4.865", "EUR", "-4.87"),
        ("-0.5", "JPY", "-1"),
    ],
)
def test_halves_round_away_from_zero(amount, currency, expected):
    result = quantize(amount, currency)
    assert isinstance(result, Decimal)
    assert result == Decimal(expected)
    assert str(result) == expected


@pytest.mark.parametrize(
    "amount, currency, expected",
    [
        ("2.344", "EUR", "2.34"),
        ("2.346", "EUR", "2.35"),
        ("7", "USD", "7.00"),
        ("3.4999", "JPY", "3"),
        ("0.0004", "KWD", "0.000"),
    ],
)
def test_non_halves_round_to_nearest(amount, currency, expected):
    assert str(quantize(amount, currency)) == expected


def test_accepts_ints_floats_and_decimals():
    assert quantize(3, "EUR") == Decimal("3.00")
    assert quantize(1.005, "EUR") == Decimal("1.01")
    assert quantize(Decimal("0.015"), "USD") == Decimal("0.02")


def test_to_minor_units():
    assert to_minor("3.445", "EUR") == 345
    assert to_minor("12.5", "JPY") == 13
    assert to_minor("0.0125", "KWD") == 13
    assert to_minor("-1.115", "USD") == -112


def test_unknown_currency_rejected():
    with pytest.raises(ValueError):
        quantize("1.00", "XYZ")
    assert minor_units("kwd") == 3
