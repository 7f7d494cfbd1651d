import os
import re


def _field(label):
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "MAINTAINERS")
    with open(path, encoding="utf-8") as fh:
        m = re.search(rf"^{label}:\s*(.+?)\s*$", fh.read(), re.M)
    assert m, f"MAINTAINERS has no {label} line"
    return m.group(1)


def check_name(doc):
    assert isinstance(doc, dict), "document must be a mapping"
    got = doc.get("name")
    assert isinstance(got, str) and got.strip() == _field("Name"), f"wrong name: {got!r}"


def check_email(doc):
    assert isinstance(doc, dict), "document must be a mapping"
    got = doc.get("email")
    assert isinstance(got, str) and got.strip() == _field("Email"), f"wrong email: {got!r}"
