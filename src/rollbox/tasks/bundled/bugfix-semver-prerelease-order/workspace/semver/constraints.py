"""Simple constraints: comparisons joined by commas, all of which must hold."""

import re

from semver.compare import compare
from semver.version import parse

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")
_OPS = {
    ">=": lambda c: c >= 0,
    "<=": lambda c: c <= 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
    ">": lambda c: c > 0,
    "<": lambda c: c < 0,
}


def satisfies(version, constraint):
    """Whether ``version`` meets every clause of e.g. ``">=1.2.0, <2.0.0"``."""
    v = parse(version)
    for clause in constraint.split(","):
        m = _CLAUSE.match(clause)
        if not m:
            raise ValueError(f"bad constraint clause: {clause!r}")
        op, other = m.groups()
        if not _OPS[op](compare(v, parse(other))):
            return False
    return True
