"""The agent's tools in real bwrap sandboxes: each tool, its errors, and the visible tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from rollbox.agent.tools import TOOLS, ToolBox, check_call, truncate
from rollbox.agent.types import Observation, ToolCall
from rollbox.errors import SandboxError
from rollbox.sandbox import BwrapConfig, Limits, Sandbox, make_sandbox
from rollbox.tasks.loader import bundled_dir, load_task, read_tree, reference_changes
from rollbox.tasks.model import Task

SCHEMAS = [t.schema() for t in TOOLS]


@pytest.fixture(scope="module")
def clamp_task() -> Task:
    task = load_task(bundled_dir() / "feature-clamp-value")
    assert task.visible_tests_dir is not None
    return task


@pytest.fixture
async def box(clamp_task: Task) -> AsyncIterator[ToolBox]:
    sb = await make_sandbox(BwrapConfig(), clamp_task.workspace_dir, limits=Limits(wall_s=20))
    tb = ToolBox(sb, clamp_task, observation_chars=1000)
    try:
        yield tb
    finally:
        await tb.close()
        await sb.close()


async def run(tb: ToolBox, name: str, **arguments: Any) -> Observation:
    return await tb.run(ToolCall(name=name, arguments=arguments))


async def workspace_files(sb: Sandbox) -> dict[str, bytes]:
    return {e.path: await sb.read_file(e.path) for e in await sb.list() if e.kind == "file"}


# -- without a sandbox ------------------------------------------------------------------------


def test_truncate_keeps_head_and_tail_with_a_marker() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    out, cut = truncate(text, 300)
    assert cut and len(out) <= 300
    assert out.startswith("line 0\nline 1\n") and out.endswith("line 998\nline 999\n")
    marker = next(ln for ln in out.splitlines() if ln.startswith("[..."))
    kept = out.replace(marker + "\n", "")
    assert f"[... {len(text) - len(kept)} characters" in marker
    assert "lines) cut here ...]" in marker
    head, tail = out.split(marker + "\n")
    assert head.endswith("\n") and tail.startswith("line "), "cuts fall on line breaks"
    assert truncate("short", 300) == ("short", False)
    blob, cut = truncate("x" * 10_000, 200)  # no line breaks at all
    assert cut and len(blob) <= 200 and blob.startswith("xxx") and blob.endswith("xxx")


def test_schemas_are_openai_functions() -> None:
    by_name = {s["function"]["name"]: s for s in SCHEMAS}
    assert list(by_name) == [
        "bash", "read_file", "write_file", "edit", "list_dir", "run_tests", "submit",
    ]  # fmt: skip
    edit = by_name["edit"]
    assert edit["type"] == "function"
    params = edit["function"]["parameters"]
    assert params["required"] == ["path", "old", "new"]
    assert params["additionalProperties"] is False
    assert by_name["read_file"]["function"]["parameters"]["required"] == ["path"]


@pytest.mark.parametrize(
    ("name", "arguments", "needles"),
    [
        ("frob", {}, ["Unknown tool 'frob'", "bash(command)", "read_file(path, offset?, limit?)"]),
        ("edit", {"path": "m.py", "old": "a"}, ["missing argument 'new'", "edit(path: string"]),
        ("bash", {"command": "ls", "cwd": "/"}, ["unexpected argument 'cwd'"]),
        ("read_file", {"path": "m.py", "offset": "3"}, ["'offset' must be an integer, got str"]),
        ("read_file", {"path": "m.py", "offset": True}, ["'offset' must be an integer"]),
        ("read_file", {"path": "m.py", "limit": 0}, ["'limit' must be at least 1"]),
        ("write_file", {"path": None, "content": "x"}, ["'path' must be a string, got null"]),
    ],
)
def test_invalid_calls_say_what_is_wrong(
    name: str, arguments: dict[str, Any], needles: list[str]
) -> None:
    problem = check_call(ToolCall(name=name, arguments=arguments), SCHEMAS)
    assert problem is not None
    for needle in needles:
        assert needle in problem
    assert (
        check_call(ToolCall(name="read_file", arguments={"path": "m.py", "limit": 3}), SCHEMAS)
        is None
    )


# -- in a sandbox -----------------------------------------------------------------------------


async def test_invalid_calls_are_observations(box: ToolBox) -> None:
    obs = await run(box, "edit", path="numeric.py", old=3)
    assert (
        obs.is_error and "Invalid call of edit" in obs.text and "missing argument 'new'" in obs.text
    )
    obs = await box.run(ToolCall(name="rm", arguments={"path": "."}))
    assert obs.is_error and "Unknown tool 'rm'" in obs.text and "submit()" in obs.text
    assert box.names == tuple(s["function"]["name"] for s in SCHEMAS)


async def test_bash_is_a_persistent_shell(box: ToolBox) -> None:
    obs = await run(box, "bash", command="mkdir -p sub && cd sub && export FOO=bar && echo made")
    assert (obs.text, obs.exit_code, obs.is_error) == ("made\n[exit code 0]", 0, False)
    obs = await run(
        box,
        "bash",
        command="pwd; echo $FOO; echo oops >&2; exit_status() { return 3; }; exit_status",
    )
    assert obs.text == "/workspace/sub\nbar\noops\n[exit code 3]" and obs.exit_code == 3
    obs = await run(box, "bash", command="true")
    assert obs.text == "(no output)\n[exit code 0]"
    obs = await run(box, "bash", command="seq 1 100000")
    assert obs.truncated and len(obs.text) <= 1000
    assert obs.text.startswith("1\n2\n") and obs.text.endswith("99999\n100000\n[exit code 0]")
    assert "characters" in obs.text and "cut here" in obs.text
    obs = await run(box, "bash", command="   ")
    assert obs.is_error and "empty" in obs.text


async def test_bash_timeout_restarts_the_shell(clamp_task: Task) -> None:
    async with await make_sandbox(BwrapConfig(), clamp_task.workspace_dir) as sb:
        tb = ToolBox(sb, clamp_task, command_timeout_s=0.5)
        await run(tb, "bash", command="cd /tmp && export X=1")
        obs = await run(tb, "bash", command="sleep 30")
        assert obs.is_error and obs.exit_code is None and "timed out after 0.5s" in obs.text
        obs = await run(tb, "bash", command="pwd; echo ${X:-unset}")
        assert obs.text.startswith("[this ran in a new shell")
        assert "/tmp\nunset\n[exit code 0]" in obs.text
        await tb.close()


async def test_file_tools(box: ToolBox) -> None:
    obs = await run(box, "write_file", path="pkg/sub/notes.txt", content="one\ntwo\nthree\n")
    assert obs.text == "Created pkg/sub/notes.txt (3 lines, 14 bytes)." and not obs.is_error
    assert await box.sandbox.read_file("pkg/sub/notes.txt") == b"one\ntwo\nthree\n"
    obs = await run(box, "write_file", path="./pkg/sub/notes.txt", content="1\n2\n3\n4\n5\n")
    assert obs.text.startswith("Replaced pkg/sub/notes.txt")

    assert (await run(box, "read_file", path="pkg/sub/notes.txt")).text == "1\n2\n3\n4\n5\n"
    obs = await run(box, "read_file", path="/workspace/pkg/sub/notes.txt", offset=2, limit=2)
    assert obs.text == "2\n3\n[lines 2-3 of 5; to read on: offset=4]" and not obs.truncated
    obs = await run(box, "read_file", path="pkg/sub/notes.txt", offset=9)
    assert obs.is_error and "has 5 lines" in obs.text

    await run(box, "bash", command="seq 1 2000 > long.txt")
    obs = await run(box, "read_file", path="long.txt")
    assert obs.truncated and len(obs.text) <= 1000 and obs.text.startswith("1\n2\n")
    assert obs.text.endswith("of 2000; to read on: offset=" + obs.text.split("offset=")[-1])

    for path, needle in [
        ("nope.py", "no such file"),
        ("pkg", "is a directory"),
        ("/etc/passwd", "outside the workspace"),
        ("../secret", "outside the workspace"),
        ("", "the path is empty"),
    ]:
        obs = await run(box, "read_file", path=path)
        assert obs.is_error and needle in obs.text, (path, obs.text)
    obs = await run(box, "write_file", path="pkg", content="x")
    assert obs.is_error and "pkg" in obs.text
    await run(box, "bash", command="printf 'a\\0b' > blob.bin")
    obs = await run(box, "read_file", path="blob.bin")
    assert obs.is_error and "binary" in obs.text

    obs = await run(box, "list_dir")
    lines = obs.text.splitlines()
    assert lines[0] == "the workspace root:"
    assert "numeric.py (" in obs.text and "pkg/" in lines and "pkg/sub/" in lines
    assert "pkg/sub/notes.txt" not in obs.text, "two levels deep"
    obs = await run(box, "list_dir", path="pkg/sub")
    assert obs.text == "pkg/sub:\nnotes.txt (10 bytes)"
    assert (await run(box, "list_dir", path="numeric.py")).is_error
    assert "no such directory" in (await run(box, "list_dir", path="nowhere")).text


async def test_edit_replaces_one_exact_occurrence(box: ToolBox) -> None:
    src = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x + 1\n"
    await run(box, "write_file", path="m.py", content=src)

    obs = await run(box, "edit", path="m.py", old="    return x + 1\n", new="    return x\n")
    assert obs.is_error and "occurs 2 times" in obs.text and "lines 2, 6" in obs.text

    obs = await run(box, "edit", path="m.py", old="return x+1", new="return x")
    assert obs.is_error and "not found" in obs.text
    assert "closest line is line 2: '    return x + 1'" in obs.text

    obs = await run(box, "edit", path="m.py", old="def g(x):\n  return x + 1", new="")
    assert obs.is_error and "spaces and line breaks are ignored" in obs.text

    obs = await run(box, "edit", path="m.py", old="zzz qqq", new="y")
    assert obs.is_error and "Use read_file" in obs.text
    assert (await run(box, "edit", path="m.py", old="", new="y")).is_error
    assert (await run(box, "edit", path="gone.py", old="a", new="b")).is_error

    obs = await run(
        box,
        "edit",
        path="m.py",
        old="def g(x):\n    return x + 1",
        new="def g(x):\n    y = x\n    return y",
    )
    assert obs.text == "Edited m.py: lines 5-7 now hold the new text." and not obs.is_error
    after = (await box.sandbox.read_file("m.py")).decode()
    assert after == "def f(x):\n    return x + 1\n\n\ndef g(x):\n    y = x\n    return y\n"
    obs = await run(box, "edit", path="m.py", old="    y = x\n", new="")
    assert obs.text == "Edited m.py: removed the text at line 6."
    assert (await box.sandbox.read_file("m.py")).decode().endswith("def g(x):\n    return y\n")


async def test_run_tests_runs_the_visible_tests_outside_the_workspace(
    box: ToolBox, clamp_task: Task
) -> None:
    pristine = read_tree(clamp_task.workspace_dir)
    obs = await run(box, "run_tests")
    assert obs.exit_code == 1 and not obs.is_error, obs.text
    assert "NotImplementedError" in obs.text and "2 failed" in obs.text
    assert obs.text.endswith("[exit code 1: some tests failed]")

    reference = reference_changes(clamp_task)
    for rel, data in reference.items():
        assert data is not None
        await run(box, "write_file", path=rel, content=data.decode())
    # the agent's own copy of the tests does not persist from one run to the next
    await run(
        box,
        "bash",
        command="echo 'def test_x(): assert 0' > /tmp/rollbox-visible-tests-*/test_examples.py",
    )
    obs = await run(box, "run_tests")
    assert obs.exit_code == 0 and "2 passed" in obs.text, obs.text
    assert obs.text.endswith("[exit code 0: all visible tests passed]")

    after = await workspace_files(box.sandbox)
    changed = {rel for rel in after.keys() | pristine.keys() if after.get(rel) != pristine.get(rel)}
    assert changed == set(reference), "no test file (nor cache) was left in the workspace"


async def test_run_tests_without_visible_tests_says_so() -> None:
    task = load_task(bundled_dir() / "feature-greet-name")
    assert task.visible_tests_dir is None
    async with await make_sandbox(BwrapConfig(), task.workspace_dir) as sb:
        tb = ToolBox(sb, task, tools=["run_tests", "submit"])
        assert tb.names == ("run_tests", "submit")
        obs = await run(tb, "run_tests")
        assert "no visible tests" in obs.text and obs.exit_code is None
        obs = await run(tb, "bash", command="ls")
        assert obs.is_error and "Unknown tool 'bash'" in obs.text
        obs = await run(tb, "submit")
        assert obs.submitted and not obs.is_error
    with pytest.raises(ValueError, match="unknown tools"):
        ToolBox(sb, task, tools=["teleport"])


async def test_infrastructure_failures_propagate(box: ToolBox) -> None:
    await box.sandbox.close()
    with pytest.raises(SandboxError):
        await run(box, "read_file", path="numeric.py")
