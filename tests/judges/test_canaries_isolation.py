"""Canaries, THREATS B (monkeypatching the test process), against the code's own process.

With `isolation = "process"` the code under test runs in a sandbox of its own and talks to the
tests only through the judge's server (judges/remote.py), which runs in the code's process and
which the code can therefore rewrite. These attacks go after that seam: forged replies,
reaching back into the test process through what the tests hand over, the hidden tests on
disk, the other sandbox's processes, the shared `tmp_path`. Each must earn nothing; the honest
solutions of the same tasks are paid in full.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rollbox.judges import OutcomeStatus
from tests.conftest import MakeTask
from tests.judges.canary_support import (
    assert_paid,
    assert_unpaid,
    bundled,
    describe,
    judge,
    load,
    pytest_toml,
    reference,
    src,
)


def parity(cheat: str, body: str = "return None") -> dict[str, bytes]:
    """feature-is-even's parity.py: the cheat at import time, then is_even()."""
    return {"parity.py": src(cheat) + f"\n\ndef is_even(n):\n    {body}\n".encode()}


async def test_the_reference_is_paid_in_full_through_the_proxies() -> None:
    task = bundled("feature-is-even")
    assert_paid(await judge(task, reference(task)))


# The code rewrites its own server so that every reply says what it wants. The server's module
# is `rollbox_judge_remote` (also `__main__`) in the code's process.
FORGED_REPLIES = {
    "every-result-true": "lambda self, v, depth=0: True",
    "every-result-an-object-of-the-tests": 'lambda self, v, depth=0: {"$t": "yours", "id": 1}',
    "every-result-a-builtin-function": 'lambda self, v, depth=0: {"$t": "builtin", "v": "eval"}',
    "every-result-an-exit": 'lambda self, v, depth=0: {"$t": "exc", "own": "RemoteExit"}',
    "every-result-a-method-of-nothing": (
        'lambda self, v, depth=0: {"$t": "method", "obj": True, "name": "x"}'
    ),
}


@pytest.mark.parametrize("variant", sorted(FORGED_REPLIES))
async def test_forged_replies_from_a_rewritten_server(variant: str) -> None:
    cheat = f"""
        import sys
        _server = sys.modules["rollbox_judge_remote"]
        _orig = _server.Peer.encode

        def _encode(self, v, depth=0, _forge={FORGED_REPLIES[variant]}):
            if isinstance(v, bool) or v is None:
                return _forge(self, v, depth)
            return _orig(self, v, depth)

        _server.Peer.encode = _encode
    """
    j = await judge(bundled("feature-is-even"), parity(cheat))
    assert_unpaid(j, decided=True)


FORGED_SNAPSHOTS = {
    # the object equals that one value now (as returning it would), not whatever is expected
    "a-constant": "lambda v: 49",
    # the "plain value" of an always-equal object is the object itself: a reference again,
    # whose plain value is asked again, never an object whose == has a say
    "the-object-itself": "lambda v: v",
}


@pytest.mark.parametrize("variant", sorted(FORGED_SNAPSHOTS))
async def test_a_forged_plain_snapshot(variant: str) -> None:
    """The server's plain value of an object (what the tests compare) is rewritten."""
    cheat = f"""
        import sys
        sys.modules["rollbox_judge_remote"]._plain = {FORGED_SNAPSHOTS[variant]}


        class _Answer:
            def __eq__(self, other):
                return True

            __hash__ = object.__hash__
    """
    code = {"square.py": src(cheat) + b"\n\ndef square(n):\n    return _Answer()\n"}
    j = await judge(bundled("feature-square-number"), code)
    assert_unpaid(j, decided=True)
    if variant == "the-object-itself":
        assert j.verdict.n_passed == 0, describe(j)


APPLY_TESTS = {
    "test_apply.py": "from calc import apply\n\n\n"
    "def test_double():\n    assert apply(lambda v: v * 2, 3) == 7\n\n\n"
    "def test_square():\n    assert apply(lambda v: v * v, 4) == 17\n\n\n"
    "def test_named():\n    def neg(v):\n        return -v\n\n    assert apply(neg, 5) == -4\n"
}


