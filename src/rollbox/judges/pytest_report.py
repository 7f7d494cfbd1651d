"""A pytest plugin the test judge loads (as `rollbox_judge_report`) to record outcomes.

Standalone on purpose: it is copied next to the hidden tests and imports nothing of rollbox.
It opens its report file before any test module is imported.
"""

import json
import os
from typing import IO, Any

_out: IO[str] | None = None


def _write(record: dict[str, Any]) -> None:
    if _out is not None:
        _out.write(json.dumps(record) + "\n")
        _out.flush()


def pytest_configure(config: Any) -> None:
    global _out
    path = os.environ.get("ROLLBOX_REPORT")
    if path:
        _out = open(path, "w", encoding="utf-8")  # noqa: SIM115


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _write(
            {"event": "collect_error", "id": report.nodeid, "detail": str(report.longrepr)[-2000:]}
        )


def pytest_collection_finish(session: Any) -> None:
    for item in session.items:
        _write({"event": "collected", "id": item.nodeid})


def pytest_runtest_logreport(report: Any) -> None:
    detail = str(report.longrepr)[-2000:] if report.failed else ""
    _write(
        {
            "event": "report",
            "id": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "xfail": hasattr(report, "wasxfail"),
            "detail": detail,
        }
    )


def pytest_unconfigure(config: Any) -> None:
    global _out
    if _out is not None:
        _out.close()
        _out = None
