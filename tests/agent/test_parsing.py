"""The text format for tool calls: tolerant where a small model slips, clear where it fails."""

from __future__ import annotations

from typing import Any

import pytest

from rollbox.agent.parsing import (
    action_from_completion,
    parse_action,
    render_tools_prompt,
    stop_sequences,
)
from rollbox.agent.tools import TOOLS
from rollbox.agent.types import Completion, ToolCall

SCHEMAS = [t.schema() for t in TOOLS]


def call(text: str) -> ToolCall:
    parsed, error = parse_action(text, SCHEMAS)
    assert error is None, error
    assert parsed is not None
    return parsed


def error_of(text: str) -> str:
    parsed, error = parse_action(text, SCHEMAS)
    assert parsed is None, parsed
    assert error
    return error


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        # the tag form
        ("<bash>ls -la</bash>", "bash", {"command": "ls -la"}),
        ("Let me look.\n<BASH>\nls -la\n</Bash> then more", "bash", {"command": "ls -la\n"}),
        ("<bash>pytest -q", "bash", {"command": "pytest -q"}),  # closing tag missing at the end
        ("<bash command='echo > out.txt'/>", "bash", {"command": "echo > out.txt"}),
        (
            '<write_file path="m.py">\ndef f():\n    return 1\n</write_file>',
            "write_file",
            {"path": "m.py", "content": "def f():\n    return 1\n"},
        ),
        (
            '<write_file path="m.py">\n```python\ndef f():\n    return 1\n```\n</write_file>',
            "write_file",
            {"path": "m.py", "content": "def f():\n    return 1\n"},
        ),
        (
            "<write_file path=src/m.py>\n```\nx = 1\n",  # unquoted value, fence and tag unclosed
            "write_file",
            {"path": "src/m.py", "content": "x = 1\n"},
        ),
        (
            '<write_file path="pkg/__init__.py"></write_file>',
            "write_file",
            {"path": "pkg/__init__.py", "content": ""},
        ),
        (
            "<write_file><path>a.txt</path><content>hi\n</content></write_file>",
            "write_file",
            {"path": "a.txt", "content": "hi\n"},
        ),
        ('<read_file path="m.py"/>', "read_file", {"path": "m.py"}),
        ("<Read_File PATH='m.py' />", "read_file", {"path": "m.py"}),
        (
            '<read_file path="m.py" offset="10" limit=5/>',
            "read_file",
            {"path": "m.py", "offset": 10, "limit": 5},
        ),
        ("<read_file>m.py</read_file>", "read_file", {"path": "m.py"}),
        (
            '<edit path="m.py">\n<old>\n    return 1\n</old>\n<new>\n    return 2\n</new>\n</edit>',
            "edit",
            {"path": "m.py", "old": "    return 1\n", "new": "    return 2\n"},
        ),
        ('<edit path="m.py"><OLD>a</OLD><new>b', "edit", {"path": "m.py", "old": "a", "new": "b"}),
        ("<list_dir/>", "list_dir", {}),
        ("<list_dir>src</list_dir>", "list_dir", {"path": "src"}),
        ("<run_tests/>", "run_tests", {}),
        ("<submit/>", "submit", {}),
        ("All done. <SUBMIT>", "submit", {}),
        ("<submit>I fixed it.</submit>", "submit", {}),
        # the JSON form
        (
            '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>',
            "bash",
            {"command": "ls"},
        ),
        (
            '<tool_call>\n```json\n{"name": "bash", "parameters": {"command": "ls"},}\n```\n',
            "bash",
            {"command": "ls"},
        ),
        (
            "<tool_call>{'name': 'read_file', 'arguments': {'path': 'm.py', 'offset': '3'}}",
            "read_file",
            {"path": "m.py", "offset": 3},
        ),
        (
            '<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}</tool_call>',
            "bash",
            {"command": "ls"},
        ),
        (  # a raw line break inside a JSON string
            '<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "x\ny"}}',
            "write_file",
            {"path": "a", "content": "x\ny"},
        ),
        (
            '<tool_call>{"type": "function", "function": {"name": "submit"}}</tool_call>',
            "submit",
            {},
        ),
        ("<tool_call><bash>ls</bash></tool_call>", "bash", {"command": "ls"}),
        ('Sure: {"name": "bash", "arguments": {"command": "pwd"}}', "bash", {"command": "pwd"}),
        # the first call wins; thinking is skipped
        ("<bash>one</bash>\n<bash>two</bash>", "bash", {"command": "one"}),
        ('<submit/> <tool_call>{"name": "bash"}</tool_call>', "submit", {}),
        ("<think>maybe <bash>rm -rf x</bash>?</think>\n<bash>ls</bash>", "bash", {"command": "ls"}),
    ],
)
def test_calls_are_read_tolerantly(text: str, name: str, arguments: dict[str, Any]) -> None:
    got = call(text)
    assert (got.name, got.arguments) == (name, arguments)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("I think the bug is in cache.py.", ["No tool call found", "<bash>command</bash>", "edit"]),
        ("", ["No tool call found", "<submit/>"]),
        ("<frobnicate>x</frobnicate>", ["Unknown tool <frobnicate>", "read_file, write_file"]),
        (
            '<tool_call>{"name": "frob", "arguments": {}}</tool_call>',
            ["Unknown tool 'frob'", "bash, read_file"],
        ),
        (
            '<tool_call>{"name": "bash", "arguments": {"command": "ls"</tool_call>',
            ["could not be read", "line 1 column", '"arguments"'],
        ),
        ('<tool_call>{"arguments": {"command": "ls"}}</tool_call>', ['needs a "name"']),
        ('<tool_call>{"name": "bash", "arguments": [1]}</tool_call>', ["must be a JSON object"]),
        ("<tool_call>bash ls</tool_call>", ["must hold a JSON object"]),
        ('<edit path="m.py">just text</edit>', ["<edit>: missing 'new'", "<old>...</old>"]),
        ('<bash foo="1">ls</bash>', ["unknown argument 'foo'", "<bash>command</bash>"]),
        ('<read_file path="m.py" offset="ten"/>', ["'offset' must be an integer", "'ten'"]),
        ('<read_file path="m.py">more text</read_file>', ["no argument left", "read_file"]),
        ("<bash", ["missing 'command'"]),
        ("<think><bash>ls</bash></think>", ["No tool call found"]),
    ],
)
def test_errors_name_the_problem(text: str, needles: list[str]) -> None:
    error = error_of(text)
    for needle in needles:
        assert needle in error


