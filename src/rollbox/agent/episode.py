"""One episode: a sandbox from the task's workspace, the policy acting through tools over many
turns, the finished workspace handed to a judge, and one Trajectory recording all of it.

    traj = await run_episode(task, policy, sandboxes, judge=judge, run_id=..., sample=0, seed=1)

Budgets: turns (the task's max_turns unless overridden), generated tokens, wall clock. An
episode is `terminated` when the policy submits and `truncated` when a budget runs out; either
way its workspace is judged. A failure of the machinery (the sandbox died, the judge crashed)
or of the policy (endpoint down) ends the episode with stop_reason `infra_error` /
`policy_error`, is recorded with its message, and is never judged into a zero reward.

agent/ knows neither the sandbox backend nor the judge: both come in as callables.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rollbox.agent.parsing import action_from_completion, stop_sequences
from rollbox.agent.prompt import example_messages, observation_message, system_message, task_message
from rollbox.agent.tools import ToolBox
from rollbox.agent.types import Action, Message, Observation, Step, StopReason, Trajectory
from rollbox.errors import ContextLengthError, PolicyError, RollboxError, SandboxError
from rollbox.policies.base import Policy
from rollbox.sandbox.base import SandboxFactory
from rollbox.sandbox.config import Limits
from rollbox.sandbox.images import MOUNT_POINT as IMAGE_MOUNT
from rollbox.sandbox.images import build_image_async
from rollbox.tasks.loader import read_tree
from rollbox.tasks.model import Task

# judge(task, finished workspace on the host) -> (Judgement.to_dict(), reward total or None,
# passed); raises RollboxError when it cannot decide
Judge = Callable[[Task, Path], Awaitable[tuple[dict[str, Any], float | None, bool]]]
StepHook = Callable[[Step], None]


class EpisodeConfig(BaseModel):
    """Budgets and knobs of one episode."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_turns: int | None = Field(None, gt=0, description="Turns (default: the task's).")
    max_tokens: int = Field(4096, gt=0, description="Tokens the policy may generate in all.")
    max_tokens_per_turn: int = Field(384, gt=0, description="Tokens per reply.")
    wall_s: float = Field(600.0, gt=0, description="Wall clock of the whole episode.")
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature.")
    command_timeout_s: float | None = Field(
        None, gt=0, description="Wall clock of one command (default: the task's timeout)."
    )
    observation_chars: int = Field(4000, ge=200, description="Longest observation shown.")
    show_files_chars: int = Field(
        4000, ge=0, description="Show workspace files inline up to this many characters."
    )
    example: bool = Field(True, description="Show a worked example (text-format policies).")


def turn_seed(seed: int, turn: int) -> int:
    """A per-turn seed derived from the episode's seed (stable across runs and machines)."""
    digest = hashlib.sha256(f"{seed}:{turn}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


async def run_episode(
    task: Task,
    policy: Policy,
    sandboxes: SandboxFactory,
    *,
    judge: Judge | None,
    run_id: str,
    sample: int,
    seed: int,
    config: EpisodeConfig | None = None,
    on_step: StepHook | None = None,
) -> Trajectory:
    """Run one episode to its end and return its trajectory (never raises for the policy's or
    the machinery's failures: they are recorded)."""
    cfg = config or EpisodeConfig()
    max_turns = cfg.max_turns or task.spec.limits.max_turns
    started = time.time()
    t0 = time.perf_counter()
    messages: list[Message] = []
    steps: list[Step] = []
    stop: StopReason = "max_turns"
    terminated = False
    infra: str | None = None
    prompt_tokens = completion_tokens = 0
    generate_s = tool_s = judge_s = sandbox_s = 0.0
    judgement: dict[str, Any] | None = None
    reward: float | None = None
    passed = False

    sandbox = None
    toolbox: ToolBox | None = None
    try:
        env: dict[str, str] = {}
        mounts = {}
        if task.spec.environment.python_packages:
            image = await build_image_async(list(task.spec.environment.python_packages))
            mounts = image.mount()
        limits = Limits(memory_mb=task.spec.limits.memory_mb)
        sb_t0 = time.perf_counter()
        sandbox = await sandboxes(task.workspace_dir, mounts=mounts, limits=limits)
        if mounts:
            env["PYTHONPATH"] = sandbox.path(IMAGE_MOUNT)
        toolbox = ToolBox(
            sandbox,
            task,
            observation_chars=cfg.observation_chars,
            command_timeout_s=cfg.command_timeout_s,
            env=env,
        )
        schemas = toolbox.schemas()
        native = policy.native_tools
        messages.append(system_message(schemas, native_tools=native))
        if cfg.example and not native:
            messages.extend(example_messages())
        messages.append(
            task_message(task, read_tree(task.workspace_dir), show_files_chars=cfg.show_files_chars)
        )
        stops: Sequence[str] = () if native else stop_sequences(schemas)

        for turn in range(max_turns):
            if time.perf_counter() - t0 >= cfg.wall_s:
                stop = "wall_time"
                break
            left = cfg.max_tokens - completion_tokens
            if left <= 0:
                stop = "max_tokens"
                break
            turn_t0 = time.perf_counter()
            try:
                completion = await policy.complete(
                    messages,
                    tools=schemas if native else None,
                    max_tokens=min(cfg.max_tokens_per_turn, left),
                    temperature=cfg.temperature,
                    seed=turn_seed(seed, turn),
                    stop=list(stops) or None,
                )
            except ContextLengthError:
                stop = "context"
                break
            gen_s = time.perf_counter() - turn_t0
            generate_s += gen_s
            prompt_tokens += completion.prompt_tokens
            completion_tokens += completion.completion_tokens
            action = action_from_completion(completion, schemas)
            messages.append(_assistant(action))
            tool_t0 = time.perf_counter()
            obs = await _observe(toolbox, action)
            t_tool = time.perf_counter() - tool_t0
            tool_s += t_tool
            call_id = None
            if action.native and action.tool_call is not None:
                call_id = action.tool_call.id or f"call_{turn}"
            shown = obs.text
            if not native and _changed(action, obs):
                shown += f"\n{SUBMIT_HINT}"
            messages.append(
                observation_message(
                    shown,
                    call_id=call_id,
                    tool=action.tool_call.name if action.tool_call else None,
                )
            )
            step = Step(
                index=turn,
                action=action,
                observation=obs,
                generate_s=gen_s,
                tool_s=t_tool,
                overhead_s=max(0.0, time.perf_counter() - turn_t0 - gen_s - t_tool),
            )
            steps.append(step)
            if on_step is not None:
                on_step(step)
            if obs.submitted:
                stop, terminated = "submitted", True
                break
        else:
            stop = "max_turns"

        if judge is not None:
            j_t0 = time.perf_counter()
            judgement, reward, passed = await judge(task, sandbox.workspace)
            judge_s = time.perf_counter() - j_t0
    except PolicyError as e:
        stop, infra = "policy_error", f"{type(e).__name__}: {e}"
    except (SandboxError, RollboxError, OSError) as e:
        stop, infra = "infra_error", f"{type(e).__name__}: {e}"
    finally:
        if toolbox is not None:
            with contextlib.suppress(RollboxError):
                await toolbox.close()
        if sandbox is not None:
            await sandbox.close()
            sandbox_s = time.perf_counter() - sb_t0

    truncated = not terminated and stop in ("max_turns", "max_tokens", "wall_time", "context")
    return Trajectory(
        episode_id=f"{task.id}#{sample}",
        run_id=run_id,
        task_id=task.id,
        task_version=task.version,
        family=str(task.spec.family),
        difficulty=str(task.spec.difficulty),
        split=str(task.spec.split),
        sample=sample,
        seed=seed,
        policy={"name": policy.name, "version": policy.version},
        messages=tuple(messages),
        steps=tuple(steps),
        terminated=terminated,
        truncated=truncated,
        stop_reason=stop,
        infra_error=infra,
        judgement=judgement,
        reward=reward,
        passed=passed,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        started_at=started,
        wall_s=time.perf_counter() - t0,
        generate_s=generate_s,
        tool_s=tool_s,
        judge_s=judge_s,
        sandbox_s=sandbox_s,
    )


SUBMIT_HINT = "If the task is done, reply <submit/>."


def _changed(action: Action, obs: Observation) -> bool:
    """The call changed a file (a moment to remind a small model that it can submit)."""
    call = action.tool_call
    return call is not None and call.name in ("write_file", "edit") and not obs.is_error


def _assistant(action: Action) -> Message:
    calls = (action.tool_call,) if action.native and action.tool_call is not None else ()
    return Message(role="assistant", content=action.text, tool_calls=calls)


async def _observe(toolbox: ToolBox, action: Action) -> Observation:
    if action.tool_call is None:
        return Observation(text=action.parse_error or "no tool call found", is_error=True)
    return await toolbox.run(action.tool_call)
