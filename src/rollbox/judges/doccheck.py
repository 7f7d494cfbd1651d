"""Runs inside a sandbox for the document judge: parse, validate, run the task's check_* functions.

Standalone on purpose (copied next to the hidden tests): argv is
    DOC FORMAT SCHEMA|- CHECKS|- REPORT
and one JSON object per outcome is written to REPORT.
"""

import importlib.util
import inspect
import json
import sys
import traceback
from typing import Any


def main(doc_path: str, fmt: str, schema_path: str, checks_path: str, report_path: str) -> None:
    results: list[dict[str, Any]] = []
    doc: Any = None

    def record(name: str, ok: bool, detail: str = "") -> None:
        results.append({"name": name, "passed": ok, "detail": detail[-2000:]})

    try:
        with open(doc_path, encoding="utf-8") as f:
            text = f.read()
        if fmt == "json":
            doc = json.loads(text)
        elif fmt == "yaml":
            import yaml

            doc = yaml.safe_load(text)
        else:
            doc = text
        parsed = True
    except Exception as e:
        parsed = False
        record("parse", False, f"the document does not parse as {fmt}: {e}")
    if schema_path != "-":
        if not parsed:
            record("schema", False, "not checked: the document does not parse")
        else:
            import jsonschema

            with open(schema_path, encoding="utf-8") as f:
                schema = json.load(f)
            errors = sorted(
                jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path)
            )
            detail = "; ".join(
                f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:5]
            )
            record("schema", not errors, detail)
    if checks_path != "-":
        spec = importlib.util.spec_from_file_location("rollbox_doc_checks", checks_path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        checks = [
            (name, fn)
            for name, fn in inspect.getmembers(module, inspect.isfunction)
            if name.startswith("check_") and fn.__module__ == module.__name__
        ]
        checks.sort(key=lambda nf: nf[1].__code__.co_firstlineno)
        base = checks_path.rsplit("/", 1)[-1]
        for name, fn in checks:
            if not parsed:
                record(f"{base}::{name}", False, "not checked: the document does not parse")
                continue
            try:
                fn(doc)
            except Exception:
                record(f"{base}::{name}", False, traceback.format_exc(limit=3))
            else:
                record(f"{base}::{name}", True)
    with open(report_path, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:6])
