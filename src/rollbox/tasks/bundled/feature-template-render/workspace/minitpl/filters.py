"""Filters usable in placeholders: {{ value | name }}.

Each filter takes the current value and returns a new one.
"""


def _length(value):
    return len(value)


def _money(value):
    return f"{value:,.2f}"


def _first(value):
    return value[0]


FILTERS = {
    "upper": lambda value: str(value).upper(),
    "lower": lambda value: str(value).lower(),
    "title": lambda value: str(value).title(),
    "strip": lambda value: str(value).strip(),
    "length": _length,
    "money": _money,
    "first": _first,
}
