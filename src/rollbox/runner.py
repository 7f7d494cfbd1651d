"""The main job: a policy against a task set, many episodes at once, into a run directory.

    result = await run(RunConfig(tasks="bundled", policy="smollm2", samples_per_task=4))

Episodes are (task, sample) pairs. Each gets a seed derived from the run's seed, the task id
and the sample, so a run is reproducible and a resumed run gives the episodes it still owes
the same seeds. Finished episodes are in the run store (rollbox.store.runstore); a run started
again with the same `out` and the same configuration does only the episodes it still owes.

Policies by name: `smollm2` (the bundled model), `hf:PATH` (a local Hugging Face model or
GGUF), `openai:URL` (an OpenAI-compatible endpoint), `scripted:FILE` (replay a script),
`oracle` (replay each task's reference solution).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rollbox.agent.episode import EpisodeConfig, Judge, run_episode
from rollbox.agent.types import Trajectory
from rollbox.errors import ConfigError
from rollbox.policies.base import Policy
from rollbox.sandbox.base import SandboxFactory
from rollbox.store.runstore import RunStore
from rollbox.tasks.loader import load_tasks, resolve_tasks_dir
from rollbox.tasks.model import Task

log = logging.getLogger(__name__)
POLICY_FORMS = "smollm2, hf:PATH, openai:URL, scripted:FILE or oracle"


class RunConfig(BaseModel):
    """What `rollbox run` was asked to do."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: str = Field("bundled", description="A task directory, or 'bundled'.")
    split: str | None = Field(None, description="Only this split (train/eval).")
    family: str | None = Field(None, description="Only this family.")
    difficulty: str | None = Field(None, description="Only this difficulty.")
    task_ids: tuple[str, ...] = Field((), description="Only these tasks.")
    policy: str = Field("smollm2", description=f"Who acts: {POLICY_FORMS}.")
    limit: int | None = Field(None, gt=0, description="At most this many tasks.")
    samples_per_task: int = Field(1, gt=0, description="Episodes per task.")
    concurrency: int = Field(8, gt=0, description="Episodes at once.")
    seed: int = Field(0, description="The run's seed.")
    backend: str = Field("bwrap", description="Sandbox backend.")
    allow_invalid: bool = Field(False, description="Also run tasks that failed validation.")
    episode: EpisodeConfig = Field(default_factory=EpisodeConfig)


def episode_seed(seed: int, task_id: str, sample: int) -> int:
    digest = hashlib.sha256(f"{seed}:{task_id}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def select_tasks(cfg: RunConfig) -> list[Task]:
    where = resolve_tasks_dir(cfg.tasks)
    ts = load_tasks(where)
    tasks = list(ts)
    if cfg.task_ids:
        missing = sorted(set(cfg.task_ids) - {t.id for t in tasks})
        if missing:
            raise ConfigError(f"no such task(s) in {cfg.tasks!r}: {', '.join(missing)}")
        tasks = [t for t in tasks if t.id in set(cfg.task_ids)]
    if not cfg.allow_invalid:
        # tasks whose current version failed `rollbox tasks validate` are left out
        from rollbox.tasks.validate import load_exclusions

        excluded = load_exclusions(where, tasks)
        named = sorted(set(cfg.task_ids) & set(excluded))
        if named:
            why = "; ".join(f"{t}: {', '.join(excluded[t][:2])}" for t in named)
            raise ConfigError(
                f"task(s) failed validation ({why}); fix them, or pass --allow-invalid"
            )
        if excluded:
            log.warning(
                "%d task(s) left out: they failed validation (%s); --allow-invalid runs them",
                len(excluded),
                ", ".join(sorted(excluded)[:5]),
            )
        tasks = [t for t in tasks if t.id not in excluded]
    for attr, want in (
        ("split", cfg.split),
        ("family", cfg.family),
        ("difficulty", cfg.difficulty),
    ):
        if want is not None:
            tasks = [t for t in tasks if str(getattr(t.spec, attr)) == want]
    if cfg.limit is not None:
        tasks = tasks[: cfg.limit]
    if not tasks:
        bad = f" ({len(ts.errors)} could not be loaded)" if ts.errors else ""
        filters = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("split", cfg.split),
                ("family", cfg.family),
                ("difficulty", cfg.difficulty),
            )
            if v is not None
        )
        raise ConfigError(
            f"no tasks to run in {str(where)!r}{bad}" + (f" matching {filters}" if filters else "")
        )
    return tasks


