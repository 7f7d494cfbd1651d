from decimal import Decimal

import pytest

from csvimport import MissingColumnError, RowError, import_products

BOM = "\ufeff"


def write(tmp_path, text, name="products.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_bom_with_required_first_column(tmp_path):
    path = write(tmp_path, BOM + "price,sku,qty\n9.99,K-7,3\n0.5,K-8,\n")
    assert import_products(path) == [
        {"price": Decimal("9.99"), "sku": "K-7", "qty": 3},
        {"price": Decimal("0.5"), "sku": "K-8", "qty": 0},
    ]


def test_bom_with_optional_first_column_keeps_it(tmp_path):
    path = write(tmp_path, BOM + "Name;SKU;Price\nCrème brûlée dish;D-01;12.00\n", "semi.csv")
    products = import_products(path, delimiter=";")
    assert products == [{"name": "Crème brûlée dish", "sku": "D-01", "price": Decimal("12.00")}]


def test_bom_with_quoted_header(tmp_path):
    path = write(tmp_path, BOM + '"sku","price"\r\n"Z-9","1.5"\r\n')
    assert import_products(path) == [{"sku": "Z-9", "price": Decimal("1.5")}]


def test_bom_file_row_errors_report_file_lines(tmp_path):
    path = write(tmp_path, BOM + "sku,price\nA,1\n\nB,oops\n")
    with pytest.raises(RowError) as info:
        import_products(path)
    assert info.value.line == 4


def test_plain_utf8_file_still_imports(tmp_path):
    path = write(tmp_path, " SKU , PRICE ,colour\nP-1,3.25,red\nP-2,4,blue\n")
    assert import_products(path) == [
        {"sku": "P-1", "price": Decimal("3.25")},
        {"sku": "P-2", "price": Decimal("4")},
    ]


def test_missing_column_still_reported(tmp_path):
    path = write(tmp_path, BOM + "sku,name\nA,B\n")
    with pytest.raises(MissingColumnError) as info:
        import_products(path)
    assert info.value.column == "price"
    empty = write(tmp_path, "", "empty.csv")
    with pytest.raises(MissingColumnError):
        import_products(empty)


def test_row_validation_unchanged(tmp_path):
    with pytest.raises(RowError) as info:
        import_products(write(tmp_path, "sku,price,qty\nA,1,2\nB,2,-1\n"))
    assert info.value.line == 3
    with pytest.raises(RowError):
        import_products(write(tmp_path, "sku,price\n ,1\n", "blank_sku.csv"))
