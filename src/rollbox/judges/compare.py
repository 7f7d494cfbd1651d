"""Comparing output files as plain values: JSON structurally, CSV cell by cell, text by lines."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any


def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _close(a: float, b: float, rel: float) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3) or (a == b)


def diff_values(got: Any, want: Any, rel: float, where: str = "$") -> str | None:
    """None when equal; else where and how the values first differ."""
    if _num(got) and _num(want):
        return None if _close(float(got), float(want), rel) else f"{where}: {got!r} != {want!r}"
    if type(got) is not type(want):
        return f"{where}: expected {type(want).__name__}, got {type(got).__name__}"
    if isinstance(want, dict):
        if set(got) != set(want):
            missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
            return f"{where}: keys differ (missing {missing[:5]}, unexpected {extra[:5]})"
        for k in want:
            d = diff_values(got[k], want[k], rel, f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where}: expected {len(want)} items, got {len(got)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            d = diff_values(g, w, rel, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if got == want else f"{where}: {got!r} != {want!r}"


def _cell(s: str) -> float | str:
    s = s.strip()
    try:
        f = float(s)
    except ValueError:
        return s
    return s if math.isnan(f) else f


def _text_lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare_file(name: str, got: bytes, want: bytes, rel: float) -> str | None:
    """None when the output matches; else a short explanation."""
    try:
        got_text = got.decode("utf-8")
    except UnicodeDecodeError:
        return "the output is not UTF-8 text"
    want_text = want.decode("utf-8")
    if name.endswith(".json"):
        try:
            got_v = json.loads(got_text)
        except ValueError as e:
            return f"the output is not valid JSON: {e}"
        return diff_values(got_v, json.loads(want_text), rel)
    if name.endswith(".csv"):
        got_rows = [[_cell(c) for c in row] for row in csv.reader(io.StringIO(got_text)) if row]
        want_rows = [[_cell(c) for c in row] for row in csv.reader(io.StringIO(want_text)) if row]
        return diff_values(got_rows, want_rows, rel, "rows")
    got_l, want_l = _text_lines(got_text), _text_lines(want_text)
    if got_l == want_l:
        return None
    for i, (g, w) in enumerate(zip(got_l, want_l, strict=False)):
        if g != w:
            return f"line {i + 1}: {g!r} != {w!r}"
    return f"expected {len(want_l)} lines, got {len(got_l)}"