def torch_threads() -> int:
    """torch's threads for a local model: 1 unless ROLLBOX_TORCH_THREADS says otherwise. The
    model shares the cores with sandboxes and judges; one thread measured steadier and about
    twice as fast as torch's default there (its spinning threads fight the sandboxes)."""
    raw = os.environ.get("ROLLBOX_TORCH_THREADS", "1")
    try:
        n = int(raw)
    except ValueError:
        raise ConfigError(f"ROLLBOX_TORCH_THREADS must be a number, not {raw!r}") from None
    if n < 1:
        raise ConfigError(f"ROLLBOX_TORCH_THREADS must be at least 1, not {n}")
    return n


async def make_policy(spec: str, tasks: Sequence[Task], *, max_batch: int = 16) -> Policy:
    """The policy a name stands for, loaded and checked (an endpoint is pinged)."""
    kind, _, arg = spec.partition(":")
    if spec == "smollm2" or kind == "hf":
        from rollbox.policies.hf import HFPolicy

        hf = HFPolicy(arg or None, max_batch=max_batch, threads=torch_threads())
        return await _ready(hf, hf.load())
    if kind == "openai" and arg:
        from rollbox.policies.openai import OpenAIPolicy

        oa = OpenAIPolicy(arg)
        return await _ready(oa, oa.check())
    if kind == "scripted" and arg:
        from rollbox.policies.scripted import ScriptedPolicy

        return ScriptedPolicy.from_file(arg)
    if spec == "oracle":
        from rollbox.policies.scripted import oracle

        return oracle(tasks)
    raise ConfigError(f"unknown policy {spec!r}: use {POLICY_FORMS}")


async def _ready(policy: Policy, start: Awaitable[None]) -> Policy:
    """The policy once `start` (loading, a ping) succeeded; closed if it did not."""
    try:
        await start
    except BaseException:
        await policy.close()
        raise
    return policy


