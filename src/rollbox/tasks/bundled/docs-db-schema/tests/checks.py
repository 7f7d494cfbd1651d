"""Content checks for docs/schema.md; the truth is the schema built in an in-memory SQLite DB."""
import glob
import os
import re
import sqlite3


def _db():
    ws = os.environ["ROLLBOX_WORKSPACE"]
    con = sqlite3.connect(":memory:")
    with open(os.path.join(ws, "db", "schema.sql"), encoding="utf-8") as fh:
        con.executescript(fh.read())
    for path in sorted(glob.glob(os.path.join(ws, "db", "migrations", "*.sql"))):
        with open(path, encoding="utf-8") as fh:
            con.executescript(fh.read())
    return con


def _expected():
    con = _db()
    tables = {}
    names = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    for t in names:
        fks = [{"from": r[3], "table": r[2], "to": r[4], "on_delete": r[6]}
               for r in con.execute(f"PRAGMA foreign_key_list('{t}')")]
        fk_cols = {f["from"] for f in fks}
        cols = []
        for _, name, ctype, notnull, dflt, pk in con.execute(f"PRAGMA table_info('{t}')"):
            key = set()
            if pk:
                key.add("PK")
            if name in fk_cols:
                key.add("FK")
            cols.append({"name": name, "type": ctype.upper(), "nullable": "no" if (notnull or pk) else "yes",
                         "default": dflt or "", "key": key})
        indexes = []
        for _, iname, unique, origin, _ in con.execute(f"PRAGMA index_list('{t}')"):
            if origin != "c":
                continue
            icols = [r[2] for r in sorted(con.execute(f"PRAGMA index_info('{iname}')"))]
            indexes.append({"name": iname, "unique": bool(unique), "columns": icols})
        tables[t] = {"columns": cols, "fks": fks, "indexes": indexes}
    return names, tables


def _clean(cell):
    return cell.replace("`", "").replace("*", "").strip()


def _sections(doc):
    """[(table_name, body)] for every level-2 section."""
    assert isinstance(doc, str)
    heads = list(re.finditer(r"^##[ \t]+(?!#)(.+?)[ \t#]*$", doc, re.M))
    out = []
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        out.append((_clean(m.group(1)).lower(), doc[m.end():stop]))
    return out


def _section_map(doc):
    return dict(_sections(doc))


def _subsection(body, title):
    m = re.search(rf"^###[ \t]+{title}[ \t#]*$(.*?)(?=^###?[ \t]|\Z)", body, re.M | re.S | re.I)
    return m.group(1) if m else None


def _bullets(text):
    if text is None:
        return []
    return [_clean(b) for b in re.findall(r"^[ \t]*[-*+][ \t]+(.+)$", text, re.M)]


def _column_rows(body):
    lines = [l.strip() for l in body.splitlines() if l.strip().startswith("|")]
    assert lines, "no column table"
    def cells(line):
        return [_clean(c) for c in line.strip().strip("|").split("|")]
    header = [c.lower() for c in cells(lines[0])]
    for col in ("column", "type", "nullable", "default", "key"):
        assert col in header, f"column table lacks a '{col}' column"
    rows = []
    for line in lines[1:]:
        cs = cells(line)
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cs if c):
            continue
        cs += [""] * (len(header) - len(cs))
        rows.append(dict(zip(header, cs)))
    return rows


def _table_rows(doc):
    names, tables = _expected()
    secs = _section_map(doc)
    for t in names:
        assert t in secs, f"no section for table {t}"
        rows = _column_rows(secs[t])
        yield t, rows, tables[t]


def _unquote(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] == "'":
        v = v[1:-1]
    return v


def check_title(doc):
    assert isinstance(doc, str)
    first = next((l for l in doc.splitlines() if l.strip()), "")
    assert re.match(r"^#[ \t]+database schema[ \t]*$", first, re.I), "first line must be '# Database schema'"


