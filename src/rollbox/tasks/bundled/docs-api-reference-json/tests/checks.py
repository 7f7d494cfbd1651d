"""Content checks for docs/api.json, derived from geoutil/distance.py with ast."""
import ast
import os

_SRC = os.path.join(os.environ.get("ROLLBOX_WORKSPACE", "."), "geoutil", "distance.py")


def _tree():
    with open(_SRC, encoding="utf-8") as fh:
        return ast.parse(fh.read())


def _summary(node):
    doc = ast.get_docstring(node)
    if not doc:
        return None
    return doc.strip().splitlines()[0].strip()


def _src(node):
    return None if node is None else ast.unparse(node)


def _params(fn, drop_first):
    a = fn.args
    out = []
    positional = [(p, "positional_only") for p in a.posonlyargs] + [(p, "positional_or_keyword") for p in a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for (p, kind), d in zip(positional, defaults):
        out.append({"name": p.arg, "kind": kind, "annotation": _src(p.annotation), "default": _src(d)})
    if a.vararg:
        out.append({"name": a.vararg.arg, "kind": "var_positional", "annotation": _src(a.vararg.annotation), "default": None})
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append({"name": p.arg, "kind": "keyword_only", "annotation": _src(p.annotation), "default": _src(d)})
    if a.kwarg:
        out.append({"name": a.kwarg.arg, "kind": "var_keyword", "annotation": _src(a.kwarg.annotation), "default": None})
    return out[1:] if drop_first else out


def _method_type(fn):
    names = {ast.unparse(d) for d in fn.decorator_list}
    if "classmethod" in names:
        return "classmethod"
    if "staticmethod" in names:
        return "staticmethod"
    return "instance"


def _expected():
    tree = _tree()
    exported = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            exported = ast.literal_eval(node.value)
    exp = {"summary": _summary(tree), "constants": {}, "functions": {}, "classes": {}}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in exported:
            exp["constants"][node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name in exported:
            exp["functions"][node.name] = {"summary": _summary(node), "returns": _src(node.returns),
                                           "parameters": _params(node, False)}
        elif isinstance(node, ast.ClassDef) and node.name in exported:
            cls = {"summary": _summary(node), "parameters": [], "methods": {}}
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                if item.name == "__init__":
                    cls["parameters"] = _params(item, True)
                elif not item.name.startswith("_"):
                    mt = _method_type(item)
                    cls["methods"][item.name] = {"summary": _summary(item), "returns": _src(item.returns),
                                                 "method_type": mt,
                                                 "parameters": _params(item, mt != "staticmethod")}
            exp["classes"][node.name] = cls
    return exp


def _same_expr(got, want):
    """Compare source snippets by their syntax tree, so spacing/quote style do not matter."""
    if want is None or got is None:
        return got is None and want is None
    try:
        g = ast.parse(got.strip(), mode="eval").body
    except SyntaxError:
        return False
    return ast.dump(g) == ast.dump(ast.parse(want, mode="eval").body)


def _by_name(items, what):
    assert isinstance(items, list), f"{what} must be a list"
    out = {}
    for item in items:
        assert isinstance(item, dict) and "name" in item, f"bad {what} entry"
        assert item["name"] not in out, f"{what}: {item['name']} listed twice"
        out[item["name"]] = item
    return out


def _doc_functions(doc):
    return _by_name(doc.get("functions"), "functions")


def _doc_classes(doc):
    return _by_name(doc.get("classes"), "classes")


def _all_callables(doc):
    """(label, doc_entry, expected_entry) for every function, constructor and method."""
    exp = _expected()
    funcs = _doc_functions(doc)
    classes = _doc_classes(doc)
    out = []
    for name, want in exp["functions"].items():
        assert name in funcs, f"function {name} not documented"
        out.append((name, funcs[name], want))
    for cname, cwant in exp["classes"].items():
        assert cname in classes, f"class {cname} not documented"
        out.append((cname + ".__init__", {"parameters": classes[cname].get("parameters")},
                    {"parameters": cwant["parameters"]}))
        methods = _by_name(classes[cname].get("methods"), cname + ".methods")
        for mname, mwant in cwant["methods"].items():
            assert mname in methods, f"method {cname}.{mname} not documented"
            out.append((f"{cname}.{mname}", methods[mname], mwant))
    return out


def check_module_header(doc):
    assert isinstance(doc, dict)
    assert doc.get("module") == "geoutil.distance", "wrong module name"
    assert isinstance(doc.get("summary"), str) and doc["summary"].strip() == _expected()["summary"], "wrong module summary"


def check_constants(doc):
    assert isinstance(doc, dict)
    got = _by_name(doc.get("constants"), "constants")
    want = _expected()["constants"]
    assert set(got) == set(want), f"constants documented: {sorted(got)}"
    for name, value in want.items():
        assert got[name].get("value") == value, f"wrong value for {name}"


def check_exactly_the_exported_functions(doc):
    assert isinstance(doc, dict)
    got = set(_doc_functions(doc))
    want = set(_expected()["functions"])
    assert not (want - got), f"functions missing: {sorted(want - got)}"
    assert not (got - want), f"not part of the public API: {sorted(got - want)}"


def check_exactly_the_exported_classes(doc):
    assert isinstance(doc, dict)
    assert set(_doc_classes(doc)) == set(_expected()["classes"]), "wrong set of classes"


def check_public_methods(doc):
    assert isinstance(doc, dict)
    classes = _doc_classes(doc)
    for cname, cwant in _expected()["classes"].items():
        assert cname in classes, f"class {cname} not documented"
        got = _by_name(classes[cname].get("methods"), cname + ".methods")
        assert set(got) == set(cwant["methods"]), f"{cname} methods documented: {sorted(got)}"
        for mname, mwant in cwant["methods"].items():
            assert got[mname].get("method_type") == mwant["method_type"], f"{cname}.{mname}: wrong method_type"


def check_parameter_names_and_kinds(doc):
    assert isinstance(doc, dict)
    for label, got, want in _all_callables(doc):
        params = got.get("parameters")
        assert isinstance(params, list), f"{label}: parameters must be a list"
        got_nk = [(p.get("name"), p.get("kind")) for p in params]
        want_nk = [(p["name"], p["kind"]) for p in want["parameters"]]
        assert got_nk == want_nk, f"{label}: parameters {got_nk}, expected other names/kinds/order"


def check_annotations(doc):
    assert isinstance(doc, dict)
    for label, got, want in _all_callables(doc):
        params = got.get("parameters") or []
        assert len(params) == len(want["parameters"]), f"{label}: wrong number of parameters"
        for p, w in zip(params, want["parameters"]):
            assert _same_expr(p.get("annotation"), w["annotation"]), f"{label}({w['name']}): wrong annotation"


def check_defaults(doc):
    assert isinstance(doc, dict)
    for label, got, want in _all_callables(doc):
        params = got.get("parameters") or []
        assert len(params) == len(want["parameters"]), f"{label}: wrong number of parameters"
        for p, w in zip(params, want["parameters"]):
            assert _same_expr(p.get("default"), w["default"]), f"{label}({w['name']}): wrong default"


def check_return_annotations(doc):
    assert isinstance(doc, dict)
    for label, got, want in _all_callables(doc):
        if "returns" in want:
            assert _same_expr(got.get("returns"), want["returns"]), f"{label}: wrong returns"


def check_summaries(doc):
    assert isinstance(doc, dict)
    exp = _expected()
    for label, got, want in _all_callables(doc):
        if "summary" in want:
            s = got.get("summary")
            s = s.strip() if isinstance(s, str) else s
            assert s == want["summary"], f"{label}: wrong summary"
    classes = _doc_classes(doc)
    for cname, cwant in exp["classes"].items():
        s = classes[cname].get("summary")
        assert isinstance(s, str) and s.strip() == cwant["summary"], f"{cname}: wrong summary"
