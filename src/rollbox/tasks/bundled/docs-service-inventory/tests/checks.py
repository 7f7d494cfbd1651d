"""Content checks for inventory.yaml (facts taken from the README's Services section)."""

EXPECTED = {
    "gateway": {"language": "go", "port": 8080, "owner": "platform",
                "depends_on": {"auth", "catalog", "orders"}},
    "auth": {"language": "python", "port": 8081, "owner": "identity",
             "depends_on": {"users-db"}},
    "catalog": {"language": "kotlin", "port": 8082, "owner": "commerce",
                "depends_on": {"search-index"}},
    "orders": {"language": "python", "port": 8083, "owner": "commerce",
               "depends_on": {"auth", "orders-db", "payments"}},
    "payments": {"language": "java", "port": 8090, "owner": "payments",
                 "depends_on": {"ledger-db"}},
    "notifier": {"language": "rust", "port": 9100, "owner": "platform",
                 "depends_on": {"orders"}},
}


def _services(doc):
    assert isinstance(doc, dict) and isinstance(doc.get("services"), list), "need a services list"
    out = {}
    for entry in doc["services"]:
        assert isinstance(entry, dict), "each service must be a mapping"
        name = str(entry.get("name", "")).strip()
        assert name not in out, f"service {name!r} listed twice"
        out[name] = entry
    return out


def _norm(s):
    s = str(s).strip().lower()
    for suffix in (" team",):
        if s.endswith(suffix):
            s = s[: -len(suffix)]
    return s


def check_service_names(doc):
    got = set(_services(doc))
    missing = set(EXPECTED) - got
    extra = got - set(EXPECTED)
    assert not missing, f"missing services: {sorted(missing)}"
    assert not extra, f"not services of this repository: {sorted(extra)}"


def check_ports(doc):
    svcs = _services(doc)
    for name, want in EXPECTED.items():
        assert name in svcs, f"missing {name}"
        port = svcs[name].get("port")
        assert isinstance(port, int) and not isinstance(port, bool), f"{name}: port must be an integer"
        assert port == want["port"], f"{name}: wrong port {port}"


def check_languages(doc):
    svcs = _services(doc)
    for name, want in EXPECTED.items():
        assert name in svcs, f"missing {name}"
        assert _norm(svcs[name].get("language")) == want["language"], f"{name}: wrong language"


def check_owners(doc):
    svcs = _services(doc)
    for name, want in EXPECTED.items():
        assert name in svcs, f"missing {name}"
        assert _norm(svcs[name].get("owner")) == want["owner"], f"{name}: wrong owner"


def check_dependencies(doc):
    svcs = _services(doc)
    for name, want in EXPECTED.items():
        assert name in svcs, f"missing {name}"
        deps = svcs[name].get("depends_on")
        assert isinstance(deps, list), f"{name}: depends_on must be a list"
        got = {str(d).strip() for d in deps}
        assert got == want["depends_on"], f"{name}: depends_on is {sorted(got)}"
