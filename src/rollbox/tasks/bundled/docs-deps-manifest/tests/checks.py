"""Content checks for deps.yaml, derived from the workspace's import statements."""
import ast
import os
import re
import sys

LOCAL = {"app"}


def _ws():
    return os.environ["ROLLBOX_WORKSPACE"]


def _mapping():
    out = {}
    with open(os.path.join(_ws(), "notes", "import-names.txt"), encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                imp, dist = line.split()
                out[imp] = dist
    return out


def _imports():
    """{top-level import name: set of files}"""
    found = {}
    for top in ("app", "tests"):
        for dirpath, _, files in os.walk(os.path.join(_ws(), top)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, _ws()).replace(os.sep, "/")
                with open(full, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        mods = [a.name for a in node.names]
                    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                        mods = [node.module]
                    else:
                        continue
                    for mod in mods:
                        found.setdefault(mod.split(".")[0], set()).add(rel)
    return found


def _expected():
    mapping = _mapping()
    runtime, dev, stdlib = {}, {}, set()
    for mod, files in _imports().items():
        if mod in LOCAL or mod == "__future__":
            continue
        if mod in sys.stdlib_module_names:
            stdlib.add(mod)
            continue
        entry = {"import": mod, "used_by": files}
        dist = mapping.get(mod, mod)
        if any(f.startswith("app/") for f in files):
            runtime[_key(dist)] = entry
        else:
            dev[_key(dist)] = entry
    return runtime, dev, stdlib


def _key(dist):
    return re.sub(r"[-_.]+", "-", str(dist)).lower()


def _section(doc, name):
    assert isinstance(doc, dict), "document must be a mapping"
    items = doc.get(name)
    assert isinstance(items, list), f"{name} must be a list"
    return items


def _dists(doc, name):
    out = {}
    for item in _section(doc, name):
        assert isinstance(item, dict), f"{name}: entries must be mappings"
        key = _key(item.get("name", ""))
        assert key not in out, f"{name}: {item.get('name')} listed twice"
        out[key] = item
    return out


def _check_names(doc, name, want):
    got = set(_dists(doc, name))
    assert not (set(want) - got), f"{name}: missing {sorted(set(want) - got)}"
    assert not (got - set(want)), f"{name}: should not list {sorted(got - set(want))}"


def _check_entries(doc, name, want):
    got = _dists(doc, name)
    for key, w in want.items():
        assert key in got, f"{name}: missing {key}"
        assert got[key].get("import") == w["import"], f"{name}/{key}: wrong import name"
        used = got[key].get("used_by")
        assert isinstance(used, list), f"{name}/{key}: used_by must be a list"
        norm = {str(u).strip().lstrip("./") for u in used}
        assert norm == w["used_by"], f"{name}/{key}: used_by is {sorted(norm)}"


def check_runtime_distributions(doc):
    _check_names(doc, "runtime", _expected()[0])


def check_dev_distributions(doc):
    _check_names(doc, "dev", _expected()[1])


def check_runtime_entries(doc):
    _check_entries(doc, "runtime", _expected()[0])


def check_dev_entries(doc):
    _check_entries(doc, "dev", _expected()[1])


def check_stdlib(doc):
    got = _section(doc, "stdlib")
    assert set(map(str, got)) == _expected()[2], f"stdlib is {sorted(map(str, got))}"


def check_sorted(doc):
    for name in ("runtime", "dev"):
        names = [str(i.get("name", "")) for i in _section(doc, name) if isinstance(i, dict)]
        assert names == sorted(names, key=str.lower), f"{name} is not sorted by name"
        for item in _section(doc, name):
            used = list(map(str, item.get("used_by") or []))
            assert used == sorted(used), f"{name}/{item.get('name')}: used_by not sorted"
    std = list(map(str, _section(doc, "stdlib")))
    assert std == sorted(std), "stdlib is not sorted"
