"""Low-level CSV reading."""

import csv


def read_table(path, delimiter=","):
    """Return ``(header, rows)`` where rows are ``(line_number, cells)`` pairs.

    Line numbers are 1-based file lines (the header is line 1). Blank lines are skipped.
    """
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return [], []
        rows = []
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((reader.line_num, cells))
        return header, rows
