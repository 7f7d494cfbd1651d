"""The records that cross the agent loop: messages, tool calls, actions, steps, trajectories.

    Policy.complete(messages, tools) -> Completion      (what the model produced)
    Completion -> Action                                 (native tool call, or parsed from text)
    Action -> tools -> Observation                       (what the model sees next)
    Step = Action + Observation + timing;  Trajectory = every step + verdict + reward

Everything here is a frozen pydantic model that serializes to plain JSON, so trajectories can
be written as JSONL and read back by any trainer.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TRAJECTORY_SCHEMA = 1  # bump when the Trajectory record changes shape


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Record):
    """One call of a tool by name, with its arguments (already decoded from JSON or text)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = ""  # the policy's call id, when it gives one (OpenAI native tool calls)


class Message(_Record):
    """A chat message in the OpenAI shape."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: tuple[ToolCall, ...] = ()  # assistant messages with native tool calls
    tool_call_id: str | None = None  # tool messages: the call they answer
    name: str | None = None  # tool messages: the tool's name

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI chat-completions request wants it."""
        import json

        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for i, c in enumerate(self.tool_calls)
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


FinishReason = Literal["stop", "length", "tool_calls", "error"]


class Completion(_Record):
    """What a policy produced for one request."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()  # native tool calls, when the policy makes them
    token_ids: tuple[int, ...] | None = None  # generated tokens, when the policy gives them
    logprobs: tuple[float, ...] | None = None  # log-probability of each generated token
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: FinishReason = "stop"
    generate_s: float = 0.0  # the policy's own time for this request (model or network)


class Action(_Record):
    """The policy's move in one turn: its text and the tool call it amounts to.

    `tool_call` is None when no valid call could be read from the text; `parse_error` then says
    why, and the agent shows that to the model as the observation (the turn still counts).
    """

    text: str
    tool_call: ToolCall | None = None
    parse_error: str | None = None
    native: bool = False  # the call came as a native tool call, not parsed from text
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: FinishReason = "stop"


class Observation(_Record):
    """What a tool returned, as the model will read it."""

    text: str
    is_error: bool = False  # the call was invalid or the tool failed (the model should fix it)
    truncated: bool = False  # the text was cut (head and tail kept, a marker between)
    submitted: bool = False  # the `submit` tool was called: the episode ends here
    exit_code: int | None = None  # for commands (bash, run_tests)


class Step(_Record):
    """One turn: the action, what it led to, and where the time went."""

    index: int
    action: Action
    observation: Observation
    generate_s: float  # the policy's time
    tool_s: float  # the tool's time (the command's own run included)
    overhead_s: float  # everything else rollbox spent on this turn


StopReason = Literal[
    "submitted",  # terminated: the policy called submit
    "max_turns",  # truncated: the turn budget ran out
    "max_tokens",  # truncated: the token budget ran out
    "wall_time",  # truncated: the wall-clock budget ran out
    "context",  # truncated: the conversation no longer fits the policy's context
    "infra_error",  # neither: the machinery failed (sandbox, judge); not the policy's fault
    "policy_error",  # neither: the policy could not act (endpoint down, model crashed)
]


class Trajectory(_Record):
    """One episode, whole: what a learner or a report needs, as one JSON line."""

    schema_version: int = TRAJECTORY_SCHEMA
    episode_id: str  # "<task_id>#<sample>": unique in a run
    run_id: str
    task_id: str
    task_version: str
    family: str
    difficulty: str
    split: str
    sample: int
    seed: int
    policy: dict[str, str]  # {"name": ..., "version": ...}
    messages: tuple[Message, ...]  # the whole conversation, system prompt first
    steps: tuple[Step, ...]
    terminated: bool  # the episode ended on its own (submitted)
    truncated: bool  # a budget ran out
    stop_reason: StopReason
    infra_error: str | None = None  # what failed, when stop_reason is infra_error/policy_error
    judgement: dict[str, Any] | None = None  # Judgement.to_dict(): verdict, reward breakdown
    reward: float | None = None  # judgement's total; None when not judged or undecided
    passed: bool = False  # every required test passed (correctness == 1)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started_at: float = 0.0  # unix time
    wall_s: float = 0.0
    generate_s: float = 0.0
    tool_s: float = 0.0
    judge_s: float = 0.0
    sandbox_s: float = 0.0  # time sandboxes of this episode were alive (agent's and judge's)

    @property
    def turns(self) -> int:
        return len(self.steps)
