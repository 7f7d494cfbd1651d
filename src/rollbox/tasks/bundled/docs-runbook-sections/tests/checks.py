"""Content checks for docs/runbooks/queue-backlog.md."""
import os
import re

SECTIONS = ["summary", "alerts", "diagnosis", "mitigation", "escalation"]


def _notes():
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "notes", "queue-backlog-notes.txt")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _norm_cmd(line):
    line = line.strip()
    if line.startswith("$"):
        line = line[1:].strip()
    return " ".join(line.split())


def _commands(part):
    """Commands ('$ ...' lines) listed under the notes' '<part>:' header."""
    text = _notes()
    m = re.search(rf"^{part}:\s*\n(.*?)(?:\n\s*\n|\Z)", text, re.M | re.S)
    assert m, f"notes have no {part} part"
    return [_norm_cmd(l) for l in m.group(1).splitlines() if l.strip().startswith("$")]


def _alerts():
    text = _notes()
    m = re.search(r"^alerts that fire:\s*\n(.*?)(?:\n\s*\n|\Z)", text, re.M | re.S)
    return re.findall(r"^\s*-\s*(\w+)", m.group(1), re.M)


def _strip_fences(doc):
    # blank out fenced blocks so '#' lines inside code are not taken as headings
    return re.sub(r"^[ \t]*```.*?^[ \t]*```", lambda m: re.sub(r"[^\n]", " ", m.group(0)), doc, flags=re.M | re.S)


def _h2_sections(doc):
    """[(title_lower, body)] for every level-2 section, in order."""
    assert isinstance(doc, str)
    plain = _strip_fences(doc)
    heads = [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"^##[ \t]+(.+?)[ \t#]*$", plain, re.M)]
    out = []
    for i, (start, end, title) in enumerate(heads):
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(doc)
        out.append((title.strip().lower(), doc[end:stop]))
    return out


def _section(doc, name):
    for title, body in _h2_sections(doc):
        if title == name:
            return body
    raise AssertionError(f"no '## {name.title()}' section")


def _code_lines(body):
    lines = []
    for block in re.findall(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", body, re.M | re.S):
        lines += [_norm_cmd(l) for l in block.splitlines() if l.strip()]
    return lines


def _in_order(wanted, lines):
    pos = -1
    for cmd in wanted:
        assert cmd in lines, f"command missing from code blocks: {cmd}"
        idx = lines.index(cmd)
        assert idx > pos, f"command out of order: {cmd}"
        pos = idx


def check_title(doc):
    assert isinstance(doc, str)
    h1 = re.findall(r"^#[ \t]+(.+?)[ \t#]*$", _strip_fences(doc), re.M)
    assert len(h1) == 1, "need exactly one level-1 heading"
    assert "queue backlog" in h1[0].lower(), "title must mention Queue Backlog"


def check_section_order(doc):
    titles = [t for t, _ in _h2_sections(doc)]
    assert titles == SECTIONS, f"level-2 sections are {titles}"


def check_summary(doc):
    body = _section(doc, "summary").lower()
    assert len(body.split()) >= 8, "summary is too short"
    assert "pending" in body or "export" in body, "summary must say what customers notice"


def check_alerts(doc):
    body = _section(doc, "alerts")
    items = re.findall(r"^\s*[-*+]\s+(.*)$", body, re.M)
    named = set()
    for item in items:
        named.update(re.findall(r"`([^`]+)`", item))
    want = set(_alerts())
    assert want <= named, f"alerts missing (as backticked bullet items): {sorted(want - named)}"
    assert len(items) == len(want), f"expected {len(want)} alert bullets, found {len(items)}"


def check_diagnosis_commands(doc):
    _in_order(_commands("checking"), _code_lines(_section(doc, "diagnosis")))


def check_mitigation_commands(doc):
    _in_order(_commands("fixing"), _code_lines(_section(doc, "mitigation")))


def check_scale_down_advice(doc):
    body = _section(doc, "mitigation")
    prose = _strip_fences(body)
    assert re.search(r"\b4\b", prose), "mitigation must say to scale back to 4 replicas"
    assert re.search(r"\b500\b", prose), "mitigation must give the backlog threshold"


def check_escalation(doc):
    body = _section(doc, "escalation")
    assert "data-platform-oncall" in body, "escalation must name the pager rotation"
    assert "#inc-jobs" in body, "escalation must name the channel"
    assert re.search(r"\b30\b", body), "escalation must give the 30 minute limit"


def check_commands_not_misplaced(doc):
    diag = set(_code_lines(_section(doc, "diagnosis")))
    mit = set(_code_lines(_section(doc, "mitigation")))
    assert not (set(_commands("fixing")) & diag), "fixing commands do not belong in Diagnosis"
    assert not (set(_commands("checking")) & mit), "checking commands do not belong in Mitigation"
