"""Turn a product CSV into a list of product dicts."""

from csvimport.reader import read_table
from csvimport.schema import COLUMNS, MissingColumnError, RowError


def _normalise(name):
    return name.strip().lower()


def import_products(path, delimiter=","):
    """Read the products in ``path``.

    Header names are matched case-insensitively and ignoring surrounding spaces; unknown
    columns are ignored. Each product is a dict with the known columns that the file has.
    Raises MissingColumnError if a required column is absent and RowError (with the file
    line number) for a row that cannot be parsed.
    """
    header, rows = read_table(path, delimiter)
    positions = {}
    for index, name in enumerate(header):
        key = _normalise(name)
        if key in COLUMNS and key not in positions:
            positions[key] = index
    for column, (required, _) in COLUMNS.items():
        if required and column not in positions:
            raise MissingColumnError(column)

    products = []
    for line, cells in rows:
        product = {}
        for column, index in positions.items():
            _, parse = COLUMNS[column]
            raw = cells[index] if index < len(cells) else ""
            try:
                product[column] = parse(raw)
            except ValueError as exc:
                raise RowError(line, f"{column}: {exc}") from None
        if not product["sku"]:
            raise RowError(line, "empty sku")
        products.append(product)
    return products
