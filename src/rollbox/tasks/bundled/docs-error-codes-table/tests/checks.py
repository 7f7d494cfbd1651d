"""Content checks for docs/errors.md; the truth is the ApiError class tree of the workspace."""
import importlib
import os
import re
import sys


def _expected():
    """{code: {...}} for every documented error."""
    sys.dont_write_bytecode = True
    ws = os.environ["ROLLBOX_WORKSPACE"]
    if ws not in sys.path:
        sys.path.insert(0, ws)
    errors = importlib.import_module("payapi.errors")
    importlib.import_module("payapi.legacy")
    out = {}
    stack = [errors.ApiError]
    seen = set()
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub in seen:
                continue
            seen.add(sub)
            stack.append(sub)
            if sub.__name__.startswith("_") or sub.__dict__.get("code") is None:
                continue
            out[sub.code] = {
                "status": int(sub.http_status),
                "retryable": bool(sub.retryable),
                "deprecated": bool(sub.deprecated),
                "name": sub.__name__,
                "summary": (sub.__doc__ or "").strip().splitlines()[0].strip(),
            }
    return out


def _clean(cell):
    return cell.replace("`", "").strip()


def _sections(doc):
    assert isinstance(doc, str)
    heads = list(re.finditer(r"^##[ \t]+(?!#)(.+?)[ \t#]*$", doc, re.M))
    out = []
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        out.append((_clean(m.group(1)).replace("*", ""), doc[m.end():stop]))
    return out


def _rows(body):
    lines = [l.strip() for l in body.splitlines() if l.strip().startswith("|")]
    if not lines:
        return []
    def cells(line):
        return [_clean(c) for c in line.strip().strip("|").split("|")]
    header = [c.lower() for c in cells(lines[0])]
    for col in ("code", "http status", "retryable", "exception", "description"):
        assert col in header, f"table lacks a '{col}' column"
    rows = []
    for line in lines[1:]:
        cs = cells(line)
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cs if c):
            continue
        cs += [""] * (len(header) - len(cs))
        rows.append(dict(zip(header, cs)))
    return rows


def _by_code(doc):
    out = {}
    for title, body in _sections(doc):
        for r in _rows(body):
            code = r["code"].replace("*", "").strip()
            assert code not in out, f"code {code} listed twice"
            out[code] = dict(r, section=title)
    return out


def _each(doc):
    got = _by_code(doc)
    for code, want in sorted(_expected().items()):
        assert code in got, f"code {code} missing"
        yield code, got[code], want


def _desc_parts(text):
    """(is_marked_deprecated, rest) for a description cell."""
    m = re.match(r"^\*\*\s*deprecated\.?\s*\*\*\.?\s*(.*)$", text.strip(), re.I)
    if m:
        return True, m.group(1)
    return False, text


def _norm(text):
    return " ".join(text.replace("*", "").split()).rstrip(".").lower()


def check_title(doc):
    assert isinstance(doc, str)
    first = next((l for l in doc.splitlines() if l.strip()), "")
    assert re.match(r"^#[ \t]+payments api error codes[ \t]*$", first, re.I), "wrong first line"


def check_sections(doc):
    got = [t for t, _ in _sections(doc)]
    want = sorted({code.split("-")[0] for code in _expected()})
    assert got == want, f"sections are {got}, expected one per prefix in alphabetical order"


def check_all_codes_documented(doc):
    got = set(_by_code(doc))
    want = set(_expected())
    assert not (want - got), f"codes missing: {sorted(want - got)}"


def check_only_client_visible_codes(doc):
    got = set(_by_code(doc))
    want = set(_expected())
    assert not (got - want), f"codes that must not be documented: {sorted(got - want)}"


def check_codes_in_their_section_and_sorted(doc):
    for title, body in _sections(doc):
        codes = [r["code"].replace("*", "").strip() for r in _rows(body)]
        for c in codes:
            assert c.split("-")[0] == title, f"{c} is in section {title}"
        assert codes == sorted(codes), f"section {title} is not sorted by code"


def check_http_status(doc):
    for code, row, want in _each(doc):
        assert row["http status"].strip() == str(want["status"]), f"{code}: HTTP status {row['http status']!r}"


def check_retryable(doc):
    for code, row, want in _each(doc):
        assert row["retryable"].strip().lower() == ("yes" if want["retryable"] else "no"), f"{code}: wrong retryable"


def check_exception_names(doc):
    for code, row, want in _each(doc):
        name = row["exception"].replace("*", "").strip().split(".")[-1]
        assert name == want["name"], f"{code}: exception {row['exception']!r}"


def check_descriptions(doc):
    for code, row, want in _each(doc):
        _, rest = _desc_parts(row["description"])
        assert _norm(rest) == _norm(want["summary"]), f"{code}: description differs from the docstring"


def check_deprecation_marks(doc):
    for code, row, want in _each(doc):
        marked, rest = _desc_parts(row["description"])
        assert marked == want["deprecated"], f"{code}: deprecated mark should be {want['deprecated']}"
        assert "deprecated" not in rest.lower(), f"{code}: stray 'deprecated' in description"
