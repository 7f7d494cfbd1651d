"""The scripted policy: replays given actions. For tests, oracles, the canary suite, benchmarks.

A script is a list of replies, each either text (read like a model's text, tool-call format
and all: docs/tool-format.md) or a tool call {"tool": NAME, "arguments": {...}} given as a
native call. A script file (JSON or YAML) is either one list, replayed in every episode, or a
mapping from task id to a list ("*" for every other task):

    {"feature-is-even": [
        {"tool": "write_file", "arguments": {"path": "parity.py", "content": "..."}},
        {"tool": "submit"}],
     "*": ["<submit/>"]}

When a script runs out, the policy submits. `oracle(tasks)` makes the script that writes each
task's reference solution and submits: every valid task should pass with it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from rollbox.agent.types import Completion, Message, ToolCall
from rollbox.errors import ConfigError
from rollbox.policies.base import Policy

Reply = str | ToolCall
SUBMIT = ToolCall(name="submit", id="call_submit")


def _reply(item: Any, where: str) -> Reply:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping) and isinstance(item.get("tool"), str):
        args = item.get("arguments", {})
        extra = set(item) - {"tool", "arguments"}
        if not isinstance(args, Mapping) or extra:
            raise ConfigError(f"{where}: a tool call is {{'tool': NAME, 'arguments': {{...}}}}")
        return ToolCall(name=item["tool"], arguments=dict(args))
    raise ConfigError(f"{where}: a reply is text or {{'tool': NAME, 'arguments': {{...}}}}")


class ScriptedPolicy(Policy):
    native_tools = True  # tool-call replies come as native calls; text replies are parsed

    def __init__(self, scripts: Mapping[str, Sequence[Reply]], *, name: str = "scripted") -> None:
        self.scripts = {k: tuple(v) for k, v in scripts.items()}
        self.name = name
        plain = {
            k: [r if isinstance(r, str) else r.model_dump() for r in v]
            for k, v in self.scripts.items()
        }
        digest = json.dumps(plain, sort_keys=True)
        self.version = hashlib.sha256(digest.encode()).hexdigest()[:12]
        self._task: str | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedPolicy:
        p = Path(path)
        try:
            raw = p.read_text()
        except OSError as e:
            raise ConfigError(f"cannot read the script {p}: {e.strerror or e}") from None
        try:
            data = yaml.safe_load(raw)  # JSON is YAML
        except yaml.YAMLError as e:
            raise ConfigError(f"{p}: not valid JSON or YAML: {e}") from None
        if isinstance(data, list):
            data = {"*": data}
        if not isinstance(data, Mapping) or not all(isinstance(v, list) for v in data.values()):
            raise ConfigError(f"{p}: a script is a list of replies or a mapping task id -> list")
        scripts = {
            str(k): [_reply(x, f"{p}: {k}[{i}]") for i, x in enumerate(v)] for k, v in data.items()
        }
        return cls(scripts, name=f"scripted:{p.name}")

    def for_episode(self, task_id: str, sample: int) -> Policy:
        view = ScriptedPolicy.__new__(ScriptedPolicy)
        view.__dict__.update(self.__dict__)
        view._task = task_id
        return view

    def _script(self) -> tuple[Reply, ...]:
        if self._task is not None and self._task in self.scripts:
            return self.scripts[self._task]
        return self.scripts.get("*", ())

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.7,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        # native: the agent shows no worked example, so every assistant message is ours
        turn = sum(m.role == "assistant" for m in messages)
        script = self._script()
        reply: Reply = script[turn] if turn < len(script) else SUBMIT
        if isinstance(reply, str):
            return Completion(text=reply, completion_tokens=0)
        call = reply if reply.id else reply.model_copy(update={"id": f"call_{turn}"})
        return Completion(text="", tool_calls=(call,), finish_reason="tool_calls")


def oracle(tasks: Sequence[Any]) -> ScriptedPolicy:
    """Write each task's reference (files written, files deleted with bash), then submit."""
    from rollbox.tasks.loader import reference_changes

    scripts: dict[str, list[Reply]] = {}
    for t in tasks:
        steps: list[Reply] = []
        for rel, data in sorted(reference_changes(t).items()):
            if data is None:
                steps.append(ToolCall(name="bash", arguments={"command": f"rm -f -- '{rel}'"}))
            else:
                steps.append(
                    ToolCall(name="write_file", arguments={"path": rel, "content": data.decode()})
                )
        steps.append(SUBMIT)
        scripts[t.id] = steps
    return ScriptedPolicy(scripts, name="oracle")
