"""Import product lists from CSV files."""

from csvimport.importer import import_products
from csvimport.schema import COLUMNS, ImportError_, MissingColumnError, RowError

__all__ = ["COLUMNS", "ImportError_", "MissingColumnError", "RowError", "import_products"]
