"""The four judges, on small tasks made here, through the local backend with real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.judges import (
    OutcomeStatus,
    VerdictStatus,
    changes_between,
    check_reference,
    isolation,
    make_judge,
)
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_task, reference_changes
from tests.conftest import TASK_TOML, MakeTask, write_tree

SANDBOXES = Factory(BwrapConfig())


async def test_pytest_judge_start_fails_reference_passes(make_task: MakeTask) -> None:
    check = await check_reference(load_task(make_task()), SANDBOXES)
    assert check.ok, check.problems
    assert check.reference.passed and check.reference.n_passed == 2
    assert check.start.decided and check.start.n_passed == 0
    assert {o.status for o in check.start.outcomes} == {OutcomeStatus.failed}


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("import sys\nsys.exit(0)\n", OutcomeStatus.missing),
        ("import os\nos._exit(0)\n", OutcomeStatus.missing),
        # pytest's skip/xfail raised in the code's own process are plain exceptions to the tests
        ("def add(a, b):\n    import pytest\n    pytest.skip('no')\n", OutcomeStatus.failed),
        ("def add(a, b):\n    import pytest\n    pytest.xfail('no')\n", OutcomeStatus.failed),
        ("def add(a, b):\n    while True:\n        pass\n", None),
    ],
    ids=["sys.exit(0)", "os._exit(0)", "skip", "xfail", "hang"],
)
async def test_pytest_judge_pays_only_passed_records(
    make_task: MakeTask, source: str, status: OutcomeStatus | None
) -> None:
    toml = TASK_TOML.format(id="feature-add").replace(
        "[judge]", "[limits]\ntimeout_s = 3\n\n[judge]"
    )
    task = load_task(make_task(toml=toml))
    verdict = await make_judge(task).judge(task, {"calc.py": source.encode()}, SANDBOXES)
    assert not verdict.passed
    assert verdict.n_passed == 0
    assert len(verdict.outcomes) == 2, "every expected test has an outcome"
    if status is not None:
        assert {o.status for o in verdict.outcomes} == {status}


async def test_a_skipped_hidden_test_fails_even_the_reference(make_task: MakeTask) -> None:
    tests = {
        "test_calc.py": "import pytest\nfrom calc import add\n\n"
        "def test_ok():\n    assert add(1, 1) == 2\n\n"
        "@pytest.mark.skip(reason='x')\ndef test_skipped():\n    pass\n"
    }
    task = load_task(make_task(tests=tests))
    verdict = await make_judge(task).judge(task, reference_changes(task), SANDBOXES)
    statuses = {o.name: o.status for o in verdict.outcomes}
    assert statuses == {
        "test_calc.py::test_ok": OutcomeStatus.passed,
        "test_calc.py::test_skipped": OutcomeStatus.skipped,
    }
    assert not verdict.passed


def _data_task(make_task: MakeTask) -> Path:
    toml = """\
id = "data-sum"
title = "Sum the numbers"
family = "data"
difficulty = "easy"
split = "train"
instruction = "Write sum.py: sum the list in data/n.json into out/total.json as {\\"total\\": n}."

[judge]
type = "output"
command = "python3 sum.py"

[[judge.cases]]
name = "given"
expected = "cases/given/expected"

[[judge.cases]]
name = "hidden"
inputs = "cases/hidden/input"
expected = "cases/hidden/expected"
"""
    root = make_task(
        "data-sum",
        toml=toml,
        workspace={"data/n.json": "[1, 2, 3]"},
        tests={
            "cases/given/expected/out/total.json": '{"total": 6}',
            "cases/hidden/input/data/n.json": "[10, 20.5]",
            "cases/hidden/expected/out/total.json": '{"total": 30.5}',
        },
        solution={
            "sum.py": "import json, os\nos.makedirs('out', exist_ok=True)\n"
            "total = sum(json.load(open('data/n.json')))\n"
            "json.dump({'total': total}, open('out/total.json', 'w'))\n"
        },
    )
    return root


async def test_output_judge_hidden_inputs_defeat_hard_coding(make_task: MakeTask) -> None:
    task = load_task(_data_task(make_task))
    check = await check_reference(task, SANDBOXES)
    assert check.ok, check.problems
    hard_coded = (
        b"import os, json\nos.makedirs('out', exist_ok=True)\n"
        b"json.dump({'total': 6}, open('out/total.json', 'w'))\n"
    )
    verdict = await make_judge(task).judge(task, {"sum.py": hard_coded}, SANDBOXES)
    assert {o.name: o.passed for o in verdict.outcomes} == {
        "given/out/total.json": True,
        "hidden/out/total.json": False,
    }


async def test_output_judge_refuses_a_link_as_output(make_task: MakeTask) -> None:
    task = load_task(_data_task(make_task))
    linker = (
        b"import os\nos.makedirs('out', exist_ok=True)\n"
        b"os.symlink('/etc/hostname', 'out/total.json')\n"
    )
    verdict = await make_judge(task).judge(task, {"sum.py": linker}, SANDBOXES)
    assert not verdict.passed
    assert all("link" in o.detail for o in verdict.outcomes)


def _ops_task(make_task: MakeTask) -> Path:
    toml = """\
