"""The episode loop with real sandboxes and the real judge; policies are scripted or fakes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rollbox.agent.episode import EpisodeConfig, run_episode
from rollbox.agent.prompt import EXAMPLE_REPLY
from rollbox.agent.types import Completion, Message, ToolCall
from rollbox.errors import ContextLengthError, PolicyError, SandboxError
from rollbox.policies.base import Policy
from rollbox.policies.scripted import ScriptedPolicy, oracle
from rollbox.runner import make_judge
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_task
from tests.conftest import MakeTask

SANDBOXES = Factory(BwrapConfig())
JUDGE = make_judge(SANDBOXES)


class TextPolicy(Policy):
    """Says the given texts in turn, like a model without tool calling; counts tokens."""

    name = "text"
    version = "1"

    def __init__(self, replies: Sequence[str], *, tokens: int = 10, fail: Exception | None = None):
        self.replies = list(replies)
        self.tokens = tokens
        self.fail = fail
        self.seen: list[list[Message]] = []
        self.seeds: list[int | None] = []

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
        if self.fail is not None:
            raise self.fail
        self.seen.append(list(messages))
        self.seeds.append(seed)
        i = len(self.seen) - 1
        text = self.replies[i] if i < len(self.replies) else "<submit/>"
        return Completion(
            text=text,
            completion_tokens=min(self.tokens, max_tokens),
            prompt_tokens=5,
            token_ids=tuple(range(min(self.tokens, max_tokens))),
            logprobs=tuple(-0.5 for _ in range(min(self.tokens, max_tokens))),
        )


async def episode(task_dir: Path, policy: Policy, **kw: Any) -> Any:
    task = load_task(task_dir)
    cfg = kw.pop("config", None)
    return await run_episode(
        task, policy.for_episode(task.id, 0), kw.pop("sandboxes", SANDBOXES),
        judge=kw.pop("judge", JUDGE), run_id="r", sample=0, seed=7, config=cfg,
    )  # fmt: skip


async def test_the_oracle_submits_and_is_paid(make_task: MakeTask) -> None:
    task_dir = make_task()
    t = await episode(task_dir, oracle([load_task(task_dir)]))
    assert t.stop_reason == "submitted" and t.terminated and not t.truncated
    assert t.passed and t.reward == pytest.approx(1.0)
    assert t.judgement["status"] == "judged"
    assert [s.action.tool_call.name for s in t.steps] == ["write_file", "submit"]
    assert t.steps[0].action.native
    assert t.task_version == load_task(task_dir).version
    assert t.policy == {"name": "oracle", "version": t.policy["version"]} and t.policy["version"]
    roles = [m.role for m in t.messages]
    assert roles[:2] == ["system", "user"] and roles.count("tool") == 2
    assert t.sandbox_s > 0 and t.judge_s > 0 and t.wall_s >= t.judge_s


async def test_a_text_policy_is_parsed_shown_the_format_and_an_example(
    make_task: MakeTask,
) -> None:
    reply = '<write_file path="calc.py">\ndef add(a, b):\n    return a + b\n</write_file>'
    policy = TextPolicy([reply, "<submit/>"], tokens=12)
    t = await episode(make_task(), policy)
    assert t.passed and t.stop_reason == "submitted"
    first = policy.seen[0]
    assert "<write_file" in first[0].content  # the format is in the system prompt
    assert any(m.role == "assistant" and m.content == EXAMPLE_REPLY for m in first)
    assert "def add(a, b):" in first[-1].content  # the small workspace is shown inline
    s0 = t.steps[0]
    assert not s0.action.native and s0.action.tool_call.name == "write_file"
    assert s0.action.token_ids == tuple(range(12)) and len(s0.action.logprobs) == 12
    assert t.completion_tokens == 24 and t.prompt_tokens == 10
    # observations come back as user messages for a text policy
    assert t.messages[-1].role == "user" and t.messages[-1].content.startswith("Observation:")
    assert len(set(policy.seeds)) == 2, "each turn samples with its own seed"


async def test_an_invalid_call_is_an_observation_and_a_turn(make_task: MakeTask) -> None:
    unknown = '<tool_call>{"name": "frobnicate", "arguments": {}}</tool_call>'
    policy = TextPolicy(["I think I should add the numbers.", unknown, "<submit/>"])
    t = await episode(make_task(), policy)
    assert len(t.steps) == 3 and t.terminated
    assert t.steps[0].observation.is_error and t.steps[0].action.tool_call is None
    assert t.steps[1].observation.is_error and "frobnicate" in t.steps[1].observation.text
    assert not t.passed and t.reward == 0.0  # judged: the work failed, not the machinery


async def test_turn_budget_truncates_and_the_workspace_is_still_judged(
    make_task: MakeTask,
) -> None:
    fixed = "def add(a, b):\n    return a + b\n"
    script = ScriptedPolicy(
        {
            "*": [
                ToolCall(name="write_file", arguments={"path": "calc.py", "content": fixed}),
                ToolCall(name="bash", arguments={"command": "echo more"}),
                ToolCall(name="bash", arguments={"command": "echo more"}),
            ]
        }
    )
    t = await episode(make_task(), script, config=EpisodeConfig(max_turns=2))
    assert t.stop_reason == "max_turns" and t.truncated and not t.terminated
    assert len(t.steps) == 2 and t.passed


async def test_token_and_wall_budgets(make_task: MakeTask) -> None:
    t = await episode(
        make_task(),
        TextPolicy(["<bash>echo hi</bash>"] * 10, tokens=40),
        config=EpisodeConfig(max_tokens=100),
    )
    assert t.stop_reason == "max_tokens" and t.truncated and t.completion_tokens == 100
    slow = ScriptedPolicy({"*": [ToolCall(name="bash", arguments={"command": "sleep 0.4"})] * 20})
    t = await episode(make_task("feature-slow"), slow, config=EpisodeConfig(wall_s=1.0))
    assert t.stop_reason == "wall_time" and t.truncated and 1 <= len(t.steps) < 5


async def test_policy_failures_and_context_overflow_are_recorded(make_task: MakeTask) -> None:
    task_dir = make_task()
    t = await episode(task_dir, TextPolicy([], fail=PolicyError("endpoint went away")))
    assert t.stop_reason == "policy_error" and "endpoint went away" in (t.infra_error or "")
    assert t.reward is None and t.judgement is None and not t.terminated and not t.truncated
    t = await episode(task_dir, TextPolicy([], fail=ContextLengthError("too long")))
    assert t.stop_reason == "context" and t.truncated and t.reward is not None


async def test_infrastructure_failure_is_never_a_zero_reward(make_task: MakeTask) -> None:
    async def broken(*a: Any, **k: Any) -> Any:
        raise SandboxError("bwrap died")

    t = await episode(make_task(), TextPolicy(["<submit/>"]), sandboxes=broken)
    assert t.stop_reason == "infra_error" and "bwrap died" in (t.infra_error or "")
    assert t.reward is None and t.judgement is None

    from rollbox.errors import JudgeError

    async def judge_crashes(task: Any, ws: Path) -> Any:
        raise JudgeError("the judge's sandbox was killed")

    t = await episode(make_task("feature-b"), TextPolicy(["<submit/>"]), judge=judge_crashes)
    assert t.stop_reason == "infra_error" and t.reward is None and t.steps


async def test_the_trajectory_round_trips_as_json(make_task: MakeTask) -> None:
    from rollbox.agent.types import Trajectory

    task_dir = make_task()
    t = await episode(task_dir, oracle([load_task(task_dir)]))
    back = Trajectory.model_validate_json(t.model_dump_json())
    assert back.model_dump(mode="json") == t.model_dump(mode="json") and back.turns == 2
    assert back.steps == t.steps and back.messages == t.messages
