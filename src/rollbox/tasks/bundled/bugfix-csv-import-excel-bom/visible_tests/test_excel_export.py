from decimal import Decimal

from csvimport import import_products


def test_excel_utf8_export_imports(tmp_path):
    path = tmp_path / "export.csv"
    # Excel's "CSV UTF-8" format starts the file with a byte order mark.
    path.write_bytes("\ufeffSKU,Name,Price\r\nA-1,Widget,2.50\r\n".encode("utf-8"))
    assert import_products(path) == [{"sku": "A-1", "name": "Widget", "price": Decimal("2.50")}]
