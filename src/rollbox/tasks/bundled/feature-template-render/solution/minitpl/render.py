"""Rendering of {{ path | filter }} placeholders."""

from minitpl.errors import TemplateError
from minitpl.filters import FILTERS

_OPEN = "{{"
_CLOSE = "}}"


def _resolve(path: str, context: dict):
    if not path or any(ch.isspace() for ch in path):
        raise TemplateError(f"invalid path {path!r}")
    value = context
    for segment in path.split("."):
        if not segment:
            raise TemplateError(f"empty segment in path {path!r}")
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif (
            isinstance(value, (list, tuple))
            and segment.isascii()
            and segment.isdigit()
            and int(segment) < len(value)
        ):
            value = value[int(segment)]
        else:
            raise TemplateError(f"cannot resolve {segment!r} in {path!r}")
    return value


def _evaluate(expression: str, context: dict) -> str:
    parts = [part.strip() for part in expression.split("|")]
    if not parts[0]:
        raise TemplateError("empty placeholder")
    value = _resolve(parts[0], context)
    for name in parts[1:]:
        if not name:
            raise TemplateError("empty filter name")
        if name not in FILTERS:
            raise TemplateError(f"unknown filter {name!r}")
        value = FILTERS[name](value)
    return "" if value is None else str(value)


def render(template: str, context: dict) -> str:
    """Return template with every placeholder replaced by its value from context."""
    out = []
    i = 0
    while True:
        start = template.find(_OPEN, i)
        if start == -1:
            out.append(template[i:])
            break
        if start > i and template[start - 1] == "\\":
            out.append(template[i : start - 1])
            out.append(_OPEN)
            i = start + len(_OPEN)
            continue
        out.append(template[i:start])
        end = template.find(_CLOSE, start + len(_OPEN))
        if end == -1:
            raise TemplateError(f"unclosed placeholder at {start}")
        out.append(_evaluate(template[start + len(_OPEN) : end], context))
        i = end + len(_CLOSE)
    return "".join(out)