def test_the_prompt_is_compact_and_its_templates_parse() -> None:
    prompt = render_tools_prompt(SCHEMAS)
    assert len(prompt) < 1000, "the bundled model is tiny: the prompt must stay small"
    for t in TOOLS:
        assert f"<{t.name}" in prompt
    assert "Optional attributes: offset (integer), limit (integer)" in prompt
    assert '<tool_call>{"name": "bash", "arguments": {"command": "..."}}</tool_call>' in prompt
    templates = [ln for ln in prompt.splitlines() if ln.startswith("<")]
    assert len(templates) == len(TOOLS)
    assert [call(ln).name for ln in templates] == [t.name for t in TOOLS]
    assert '<edit path="..."><old>...</old><new>...</new></edit>' in templates


def test_stop_sequences_close_every_form() -> None:
    stops = stop_sequences(SCHEMAS)
    assert stops[0] == "</tool_call>"
    assert {f"</{t.name}>" for t in TOOLS} <= set(stops)


def test_schemas_without_tools_still_answer() -> None:
    assert parse_action("<bash>ls</bash>", []) == (
        None,
        "Unknown tool <bash>. No tools are available.",
    )
    assert parse_action("text", [])[1] == "No tool call found, and no tools are available."


def test_action_prefers_native_calls_and_carries_the_tokens() -> None:
    native = ToolCall(name="bash", arguments={"command": "ls"}, id="call_1")
    comp = Completion(
        text="<submit/>",
        tool_calls=(native,),
        token_ids=(1, 2, 3),
        logprobs=(-0.1, -0.2, -0.3),
        prompt_tokens=50,
        completion_tokens=3,
        finish_reason="tool_calls",
    )
    action = action_from_completion(comp, SCHEMAS)
    assert action.tool_call == native and action.native and action.parse_error is None
    assert action.token_ids == (1, 2, 3) and action.logprobs == (-0.1, -0.2, -0.3)
    assert (action.prompt_tokens, action.completion_tokens) == (50, 3)
    assert action.finish_reason == "tool_calls" and action.text == "<submit/>"

    action = action_from_completion(Completion(text="ok <submit/>"), SCHEMAS)
    assert action.tool_call == ToolCall(name="submit") and not action.native

    action = action_from_completion(Completion(text="hmm"), SCHEMAS)
    assert action.tool_call is None and "No tool call found" in (action.parse_error or "")


def test_a_call_cut_off_by_the_length_limit_is_not_run() -> None:
    cut = Completion(text='<write_file path="m.py">\ndef f(', finish_reason="length")
    action = action_from_completion(cut, SCHEMAS)
    assert action.tool_call is None
    assert "length limit" in (action.parse_error or "") and "write_file" in (
        action.parse_error or ""
    )
    # the same text when the model ended its turn itself: tolerated
    ended = cut.model_copy(update={"finish_reason": "stop"})
    assert action_from_completion(ended, SCHEMAS).tool_call == ToolCall(
        name="write_file", arguments={"path": "m.py", "content": "def f("}
    )
    # a complete call before the limit still runs
    done = Completion(text="<bash>ls</bash> and then I", finish_reason="length")
    assert action_from_completion(done, SCHEMAS).tool_call == ToolCall(
        name="bash", arguments={"command": "ls"}
    )
    nothing = Completion(text="Let me think about", finish_reason="length")
    assert (action_from_completion(nothing, SCHEMAS).parse_error or "").startswith(
        "Your reply hit the length limit. No tool call found"
    )