def check_tables_in_order(doc):
    got = [t for t, _ in _sections(doc)]
    names, _ = _expected()
    assert got == names, f"table sections are {got}, expected {names}"


def check_columns(doc):
    for t, rows, want in _table_rows(doc):
        got = [r["column"] for r in rows]
        exp = [c["name"] for c in want["columns"]]
        assert got == exp, f"{t}: columns {got}, expected {exp}"


def check_types(doc):
    for t, rows, want in _table_rows(doc):
        assert len(rows) == len(want["columns"]), f"{t}: wrong number of rows"
        for r, c in zip(rows, want["columns"]):
            assert r["type"].upper() == c["type"], f"{t}.{c['name']}: wrong type {r['type']!r}"


def check_nullable(doc):
    for t, rows, want in _table_rows(doc):
        assert len(rows) == len(want["columns"]), f"{t}: wrong number of rows"
        for r, c in zip(rows, want["columns"]):
            assert r["nullable"].lower() == c["nullable"], f"{t}.{c['name']}: nullable should be {c['nullable']}"


def check_defaults(doc):
    for t, rows, want in _table_rows(doc):
        assert len(rows) == len(want["columns"]), f"{t}: wrong number of rows"
        for r, c in zip(rows, want["columns"]):
            got = r["default"].strip()
            want_d = c["default"]
            if want_d.startswith("'"):
                ok = got in (want_d, _unquote(want_d))
            else:
                ok = got.lower() == want_d.lower()
            assert ok, f"{t}.{c['name']}: default {got!r}, expected {c['default']!r}"


def check_keys(doc):
    for t, rows, want in _table_rows(doc):
        assert len(rows) == len(want["columns"]), f"{t}: wrong number of rows"
        for r, c in zip(rows, want["columns"]):
            got = {k.upper() for k in re.findall(r"[A-Za-z]+", r["key"])}
            assert got == c["key"], f"{t}.{c['name']}: key {sorted(got)}, expected {sorted(c['key'])}"


def check_foreign_keys(doc):
    names, tables = _expected()
    secs = _section_map(doc)
    for t in names:
        assert t in secs, f"no section for table {t}"
        bullets = [b.lower() for b in _bullets(_subsection(secs[t], "foreign keys"))]
        fks = tables[t]["fks"]
        assert len(bullets) == len(fks), f"{t}: {len(bullets)} foreign key bullets, expected {len(fks)}"
        for fk in fks:
            target = f"{fk['table']}.{fk['to']}".lower()
            hits = [b for b in bullets if re.match(rf"{re.escape(fk['from'].lower())}\b", b) and target in b]
            assert hits, f"{t}: foreign key {fk['from']} -> {target} missing"
            if fk["on_delete"] != "NO ACTION":
                assert re.search(rf"on delete {fk['on_delete'].lower()}", hits[0]), f"{t}.{fk['from']}: ON DELETE action missing"
            else:
                assert "on delete" not in hits[0], f"{t}.{fk['from']}: declares no ON DELETE action"


def check_indexes(doc):
    names, tables = _expected()
    secs = _section_map(doc)
    for t in names:
        assert t in secs, f"no section for table {t}"
        bullets = [b.lower() for b in _bullets(_subsection(secs[t], "indexes"))]
        idx = tables[t]["indexes"]
        assert len(bullets) == len(idx), f"{t}: {len(bullets)} index bullets, expected {len(idx)}"
        for ix in idx:
            hits = [b for b in bullets if re.match(rf"{re.escape(ix['name'].lower())}\b", b)]
            assert hits, f"{t}: index {ix['name']} missing"
            rest = hits[0][len(ix["name"]):]
            cols = re.findall(r"[a-z_][a-z0-9_]*", rest.split("(")[0])
            cols = [c for c in cols if c != "on"]
            assert cols == [c.lower() for c in ix["columns"]], f"{t}: index {ix['name']} columns {cols}"
            assert ("unique" in rest) == ix["unique"], f"{t}: index {ix['name']} unique flag wrong"