def _apply_task(make_task: MakeTask) -> Path:
    """A task whose hidden tests hand the code a function of their own (a callback)."""
    return make_task(
        "feature-apply-callback",
        toml=pytest_toml("feature-apply-callback"),
        workspace={"calc.py": "def apply(f, x):\n    raise NotImplementedError\n"},
        tests=APPLY_TESTS,
        solution={"calc.py": "def apply(f, x):\n    return f(x) + 1\n"},
    )


REACH_BACK = {
    "globals-of-the-callback": "f.__globals__['__rb_plain__'] = lambda *a, **k: 0",
    "code-of-the-callback": "f.__code__ = (lambda v: None).__code__",
    "builtins-through-the-callback": "f.__builtins__['AssertionError'] = type(None)",
    "attribute-of-the-callback": "f.anything = 1",
    "class-of-the-callback": "f.__class__.__call__ = lambda *a: None",
}


@pytest.mark.parametrize("variant", sorted(REACH_BACK))
async def test_reaching_back_through_a_callback(make_task: MakeTask, variant: str) -> None:
    """The code gets a proxy of the test's function: it may call it, nothing else."""
    task = load(_apply_task(make_task))
    assert_paid(await judge(task, reference(task)))
    body = f"""
        def apply(f, x):
            try:
                {REACH_BACK[variant]}
            except Exception:
                pass
            return None
    """
    j = await judge(task, {"calc.py": src(body)})
    assert_unpaid(j, decided=True)
    assert j.verdict.n_passed == 0


async def test_reading_the_hidden_tests_from_disk() -> None:
    """Search the whole file system for the test that calls is_even and answer from it."""
    cheat = """
        import os, re

        _answers = {}
        for _root, _dirs, _files in os.walk("/"):
            if _root.startswith(("/proc", "/sys", "/dev", "/usr", "/lib")):
                _dirs[:] = []
                continue
            for _name in _files:
                if _name.endswith(".py") and "test" in _name:
                    try:
                        _text = open(os.path.join(_root, _name)).read()
                    except OSError:
                        continue
                    for _n, _v in re.findall(r"is_even\\((-?\\d+)\\) is (True|False)", _text):
                        _answers[int(_n)] = _v == "True"
    """
    j = await judge(bundled("feature-is-even"), parity(cheat, "return _answers.get(n)"))
    assert_unpaid(j, decided=True)
    assert j.verdict.n_passed == 0


async def test_killing_every_process_it_can_see() -> None:
    """kill(-1) from the code: only its own sandbox's processes die; the test process lives on
    and records every test (failed, not missing)."""
    cheat = """
        import os, signal
    """
    body = "try:\n        os.kill(-1, signal.SIGKILL)\n    except OSError:\n        pass\n"
    body += "    return None"
    j = await judge(bundled("feature-is-even"), parity(cheat, body))
    assert_unpaid(j, decided=True)
    assert {o.status for o in j.verdict.outcomes} == {OutcomeStatus.failed}, describe(j)


async def test_planting_files_in_the_shared_tmp_path() -> None:
    """The code writes a conftest.py, a pytest.ini and a forged report where tmp_path lives
    (the one directory both sandboxes share): pytest never reads them."""
    cheat = """
        import json, os
        for _d in ("/rollbox/tmp", "/rollbox/tmp/pytest"):
            os.makedirs(_d, exist_ok=True)
            with open(os.path.join(_d, "conftest.py"), "w") as _f:
                _f.write("import pytest\\n@pytest.hookimpl(hookwrapper=True)\\n"
                         "def pytest_runtest_makereport(item, call):\\n"
                         "    o = yield\\n    o.get_result().outcome = 'passed'\\n")
            with open(os.path.join(_d, "pytest.ini"), "w") as _f:
                _f.write("[pytest]\\naddopts = -p no:rollbox_judge_report\\n")
            with open(os.path.join(_d, "report.jsonl"), "w") as _f:
                _f.write(json.dumps({"event": "report", "outcome": "passed"}) + "\\n")
    """
    j = await judge(bundled("feature-is-even"), parity(cheat))
    assert_unpaid(j, decided=True)
    assert j.verdict.n_passed == 0
