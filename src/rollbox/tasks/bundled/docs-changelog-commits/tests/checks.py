"""Content checks for CHANGELOG.md, derived from the workspace's commits.txt."""
import os
import re

LINE = re.compile(r"^(?P<hash>[0-9a-f]{7,}) (?P<date>\d{4}-\d{2}-\d{2}) (?:\((?P<deco>[^)]*)\) )?(?P<subject>.+)$")
CC = re.compile(r"^(?P<type>[a-z]+)(?:\((?P<scope>[^)]+)\))?(?P<bang>!)?: (?P<desc>.+)$")
ORDER = ["breaking changes", "added", "changed", "fixed"]
SECTION_OF = {"feat": "added", "perf": "changed", "refactor": "changed", "fix": "fixed"}


def _commits():
    """[(release, date_of_release_or_None, section_or_None, description)]"""
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "commits.txt")
    out = []
    release, rdate = "unreleased", None
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            tag = re.search(r"tag: v(\d+\.\d+\.\d+)", m.group("deco") or "")
            if tag:
                release, rdate = tag.group(1), m.group("date")
            cc = CC.match(m.group("subject"))
            section = None
            if cc:
                section = "breaking changes" if cc.group("bang") else SECTION_OF.get(cc.group("type"))
            desc = cc.group("desc") if cc else m.group("subject")
            out.append((release, rdate, section, desc))
    return out


def _releases():
    rel = []
    for release, rdate, _, _ in _commits():
        if not rel or rel[-1][0] != release:
            rel.append((release, rdate))
    return rel


def _norm(text):
    text = re.sub(r"\*\*[^*]+:\*\*", "", text)  # optional **scope:** prefix
    text = text.replace("`", "").replace("*", "")
    return " ".join(text.lower().split()).rstrip(".")


def _parse(doc):
    """{release: {"date": str|None, "sections": [(name, [bullet, ...])]}} plus release order."""
    assert isinstance(doc, str)
    order, data, cur, sec = [], {}, None, None
    for line in doc.splitlines():
        h2 = re.match(r"^##[ \t]+(?!#)(.+?)[ \t]*$", line)
        h3 = re.match(r"^###[ \t]+(.+?)[ \t]*$", line)
        if h2:
            m = re.match(r"^\[?([^\]\s]+)\]?(?:\s*[-–]\s*(\S+))?", h2.group(1))
            cur = m.group(1).lower().lstrip("v") if m.group(1).lower() != "unreleased" else "unreleased"
            assert cur not in data, f"release {cur} appears twice"
            order.append(cur)
            data[cur] = {"date": m.group(2), "sections": []}
            sec = None
        elif h3:
            assert cur is not None, "level-3 heading outside a release"
            sec = (h3.group(1).strip().lower(), [])
            data[cur]["sections"].append(sec)
        else:
            b = re.match(r"^[ \t]*[-*+][ \t]+(.+)$", line)
            if b and sec is not None:
                sec[1].append(_norm(b.group(1)))
    return order, data


def _expected_entries(section):
    want = {}
    for release, _, sec, desc in _commits():
        if sec == section:
            want.setdefault(release, []).append(_norm(desc))
    return want


def _check_section(doc, section):
    _, data = _parse(doc)
    for release, descs in _expected_entries(section).items():
        assert release in data, f"release {release} missing"
        secs = dict(data[release]["sections"])
        assert section in secs, f"{release}: no '{section}' section"
        bullets = secs[section]
        for d in descs:
            assert any(b == d or b.endswith(d) for b in bullets), f"{release}/{section}: missing entry '{d}'"
        assert len(bullets) == len(descs), f"{release}/{section}: {len(bullets)} bullets, expected {len(descs)}"


def check_title(doc):
    assert isinstance(doc, str)
    first = next((l for l in doc.splitlines() if l.strip()), "")
    assert re.match(r"^#[ \t]+changelog[ \t]*$", first, re.I), "first line must be '# Changelog'"


def check_release_order(doc):
    order, _ = _parse(doc)
    want = [r for r, _ in _releases()]
    assert order == want, f"releases are {order}, expected {want}"


def check_release_dates(doc):
    _, data = _parse(doc)
    for release, rdate in _releases():
        assert release in data, f"release {release} missing"
        if rdate:
            assert data[release]["date"] == rdate, f"{release}: wrong date {data[release]['date']}"


def check_section_layout(doc):
    _, data = _parse(doc)
    needed = {}
    for release, _, sec, _ in _commits():
        if sec:
            needed.setdefault(release, set()).add(sec)
    for release, _ in _releases():
        assert release in data, f"release {release} missing"
        names = [n for n, _ in data[release]["sections"]]
        want = [s for s in ORDER if s in needed.get(release, set())]
        assert names == want, f"{release}: sections {names}, expected {want}"


def check_breaking_changes(doc):
    _check_section(doc, "breaking changes")


def check_added(doc):
    _check_section(doc, "added")


def check_changed(doc):
    _check_section(doc, "changed")


def check_fixed(doc):
    _check_section(doc, "fixed")


def check_left_out_commits(doc):
    _, data = _parse(doc)
    bullets = [b for r in data.values() for _, bs in r["sections"] for b in bs]
    for _, _, sec, desc in _commits():
        if sec is None:
            d = _norm(desc)
            assert not any(d in b for b in bullets), f"should be left out: '{desc}'"
