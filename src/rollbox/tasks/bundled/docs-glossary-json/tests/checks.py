"""Content checks for docs/glossary.json, derived from spec/tally-protocol.md."""
import os
import re


def _norm(text):
    text = str(text).replace("**", "").replace("`", "")
    return " ".join(text.split()).strip().rstrip(".").lower()


def _expected():
    """{term_lower: (term, definition_sentence, section_heading)}"""
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "spec", "tally-protocol.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    out = {}
    section = None
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        h = re.match(r"^(#+)\s+(.+)$", block)
        if h:
            section = h.group(2).strip()
            continue
        flat = " ".join(block.split())
        for sentence in re.split(r"(?<=\.)\s+(?=[A-Z])", flat):
            for term in re.findall(r"\*\*(.+?)\*\*", sentence):
                out[term.lower()] = (term, sentence.replace("**", ""), section)
    return out


def _entries(doc):
    assert isinstance(doc, dict) and isinstance(doc.get("terms"), list), "need a 'terms' list"
    out = {}
    for e in doc["terms"]:
        assert isinstance(e, dict), "entries must be objects"
        key = str(e.get("term", "")).strip().lower()
        assert key not in out, f"term {key!r} listed twice"
        out[key] = e
    return out


def check_every_defined_term(doc):
    got = set(_entries(doc))
    want = set(_expected())
    assert not (want - got), f"terms missing: {sorted(want - got)}"


def check_no_extra_terms(doc):
    got = set(_entries(doc))
    want = set(_expected())
    assert not (got - want), f"not defined in the spec: {sorted(got - want)}"


def check_sorted(doc):
    terms = [str(e.get("term", "")) for e in doc["terms"]] if isinstance(doc, dict) else None
    assert terms is not None
    assert terms == sorted(terms, key=str.lower), "terms are not sorted alphabetically"


def check_definitions(doc):
    got = _entries(doc)
    for key, (term, sentence, _) in _expected().items():
        assert key in got, f"term {term} missing"
        assert _norm(got[key].get("definition", "")) == _norm(sentence), f"{term}: definition differs from the spec"


def check_sections(doc):
    got = _entries(doc)
    for key, (term, _, section) in _expected().items():
        assert key in got, f"term {term} missing"
        assert _norm(got[key].get("section", "")) == _norm(section), f"{term}: wrong section {got[key].get('section')!r}"
