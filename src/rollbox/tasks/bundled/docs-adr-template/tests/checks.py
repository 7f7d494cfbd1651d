"""Content checks for docs/adr/0003-adopt-nats-jetstream.md."""
import re
import unicodedata

SECTIONS = ["context", "considered options", "decision", "consequences"]
DECIDERS = {"priya raman", "tomas ortega", "mei chen"}


def _fold(name):
    decomposed = unicodedata.normalize("NFKD", name)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).lower().split())


def _meta(doc, label):
    assert isinstance(doc, str)
    pat = rf"^[ \t]*(?:[-*+][ \t]*)?\**{label}\**[ \t]*:[ \t]*\**[ \t]*(.+?)[ \t]*$"
    m = re.search(pat, doc, re.M | re.I)
    assert m, f"missing '{label}:' line"
    return m.group(1).strip().strip("*_` ").strip()


def _h2(doc):
    assert isinstance(doc, str)
    heads = list(re.finditer(r"^##[ \t]+(.+?)[ \t#]*$", doc, re.M))
    out = []
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        out.append((m.group(1).strip().lower(), doc[m.end():stop]))
    return out


def _section(doc, name):
    for title, body in _h2(doc):
        if title == name:
            return body
    raise AssertionError(f"no '## {name}' section")


def check_title(doc):
    assert isinstance(doc, str)
    h1 = re.findall(r"^#[ \t]+(.+?)[ \t]*$", doc, re.M)
    assert len(h1) == 1, "need exactly one level-1 heading"
    m = re.match(r"ADR-(\d{4}):\s*(\S.*)$", h1[0])
    assert m, "title must be 'ADR-NNNN: <title>'"
    assert m.group(1) == "0003", f"wrong ADR number {m.group(1)}"
    assert "nats" in m.group(2).lower(), "title must name the chosen technology"


def check_status(doc):
    assert _meta(doc, "status").lower() == "accepted"


def check_date(doc):
    assert _meta(doc, "date") == "2024-05-14"


def check_deciders(doc):
    raw = _meta(doc, "deciders")
    names = {_fold(n) for n in re.split(r",|\band\b", raw) if n.strip()}
    assert names == DECIDERS, f"deciders are {sorted(names)}"


def check_supersedes(doc):
    val = _meta(doc, "supersedes")
    assert re.fullmatch(r"ADR-0002", val.strip(), re.I), f"supersedes is {val!r}"


def check_sections(doc):
    titles = [t for t, _ in _h2(doc)]
    assert titles == SECTIONS, f"sections are {titles}"


def check_considered_options(doc):
    body = _section(doc, "considered options")
    items = [i.lower() for i in re.findall(r"^[ \t]*[-*+][ \t]+(.*)$", body, re.M)]
    assert len(items) == 4, f"expected 4 option bullets, found {len(items)}"
    for key in ("redis", "kafka", "nats", "rabbitmq"):
        hits = [i for i in items if key in i]
        assert len(hits) == 1, f"option {key!r} must appear in exactly one bullet"


def check_decision(doc):
    body = _section(doc, "decision").lower()
    assert "jetstream" in body, "decision must name NATS JetStream"
    assert "replay" in body, "decision must give the reason (replay)"


def check_consequences(doc):
    body = _section(doc, "consequences").lower()
    assert "cluster" in body and re.search(r"three|3", body), "must mention the three-node cluster"
    assert "q3" in body, "must mention the end-of-Q3 migration"
    assert "training" in body, "must mention the on-call training"


def check_no_placeholders(doc):
    assert isinstance(doc, str)
    assert "NNNN" not in doc, "placeholder NNNN left in the file"
    assert not re.search(r"<[^>\n]+>", doc), "template placeholder <...> left in the file"