def make_judge(sandboxes: SandboxFactory) -> Judge:
    """The episode's judge: the finished workspace judged in fresh sandboxes."""
    from rollbox.judges import judge_workspace

    async def judge(task: Task, workspace: Path) -> tuple[dict[str, Any], float | None, bool]:
        j = await judge_workspace(task, workspace, sandboxes)  # JudgeError: an infra failure
        r = j.reward
        return j.to_dict(), (r.total if r else None), bool(r and r.correctness >= 1.0)

    return judge


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples with c correct (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def summarize(trajs: Iterable[Trajectory], *, wall_s: float | None = None) -> dict[str, Any]:
    """The run's numbers: overall, by family, by difficulty.

    pass_rate is over the episodes that were decided (infrastructure and policy failures, and
    verdicts the judge could not decide, are counted apart, not as failures).
    """
    ts = list(trajs)
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for t in ts:
        by_task[t.task_id].append(t)

    def block(group: list[Trajectory]) -> dict[str, Any]:
        decided = [t for t in group if t.reward is not None]
        tasks: dict[str, list[Trajectory]] = defaultdict(list)
        for t in decided:
            tasks[t.task_id].append(t)
        n_min = min((len(v) for v in tasks.values()), default=0)
        ks = sorted({k for k in (1, 2, 4, 8, 16, 32, n_min) if 1 <= k <= n_min})
        return {
            "n_episodes": len(group),
            "n_tasks": len({t.task_id for t in group}),
            "n_decided": len(decided),
            "passed": sum(t.passed for t in decided),
            "pass_rate": (sum(t.passed for t in decided) / len(decided)) if decided else 0.0,
            "pass_at_k": {
                str(k): sum(pass_at_k(len(v), sum(x.passed for x in v), k) for v in tasks.values())
                / len(tasks)
                for k in ks
            },
            "mean_reward": (sum(t.reward or 0.0 for t in decided) / len(decided))
            if decided
            else 0.0,
            "mean_turns": (sum(t.turns for t in group) / len(group)) if group else 0.0,
        }

    summary = block(ts)
    summary.update(
        {
            "infra_failures": sum(t.stop_reason == "infra_error" for t in ts),
            "policy_failures": sum(t.stop_reason == "policy_error" for t in ts),
            "undecided": sum(
                t.reward is None and t.stop_reason not in ("infra_error", "policy_error")
                for t in ts
            ),
            "tokens_generated": sum(t.completion_tokens for t in ts),
            "prompt_tokens": sum(t.prompt_tokens for t in ts),
            "sandbox_seconds": round(sum(t.sandbox_s + t.judge_s for t in ts), 3),
            "generate_seconds": round(sum(t.generate_s for t in ts), 3),
            "stop_reasons": dict(Counter(t.stop_reason for t in ts)),
            "solved": sorted(t.episode_id for t in ts if t.passed),
            "by_family": {
                f: block([t for t in ts if t.family == f]) for f in sorted({t.family for t in ts})
            },
            "by_difficulty": {
                d: block([t for t in ts if t.difficulty == d])
                for d in sorted({t.difficulty for t in ts})
            },
        }
    )
    if wall_s is not None:
        summary["wall_s"] = round(wall_s, 3)
    return summary


ProgressHook = Callable[[Trajectory, int, int], None]  # (finished one, done so far, total)


async def run(
    cfg: RunConfig,
    out: Path,
    *,
    sandboxes: SandboxFactory,
    policy: Policy | None = None,
    on_episode: ProgressHook | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) every episode the config asks for into `out`; returns the summary."""
    tasks = select_tasks(cfg)
    owned = policy is None
    if policy is None:
        policy = await make_policy(cfg.policy, tasks, max_batch=max(cfg.concurrency, 1))
    t0 = time.perf_counter()
    try:
        identity = {
            "tasks": str(resolve_tasks_dir(cfg.tasks)),
            "task_versions": {t.id: t.version for t in tasks},
            "policy": {"spec": cfg.policy, "name": policy.name, "version": policy.version},
            "samples_per_task": cfg.samples_per_task,
            "seed": cfg.seed,
            "episode": cfg.episode.model_dump(),
        }
        store = RunStore.open_or_create(
            out, {**identity, "run": cfg.model_dump()}, identity_keys=list(identity)
        )
        done = store.done_ids()
        todo = [
            (t, s) for t in tasks for s in range(cfg.samples_per_task) if f"{t.id}#{s}" not in done
        ]
        total = len(tasks) * cfg.samples_per_task
        finished = total - len(todo)
        if on_start is not None:
            on_start(finished, total)
        judge = make_judge(sandboxes)
        sem = asyncio.Semaphore(cfg.concurrency)
        lock = asyncio.Lock()

        async def one(task: Task, sample: int) -> None:
            nonlocal finished
            async with sem:
                traj = await run_episode(
                    task,
                    policy.for_episode(task.id, sample),
                    sandboxes,
                    judge=judge,
                    run_id=store.run_id,
                    sample=sample,
                    seed=episode_seed(cfg.seed, task.id, sample),
                    config=cfg.episode,
                )
            async with lock:
                store.add(traj)
                finished += 1
                if on_episode is not None:
                    on_episode(traj, finished, total)

        with store:
            await asyncio.gather(*(one(t, s) for t, s in todo))
            summary = summarize(store.trajectories(), wall_s=time.perf_counter() - t0)
            summary["run_id"] = store.run_id
            summary["policy"] = {"name": policy.name, "version": policy.version}
            store.write_summary(summary)
        return summary
    finally:
        if owned:
            await policy.close()
