"""Plain values for the hidden tests' equality assertions (copied next to the tests as
`rollbox_judge_plain`; standalone on purpose).

The judge rewrites `assert a == b` (and `!=`) in hidden test files into
`assert plain(a) == plain(b)`. A plain value is built only of exact builtin and standard
library value types, whose `==` the code under test cannot change: an object whose `__eq__`
always answers True, a float or str subclass that lies, or a dict subclass with its own
comparison is reduced to its type and its fields, and compares equal only to what really has
the same type and fields.
"""

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import sys
from typing import Any

_EXACT = {
    int, float, complex, str, bytes, bool, type(None), range,
    decimal.Decimal, fractions.Fraction,
    datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone,
}  # fmt: skip
_DICTS = {dict, collections.OrderedDict, collections.defaultdict, collections.Counter}
_BUILTIN_BASES: tuple[Any, ...] = (
    int,
    float,
    complex,
    str,
    bytes,
    tuple,
    list,
    dict,
    set,
    frozenset,
)


def _own_eq(t: type) -> bool:
    """Whether a class (other than the builtins) defines its own comparison."""
    return any(
        "__eq__" in k.__dict__ or "__ne__" in k.__dict__
        for k in t.__mro__
        if k.__module__ != "builtins"
    )


def _name(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def plain(v: Any, _depth: int = 0) -> Any:
    if _depth > 50:
        raise ValueError("value nested too deeply to compare")
    t = type(v)
    if t in _EXACT:
        return v
    d = _depth + 1
    remote = sys.modules.get("rollbox_judge_remote")
    if remote is not None and isinstance(v, remote.Remote):
        # an object of the code under test's own process: the plain value computed there (made
        # plain again here, so that nothing but plain values is compared)
        return plain(v._rb_plain(), d)
    if t is list or t is tuple:
        return t(plain(x, d) for x in v)
    if t in _DICTS:
        return {plain(k, d): plain(x, d) for k, x in v.items()}
    if t is set or t is frozenset:
        return t(plain(x, d) for x in v)
    if isinstance(v, enum.Enum):
        return ("enum", _name(t), v.name)
    if isinstance(v, BaseException):
        return ("exception", _name(t), plain(v.args, d))
    if isinstance(v, type):
        return ("class", _name(v))
    if dataclasses.is_dataclass(v):
        fields = tuple((f.name, plain(getattr(v, f.name), d)) for f in dataclasses.fields(v))
        return ("dataclass", _name(t), fields)
    if isinstance(v, _BUILTIN_BASES) and not _own_eq(t):
        # a subclass that keeps the builtin comparison (a namedtuple, say) compares as its base
        for base in _BUILTIN_BASES:
            if isinstance(v, base):
                return plain(base(v), d)
    if not _own_eq(t):
        return ("identity", id(v))  # no comparison of its own: only itself is equal to it
    # its own __eq__: compared by type and fields, never through that __eq__
    state = getattr(v, "__dict__", None)
    if state is None:
        slots = [s for k in t.__mro__ for s in getattr(k, "__slots__", ())]
        state = {s: getattr(v, s) for s in slots if hasattr(v, s)}
    return ("object", _name(t), plain(dict(state), d))


_CONTAINERS = {list, tuple, set, frozenset, dict, str, bytes, range}


def contains(item: Any, container: Any) -> bool:
    """`item in container`, between plain values when the container is a builtin one (a custom
    container's own `__contains__` is the code under test's to define)."""
    if type(container) in _CONTAINERS:
        return plain(item) in plain(container)
    return item in container
