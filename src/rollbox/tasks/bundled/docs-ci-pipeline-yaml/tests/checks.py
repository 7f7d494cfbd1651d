"""Content checks for ci/pipeline.yaml, derived from the workspace's Makefile."""
import os
import re

ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?=|:=|=)\s*(.*?)\s*$")
RULE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)([^#]*?)(?:##\s*(.*?))?\s*$")


def _makefile():
    with open(os.path.join(os.environ["ROLLBOX_WORKSPACE"], "Makefile"), encoding="utf-8") as fh:
        return fh.read().splitlines()


def _expand(text, variables):
    for _ in range(20):
        new = re.sub(r"\$(?:\(([A-Za-z_][A-Za-z0-9_]*)\)|\{([A-Za-z_][A-Za-z0-9_]*)\})",
                     lambda m: variables.get(m.group(1) or m.group(2), ""), text)
        if new == text:
            break
        text = new
    return text


def _expected():
    variables, rules, order = {}, {}, []
    current = None
    for line in _makefile():
        if line.startswith("\t"):
            if current:
                rules[current]["recipe"].append(line[1:])
            continue
        current = None
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = RULE.match(line)
        if m and not line.startswith("."):
            name = m.group(1)
            comment = m.group(3) or ""
            rules[name] = {"prereqs": m.group(2).split(), "comment": comment, "recipe": []}
            order.append(name)
            current = name
            continue
        a = ASSIGN.match(line)
        if a:
            variables[a.group(1)] = a.group(2)
    jobs = [n for n in order if re.match(r"ci:", rules[n]["comment"])]
    out = {}
    for n in jobs:
        r = rules[n]
        needs = [p for p in r["prereqs"] if p in jobs]
        cmds = []
        for line in r["recipe"]:
            line = line.lstrip("@-").strip()
            # protect $$ while expanding, then turn it into $
            line = _expand(line.replace("$$", "\0"), variables).replace("\0", "$")
            cmds.append(line)
        stage = 0 if not needs else 1 + max(out[p]["stage"] for p in needs)
        out[n] = {"description": r["comment"][3:].strip(), "needs": needs, "stage": stage, "commands": cmds}
    return jobs, out


def _jobs(doc):
    assert isinstance(doc, dict) and isinstance(doc.get("jobs"), list), "need a 'jobs' list"
    out = {}
    for j in doc["jobs"]:
        assert isinstance(j, dict), "jobs must be mappings"
        assert j.get("name") not in out, f"job {j.get('name')} listed twice"
        out[j.get("name")] = j
    return out


def _each(doc):
    got = _jobs(doc)
    _, want = _expected()
    for name, w in want.items():
        assert name in got, f"job {name} missing"
        yield name, got[name], w


def check_job_names(doc):
    got = set(_jobs(doc))
    order, _ = _expected()
    assert not (set(order) - got), f"jobs missing: {sorted(set(order) - got)}"
    assert not (got - set(order)), f"not CI jobs: {sorted(map(str, got - set(order)))}"


def check_job_order(doc):
    order, _ = _expected()
    got = [j.get("name") for j in doc["jobs"]] if isinstance(doc, dict) and isinstance(doc.get("jobs"), list) else None
    assert got == order, f"jobs are in order {got}"


def check_descriptions(doc):
    for name, g, w in _each(doc):
        assert " ".join(str(g.get("description", "")).split()) == w["description"], f"{name}: wrong description"


def check_needs(doc):
    for name, g, w in _each(doc):
        assert list(g.get("needs") or []) == w["needs"], f"{name}: needs {g.get('needs')}, expected {w['needs']}"


def check_stages(doc):
    for name, g, w in _each(doc):
        stage = g.get("stage")
        assert isinstance(stage, int) and not isinstance(stage, bool) and stage == w["stage"], f"{name}: wrong stage {stage!r}"


def check_commands(doc):
    for name, g, w in _each(doc):
        cmds = g.get("commands")
        assert isinstance(cmds, list), f"{name}: commands must be a list"
        got = [" ".join(str(c).split()) for c in cmds]
        exp = [" ".join(c.split()) for c in w["commands"]]
        assert got == exp, f"{name}: commands {got}"


def check_no_make_syntax_left(doc):
    for name, g, _ in _each(doc):
        for c in g.get("commands") or []:
            c = str(c)
            assert not re.search(r"\$[({]", c), f"{name}: unexpanded variable in {c!r}"
            assert "$$" not in c, f"{name}: '$$' must become '$' in {c!r}"
            assert not c.startswith(("@", "-", "\t")), f"{name}: recipe prefix left in {c!r}"
