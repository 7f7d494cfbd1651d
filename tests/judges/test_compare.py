"""Outputs compared as plain values."""

from __future__ import annotations

from rollbox.judges.compare import compare_file


def test_json_is_compared_as_values() -> None:
    assert (
        compare_file("a.json", b'{"b": 1.0, "a": [1, 2]}', b'{"a": [1, 2], "b": 1}', 1e-6) is None
    )
    assert compare_file("a.json", b'{"a": 1.0000001}', b'{"a": 1}', 1e-6) is None
    assert "1.1" in (compare_file("a.json", b'{"a": 1.1}', b'{"a": 1}', 1e-6) or "")
    assert "keys differ" in (compare_file("a.json", b'{"a": 1, "x": 2}', b'{"a": 1}', 0) or "")
    assert "items" in (compare_file("a.json", b"[1, 2]", b"[2, 1, 3]", 0) or "")
    assert compare_file("a.json", b"[2, 1]", b"[1, 2]", 0) is not None, "list order counts"
    assert "not valid JSON" in (compare_file("a.json", b"{", b"{}", 0) or "")
    # a bool is not a number, and a string is not a number
    assert compare_file("a.json", b"true", b"1", 0) is not None
    assert compare_file("a.json", b'"1"', b"1", 0) is not None


def test_csv_cells_numeric_or_stripped() -> None:
    want = b"region,total\nnorth,10.50\nsouth,3\n"
    assert compare_file("r.csv", b"region,total\r\nnorth, 10.5\nsouth,3.0\n", want, 1e-6) is None
    assert compare_file("r.csv", b"region,total\nsouth,3\nnorth,10.5\n", want, 1e-6) is not None
    assert compare_file("r.csv", b"region,total\nnorth,10.6\nsouth,3\n", want, 1e-6) is not None


def test_text_ignores_trailing_whitespace_only() -> None:
    assert compare_file("r.txt", b"a  \nb\n\n\n", b"a\nb", 0) is None
    assert "line 2" in (compare_file("r.txt", b"a\nc\n", b"a\nb\n", 0) or "")
    assert compare_file("r.txt", b" a\n", b"a\n", 0) is not None
    assert compare_file("r.txt", b"\xff", b"a", 0) == "the output is not UTF-8 text"
