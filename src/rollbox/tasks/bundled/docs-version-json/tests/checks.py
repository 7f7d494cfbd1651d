import os
import re


def _setup_cfg_version():
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "setup.cfg")
    with open(path, encoding="utf-8") as fh:
        m = re.search(r"^version\s*=\s*(\S+)\s*$", fh.read(), re.M)
    assert m, "setup.cfg has no version line"
    return m.group(1)


def check_is_object_with_version(doc):
    assert isinstance(doc, dict), "document must be a JSON object"
    assert "version" in doc, "missing key 'version'"


def check_version_matches_setup_cfg(doc):
    assert isinstance(doc, dict)
    want = _setup_cfg_version()
    got = doc.get("version")
    assert isinstance(got, str), "version must be a string"
    assert got.strip() == want, f"version is {got!r}, expected the one in setup.cfg"