id = "ops-greet"
title = "Fix greet.sh"
family = "ops"
difficulty = "easy"
split = "train"
instruction = "greet.sh NAME must print 'hello NAME'."

[judge]
type = "command"

[[judge.checks]]
name = "runs"
command = "bash greet.sh world"

[[judge.checks]]
name = "hidden"
command = 'bash "$ROLLBOX_TESTS/check.sh"'
"""
    return make_task(
        "ops-greet",
        toml=toml,
        workspace={"greet.sh": "echo hello $2\n"},
        tests={"check.sh": 'test "$(bash greet.sh "a  b")" = "hello a  b"\n'},
        solution={"greet.sh": 'echo "hello $1"\n'},
    )


async def test_command_judge_runs_checks_in_order(make_task: MakeTask) -> None:
    check = await check_reference(load_task(_ops_task(make_task)), SANDBOXES)
    assert check.ok, check.problems
    assert [o.name for o in check.start.outcomes] == ["runs", "hidden"]
    assert [o.passed for o in check.start.outcomes] == [True, False]


def _docs_task(make_task: MakeTask) -> Path:
    toml = """\
id = "docs-version"
title = "Write VERSION.json"
family = "docs"
difficulty = "trivial"
split = "train"
instruction = "Write VERSION.json with the version from setup.txt."

[judge]
type = "document"
path = "VERSION.json"
format = "json"
schema = "schema.json"
checks = "checks.py"
"""
    schema = {
        "type": "object",
        "required": ["version"],
        "properties": {"version": {"type": "string"}},
        "additionalProperties": False,
    }
    checks = (
        "import os, pathlib\n\n"
        "def check_matches_source(doc):\n"
        "    src = pathlib.Path(os.environ['ROLLBOX_WORKSPACE'], 'setup.txt').read_text().strip()\n"
        "    assert doc['version'] == src, doc\n"
    )
    return make_task(
        "docs-version",
        toml=toml,
        workspace={"setup.txt": "1.4.2\n"},
        tests={"schema.json": json.dumps(schema), "checks.py": checks},
        solution={"VERSION.json": '{"version": "1.4.2"}'},
    )


@pytest.mark.parametrize(
    ("document", "passed"),
    [
        (b'{"version": "1.4.2"}', {"schema": True, "checks.py::check_matches_source": True}),
        (b'{"version": "9.9.9"}', {"schema": True, "checks.py::check_matches_source": False}),
        (b'{"version": 1}', {"schema": False, "checks.py::check_matches_source": False}),
        (
            b'{"version": ',
            {"parse": False, "schema": False, "checks.py::check_matches_source": False},
        ),
    ],
    ids=["right", "wrong-content", "wrong-schema", "not-json"],
)
async def test_document_judge(
    make_task: MakeTask, document: bytes, passed: dict[str, bool]
) -> None:
    task = load_task(_docs_task(make_task))
    verdict = await make_judge(task).judge(task, {"VERSION.json": document}, SANDBOXES)
    assert verdict.status is VerdictStatus.judged
    assert {o.name: o.passed for o in verdict.outcomes} == passed


async def test_document_judge_missing_document_fails(make_task: MakeTask) -> None:
    task = load_task(_docs_task(make_task))
    verdict = await make_judge(task).judge(task, {}, SANDBOXES)
    assert verdict.decided and not verdict.passed


def test_changes_between(tmp_path: Path) -> None:
    write_tree(tmp_path, {})
    before = {"a": b"1", "b": b"2", "c": b"3"}
    after = {"a": b"1", "b": b"22", "d": b"4"}
    assert changes_between(before, after) == {"b": b"22", "d": b"4", "c": None}


async def test_a_task_that_names_packages_is_judged_with_its_image(
    make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.sandbox.test_images import _wheel

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "rbxhelper", "2.0", "def twice(x):\n    return 2 * x\n")
    monkeypatch.setenv("ROLLBOX_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    toml = TASK_TOML.format(id="feature-add").replace(
        "[judge]", '[environment]\npython_packages = ["rbxhelper==2.0"]\n\n[judge]'
    )
    tests = {"test_calc.py": "from rbxhelper import twice\nfrom calc import add\n\n"
             "def test_uses_the_package():\n    assert add(twice(2), 1) == 5\n"}  # fmt: skip
    task = load_task(make_task(toml=toml, tests=tests))
    check = await check_reference(task, SANDBOXES)
    assert check.ok, check.problems
    assert check.reference.n_passed == 1


async def test_a_code_server_that_ends_before_the_tests_reach_it_is_undecided(
    make_task: MakeTask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machinery's failure, not the candidate's (none of its code ran): no verdict, not a
    zero. The server here listens, says it is ready, and exits at once."""
    real = isolation.server_files

    def dying_server(dest: Path) -> Path:
        real(dest)
        (dest / isolation.SERVER).write_text(
            "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[2])\n"
            "s.listen(1)\nprint('ready', flush=True)\n"
        )
        return dest

    task = load_task(make_task())
    judge = make_judge(task)
    assert (await judge.judge(task, reference_changes(task), SANDBOXES)).passed
    monkeypatch.setattr(isolation, "server_files", dying_server)
    with pytest.raises(SandboxError, match="ended before the tests reached it"):
        await judge.judge(task, reference_changes(task), SANDBOXES)
