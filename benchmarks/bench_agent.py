"""The agent loop: batched generation across episodes, and rollbox's own cost per turn.

    rollbox bench agent [--quick]

1. Batched generation: the bundled model (SmolLM2-135M-Instruct, HFPolicy) answers the first
   turn of 8 real episodes (8 bundled tasks: system prompt, worked example, task), once one
   episode at a time and once all 8 concurrently (so they share forward passes), same prompts,
   seeds and token budget, in the same run. Figure: tokens/s concurrent over tokens/s one at a
   time. Target: at least 4x.
2. rollbox overhead per turn: a scripted policy (no model time) plays episodes of cheap tool
   calls (`bash true`, read_file, list_dir, edit) on a bundled task; per turn, everything
   rollbox spends (parsing, the tool's machinery, the sandbox round trip, the records) is the
   turn's time less the policy's; the commands' own run time is a few microseconds. Baseline:
   a bare fork+exec of `true` on the host, same run. Target: under 5 ms at p50.
"""

from __future__ import annotations

import asyncio
import subprocess
import time

from rollbox.agent.episode import EpisodeConfig, run_episode
from rollbox.agent.prompt import example_messages, system_message, task_message
from rollbox.agent.tools import TOOLS
from rollbox.agent.types import ToolCall
from rollbox.bench import Figure, p50
from rollbox.policies.scripted import ScriptedPolicy
from rollbox.runner import torch_threads
from rollbox.sandbox import BwrapConfig, Factory
from rollbox.tasks import load_tasks, read_tree

TASKS = [
    "feature-is-even",
    "feature-square-number",
    "feature-greet-name",
    "feature-last-item",
    "bugfix-pager-page-count",
    "bugfix-money-round-half-up",
    "ops-make-recipe-tab",
    "docs-version-json",
]


async def _batched(quick: bool) -> list[Figure]:
    from rollbox.policies.hf import HFPolicy

    tasks = load_tasks("bundled")
    policy = HFPolicy(max_batch=8, threads=torch_threads())  # as `rollbox run` runs it
    await policy.load()
    try:
        schemas = [t.schema() for t in TOOLS]
        prompts = []
        for tid in TASKS:
            task = tasks.get(tid)
            prompts.append(
                [
                    system_message(schemas, native_tools=False),
                    *example_messages(),
                    task_message(task, read_tree(task.workspace_dir), show_files_chars=4000),
                ]
            )
        max_tokens = 48 if quick else 128

        async def one(i: int) -> int:
            c = await policy.complete(prompts[i], max_tokens=max_tokens, temperature=1.0, seed=i)
            return c.completion_tokens

        await one(0)  # warm up
        t0 = time.perf_counter()
        solo_tokens = 0
        for i in range(len(prompts)):
            solo_tokens += await one(i)
        solo = solo_tokens / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        together = sum(await asyncio.gather(*(one(i) for i in range(len(prompts)))))
        batched = together / (time.perf_counter() - t0)
    finally:
        await policy.close()
    return [
        Figure.make(
            "agent",
            f"generated tokens/s, {len(prompts)} concurrent episodes (first turns, "
            f"{together} tokens)",
            batched,
            "tokens/s",
            baseline=f"one episode at a time ({solo_tokens} tokens)",
            baseline_value=solo,
            min_ratio=4.0,
        )
    ]


async def _overhead(quick: bool) -> list[Figure]:
    task = load_tasks("bundled").get("feature-is-even")
    cheap = [
        ToolCall(name="bash", arguments={"command": "true"}),
        ToolCall(name="read_file", arguments={"path": "parity.py"}),
        ToolCall(name="list_dir", arguments={}),
        ToolCall(name="edit", arguments={"path": "parity.py", "old": "Parity", "new": "PARITY"}),
    ]
    cheap += [
        *cheap[:3],
        ToolCall(name="edit", arguments={"path": "parity.py", "old": "PARITY", "new": "Parity"}),
    ]
    turns = 12 if quick else 40
    policy = ScriptedPolicy({"*": (cheap * turns)[:turns]})
    sandboxes = Factory(BwrapConfig())
    per_turn: list[float] = []
    for ep in range(2 if quick else 5):
        traj = await run_episode(
            task,
            policy.for_episode(task.id, ep),
            sandboxes,
            judge=None,
            run_id="bench",
            sample=ep,
            seed=ep,
            config=EpisodeConfig(max_turns=turns),
        )
        # the first turn also starts the shell: count it with the rest, it is paid per episode
        per_turn += [s.tool_s + s.overhead_s for s in traj.steps]
    host: list[float] = []
    for _ in range(50):
        t0 = time.perf_counter()
        subprocess.run(["true"], check=True)
        host.append(time.perf_counter() - t0)
    return [
        Figure.make(
            "agent",
            f"rollbox overhead per turn, p50 ({len(per_turn)} turns of cheap tool calls)",
            p50(per_turn) * 1000,
            "ms",
            baseline="bare fork+exec of `true` on the host, p50",
            baseline_value=p50(host) * 1000,
            max_value=5.0,
        )
    ]


def run(quick: bool) -> list[Figure]:
    return asyncio.run(_overhead(quick)) + asyncio.run(_batched(quick))
