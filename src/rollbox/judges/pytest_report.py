"""A pytest plugin the test judge loads (as `rollbox_judge_report`) to record outcomes.

Standalone on purpose: it is copied next to the hidden tests and imports nothing of rollbox.
It runs when pytest loads it, before any test or code under test is imported: it opens its
report file, takes the run's token and the workspace's path out of the environment (so the
code under test finds neither there), and only then puts the workspace on sys.path (or, when
the code under test runs in a process of its own, installs the import hook that reaches it).
Records without the token are ignored by the judge.
"""

import json
import os
import sys
from typing import IO, Any

_out: IO[str] | None = None
_token = os.environ.pop("ROLLBOX_REPORT_TOKEN", "")
_report = os.environ.pop("ROLLBOX_REPORT", "")
_workdir = os.environ.pop("ROLLBOX_WORKDIR", "")
_remote = os.environ.pop("ROLLBOX_REMOTE", "")
_remote_modules = os.environ.pop("ROLLBOX_REMOTE_MODULES", "")
if _report:
    # append mode: whatever else writes to the file cannot make our records land over its own
    _out = open(_report, "a", encoding="utf-8")  # noqa: SIM115
if _remote:
    # the code under test runs in a process of its own: its modules are proxies of that one's
    import rollbox_judge_remote  # type: ignore[import-not-found]

    rollbox_judge_remote.install(_remote, _remote_modules.split(","))
elif _workdir:
    sys.path.insert(0, _workdir)


def _write(record: dict[str, Any]) -> None:
    if _out is not None:
        record["token"] = _token
        _out.write(json.dumps(record) + "\n")
        _out.flush()


# pytest is up and so is the report: from here on, whatever is missing is the candidate's doing
_write({"event": "start"})


def _plain_unittest() -> None:
    """unittest's assertEqual/assertNotEqual compare plain values, as the rewritten asserts do."""
    import unittest

    try:
        from rollbox_judge_plain import plain  # type: ignore[import-not-found]
    except ImportError:  # run without the judge's files (never in a judge)
        return
    case = unittest.TestCase
    equal, not_equal = case.assertEqual, case.assertNotEqual

    def assert_equal(self: Any, first: Any, second: Any, msg: Any = None) -> None:
        equal(self, plain(first), plain(second), msg)

    def assert_not_equal(self: Any, first: Any, second: Any, msg: Any = None) -> None:
        not_equal(self, plain(first), plain(second), msg)

    case.assertEqual = assert_equal  # type: ignore[method-assign]
    case.assertNotEqual = assert_not_equal  # type: ignore[method-assign]


_plain_unittest()


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        detail = str(report.longrepr)[-2000:]
        _write({"event": "collect_error", "id": report.nodeid, "detail": detail})


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
    """The last record: the judge ignores anything after it (atexit hooks, daemons)."""
    global _out
    if _out is not None:
        _write({"event": "end"})
        _out.close()
        _out = None
