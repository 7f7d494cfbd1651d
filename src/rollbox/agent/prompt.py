"""What the policy is told: the system prompt, an example exchange, the task message.

For a policy without native tool calling the system prompt carries the text format of the
tool calls (rollbox.agent.parsing) and, by default, one worked example exchange: a 135M model
follows an example it has just seen far more reliably than a description. Small workspaces are
shown inline (file by file, up to `show_files_chars`), which saves a weak model the turns it
would spend listing and reading them; larger ones are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollbox.agent.parsing import render_tools_prompt
from rollbox.agent.types import Message
from rollbox.tasks.model import Task

SYSTEM = (
    "You are a coding agent working in a sandboxed Linux workspace. You act only through "
    "tools, one call per reply; you see each result before you act again. Change the "
    "workspace so that the task is done, then submit."
)

EXAMPLE_TASK = """In the file `calc.py`, implement `mul(a, b)` so that it returns the product
of a and b.

calc.py:
```python
def mul(a, b):
    raise NotImplementedError
```"""

EXAMPLE_REPLY = """<write_file path="calc.py">
def mul(a, b):
    return a * b
</write_file>"""


def system_message(schemas: Sequence[Mapping[str, Any]], *, native_tools: bool) -> Message:
    if native_tools:
        return Message(role="system", content=SYSTEM)
    return Message(role="system", content=f"{SYSTEM}\n\n{render_tools_prompt(schemas)}")


def example_messages() -> list[Message]:
    """One worked exchange, shown before the task (text-format policies only)."""
    return [
        Message(role="user", content=EXAMPLE_TASK),
        Message(role="assistant", content=EXAMPLE_REPLY),
    ]


def _fence(path: str) -> str:
    return {".py": "python", ".sh": "bash", ".json": "json", ".md": "markdown"}.get(
        path[path.rfind(".") :] if "." in path else "", ""
    )


def task_message(task: Task, files: Mapping[str, bytes], *, show_files_chars: int) -> Message:
    """The instruction, then the workspace: inline when small, else as a listing."""
    parts = [task.spec.instruction.strip()]
    shown: list[str] = []
    rest: list[str] = []
    budget = show_files_chars
    for rel in sorted(files):
        try:
            text = files[rel].decode()
        except UnicodeDecodeError:
            text = None
        if text is None or len(text) > budget:
            rest.append(rel)
            continue
        budget -= len(text)
        shown.append(f"{rel}:\n```{_fence(rel)}\n{text.rstrip()}\n```")
    if shown:
        parts.append("\n\n".join(shown))
    if rest:
        parts.append("Other files in the workspace: " + ", ".join(rest))
    if task.visible_tests_dir is not None:
        parts.append("Visible tests can be run with the run_tests tool.")
    return Message(role="user", content="\n\n".join(parts))


def observation_message(text: str, *, call_id: str | None, tool: str | None) -> Message:
    """The observation as the next message: a tool message for native calls, else user text."""
    if call_id is not None:
        return Message(role="tool", content=text, tool_call_id=call_id, name=tool)
    return Message(role="user", content=f"Observation:\n{text}")
