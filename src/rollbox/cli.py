"""The `rollbox` command. Every RollboxError becomes one clear line and exit status 2."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rollbox import __version__
from rollbox.errors import ConfigError, RollboxError
from rollbox.tasks import BUNDLED, Task, TaskSet, load_task, load_tasks, read_tree

app = typer.Typer(
    help="rollbox: run LLM agents on executable, verifiable tasks, and score what they did.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
tasks_app = typer.Typer(help="List, show and check task sets.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")
sandbox_app = typer.Typer(help="Run commands in sandboxes.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")

out = Console()
err = Console(stderr=True)

TasksArg = Annotated[
    str, typer.Argument(help="A directory of tasks, one task directory, or 'bundled'.")
]


def _load(where: str, *, split: str | None = None, family: str | None = None) -> TaskSet:
    """Load a task set, reporting every bad task on stderr; the good ones still load."""
    ts = load_tasks(where)
    for e in ts.errors:
        err.print(f"[red]bad task[/red] {e}", highlight=False, soft_wrap=True)
    if not ts and not ts.errors:
        raise ConfigError(f"no tasks in {where!r} (a task is a directory with a task.toml)")
    return ts.filter(split=split, family=family)


@tasks_app.command("list")
def tasks_list(
    tasks: TasksArg = BUNDLED,
    split: Annotated[str | None, typer.Option(help="Only this split: train or eval.")] = None,
    family: Annotated[str | None, typer.Option(help="Only this family.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """List tasks with family, difficulty, split and version. Exit 1 if any task is bad."""
    ts = _load(tasks, split=split, family=family)
    rows = [
        {
            "id": t.id,
            "title": t.spec.title,
            "family": str(t.family),
            "difficulty": str(t.difficulty),
            "split": str(t.split),
            "version": t.version,
            "judge": t.spec.judge.type,
            "path": str(t.root),
        }
        for t in ts
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        table = Table(title=f"{len(rows)} tasks", title_justify="left")
        for col in ("id", "family", "difficulty", "split", "version", "title"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(
                *(r[c] for c in ("id", "family", "difficulty", "split", "version", "title"))
            )
        out.print(table)
    if ts.errors:
        raise typer.Exit(1)


def _find_task(task: str, tasks: str) -> Task:
    if Path(task).is_dir() and (Path(task) / "task.toml").exists():
        return load_task(task)
    ts = load_tasks(tasks)
    try:
        return ts.get(task)
    except KeyError:
        raise ConfigError(f"no task {task!r} in {tasks!r} (see 'rollbox tasks list')") from None


@tasks_app.command("show")
def tasks_show(
    task: Annotated[str, typer.Argument(help="A task id, or a task directory.")],
    tasks: Annotated[str, typer.Option(help="Where to look the id up.")] = BUNDLED,
) -> None:
    """Show one task as the agent sees it: the instruction and the starting files."""
    t = _find_task(task, tasks)
    out.rule(f"[bold]{t.spec.title}")
    out.print(
        f"[dim]{t.id} · {t.family} · {t.difficulty} · {t.split} · version {t.version}[/dim]",
        highlight=False,
    )
    out.print(t.instruction.strip(), highlight=False, markup=False)
    out.rule("workspace")
    files = read_tree(t.workspace_dir)
    for rel, data in files.items():
        out.print(f"  {rel}  [dim]({len(data)} bytes)[/dim]", highlight=False)
    if not files:
        out.print("  (empty)")
    if t.visible_tests_dir is not None:
        out.rule("visible tests (the agent may run these)")
        for rel in read_tree(t.visible_tests_dir):
            out.print(f"  {rel}", highlight=False)
    lim = t.spec.limits
    out.rule("limits")
    out.print(f"  {lim.max_turns} turns · {lim.timeout_s:g} s per run · {lim.memory_mb} MiB")


@tasks_app.command("import")
def tasks_import(
    kind: Annotated[str, typer.Argument(help="exercism, humaneval, mbpp or swebench.")],
    src: Annotated[Path, typer.Argument(help="The collection: a JSONL file or a track dir.")],
    dest: Annotated[Path, typer.Argument(help="Where to write the task directories.")],
    split: Annotated[str, typer.Option(help="The split of every task: train or eval.")] = "train",
    family: Annotated[str | None, typer.Option(help="The family (default: the source's).")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many tasks.")] = None,
    repo: Annotated[
        Path | None, typer.Option(help="swebench: a local clone, or a directory of clones.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Convert a public collection into task directories; report what was imported and what
    was skipped, and why (see docs/importers.md)."""
    from rollbox.tasks.importers import import_tasks, parse_options, report_table

    options = parse_options(split=split, family=family, limit=limit, repo=repo)
    report = import_tasks(kind, src, dest, options)
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        out.print(report_table(report))
        out.print(report.summary(), highlight=False)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
        console=err,
        transient=False,
    )


Backend = Annotated[
    str,
    typer.Option(help="Sandbox backend: 'bwrap' (isolated) or 'local' (no isolation, dev only)."),
]


def _factory(backend: str) -> Any:
    from rollbox.sandbox import Factory, LocalConfig, backend_config

    config = backend_config(backend)
    if isinstance(config, LocalConfig):
        err.print("[yellow]warning:[/yellow] the local backend does not isolate anything")
    return Factory(config)


async def _check_all(ts: Sequence[Task], concurrency: int, backend: str) -> list[Any]:
    from rollbox.judges import check_reference

    sandboxes = _factory(backend)

    sem = asyncio.Semaphore(concurrency)
    results: list[Any] = []
    with _progress() as progress:
        bar = progress.add_task("checking tasks", total=len(ts), status="")

        async def one(t: Task) -> None:
            async with sem:
                r = await check_reference(t, sandboxes)
            results.append(r)
            bad = sum(not x.ok for x in results)
            progress.update(bar, advance=1, status=f"{bad} bad" if bad else "all good so far")

        await asyncio.gather(*(one(t) for t in ts))
    order = {t.id: i for i, t in enumerate(ts)}
    return sorted(results, key=lambda r: order[r.task_id])


@tasks_app.command("check")
def tasks_check(
    tasks: TasksArg = BUNDLED,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Tasks checked at once (0: one per core).")] = 0,
    backend: Backend = "bwrap",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Really run every task's hidden checks in sandboxes: the start must fail, the reference
    must pass. Exit 1 if any task fails the check or does not load.
    """
    ts = _load(tasks)
    if task:
        missing = sorted(set(task) - {t.id for t in ts})
        if missing:
            raise ConfigError(f"no such task(s) in {tasks!r}: {', '.join(missing)}")
        ts = TaskSet(tuple(t for t in ts if t.id in set(task)), ts.errors)
    if concurrency < 0:
        raise ConfigError("--concurrency must be 0 (one per core) or more")
    results = asyncio.run(_check_all(list(ts), concurrency or os.cpu_count() or 1, backend))
    if as_json:
        print(json.dumps([_check_row(r) for r in results], indent=2))
    else:
        table = Table(title="task check: start fails, reference passes", title_justify="left")
        for col in ("task", "ok", "start", "reference", "problems"):
            table.add_column(col, overflow="fold")
        for r in results:
            table.add_row(
                r.task_id,
                "[green]yes" if r.ok else "[red]NO",
                f"{r.start.n_passed}/{len(r.start.outcomes)} pass",
                f"{r.reference.n_passed}/{len(r.reference.outcomes)} pass",
                "; ".join(r.problems),
            )
        out.print(table)
        good = sum(r.ok for r in results)
        out.print(f"{good} of {len(results)} tasks pass the check; {len(ts.errors)} did not load")
    if ts.errors or not all(r.ok for r in results):
        raise typer.Exit(1)


def _check_row(r: Any) -> dict[str, Any]:
    return {
        "task": r.task_id,
        "ok": r.ok,
        "problems": r.problems,
        "start": r.start.to_dict(),
        "reference": r.reference.to_dict(),
    }


@tasks_app.command("validate")
def tasks_validate(
    tasks: TasksArg = BUNDLED,
    repeat: Annotated[
        int, typer.Option(help="Runs of the reference and of the start; disagreement is flaky.")
    ] = 3,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Also write the report to this file.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option(help="Tasks validated at once (0: one per core).")
    ] = 0,
    backend: Backend = "bwrap",
) -> None:
    """Validate every task in sandboxes (rollbox.tasks.validate): the start fails, the reference
    passes, repeated runs agree, runs stay in time, cheap exploits earn nothing, no git leak, no
    near-duplicate across splits. Keeps the report where runs read it; exit 1 if any task is
    rejected or does not load.
    """
    from rollbox.tasks import validate as v

    if repeat < 1 or concurrency < 0:
        raise ConfigError("--repeat must be at least 1 and --concurrency 0 (one per core) or more")
    ts = _load(tasks)
    with _progress() as progress:
        bar = progress.add_task("validating tasks", total=len(ts), status="")
        rejected = 0

        def done(r: v.TaskValidation) -> None:
            nonlocal rejected
            rejected += not r.ok
            progress.update(bar, advance=1, status=f"{rejected} rejected" if rejected else "")

        report = asyncio.run(
            v.validate_tasks(
                list(ts),
                _factory(backend),
                repeat=repeat,
                concurrency=concurrency or os.cpu_count() or 1,
                tasks_dir=tasks,
                on_task=done,
            )
        )
    out.print(v.report_table(report))
    out.print(report.summary(), highlight=False)
    if json_file is not None:
        json_file.write_text(report.to_json() + "\n")
    try:
        out.print(f"report kept in {v.save_report(report, tasks)}", highlight=False)
    except OSError as e:
        err.print(f"[yellow]the report could not be kept[/yellow] ({e})", highlight=False)
    if ts.errors or not report.ok:
        raise typer.Exit(1)


RegistryOpt = Annotated[
    Path | None, typer.Option(help="The task registry (default: $ROLLBOX_HOME/registry).")
]


@tasks_app.command("dedup")
def tasks_dedup(
    tasks: TasksArg = BUNDLED,
    against: Annotated[
        Path | None,
        typer.Option(help="A corpus: text files in a directory, or JSONL ('text' or all strings)."),
    ] = None,
    threshold: Annotated[float, typer.Option(help="Least similarity reported (Jaccard).")] = 0.8,
    cross_split: Annotated[bool, typer.Option(help="Only train/eval pairs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Near-duplicate tasks, or with --against the tasks found in a corpus (see
    rollbox.tasks.dedup). Exit 0 when none is found, 1 when some are."""
    from rollbox.tasks.dedup import find_contamination, find_near_duplicates, load_corpus

    if against is not None and cross_split:
        raise ConfigError("--cross-split compares tasks with tasks; it does not go with --against")
    ts = _load(tasks)
    if against is not None:
        pairs = find_contamination(ts, load_corpus(against), threshold=threshold)
    else:
        pairs = find_near_duplicates(ts, threshold=threshold, across_splits_only=cross_split)
    if as_json:
        print(json.dumps([p.to_dict() for p in pairs], indent=2))
    else:
        table = Table(
            title=f"{len(pairs)} pairs at similarity >= {threshold:g}", title_justify="left"
        )
        for col in ("similarity", "a", "a split", "b", "b split", "matched on"):
            table.add_column(col, overflow="fold")
        for p in pairs:
            table.add_row(
                f"{p.similarity:.3f}", p.a, p.a_split or "-", p.b, p.b_split or "-", p.what
            )
        out.print(table)
    if pairs:
        raise typer.Exit(1)


@tasks_app.command("register")
def tasks_register(
    tasks: TasksArg = BUNDLED,
    registry: RegistryOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Keep the current version of every task in the registry; print the task set's version."""
    from rollbox.tasks.registry import TaskRegistry

    ts = _load(tasks)
    reg = TaskRegistry(registry)
    tsv = reg.register(ts, source=tasks if tasks == BUNDLED else str(Path(tasks).resolve()))
    if as_json:
        print(tsv.model_dump_json(indent=2))
    else:
        out.print(f"task set {tsv.hash}: {len(tsv.tasks)} tasks, in {reg.root}", highlight=False)
    if ts.errors:
        raise typer.Exit(1)


@tasks_app.command("diff")
def tasks_diff(
    a: Annotated[str, typer.Argument(help="Task dir or 'bundled', run dir, or a version hash.")],
    b: Annotated[str, typer.Argument(help="The same, to compare with A.")],
    registry: RegistryOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """What changed from A to B: tasks added, removed, changed (files, task.toml fields).
    Exit 0 when they are the same, 1 when they differ."""
    from rollbox.tasks.registry import TaskRegistry, diff, state_of

    reg = TaskRegistry(registry)
    d = diff(state_of(a, reg), state_of(b, reg))
    if as_json:
        print(json.dumps(d.to_dict(), indent=2))
    else:
        for line in d.lines():
            out.print(line, markup=False, highlight=False)
    if not d.identical:
        raise typer.Exit(1)


@tasks_app.command("difficulty")
def tasks_difficulty(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (rollbox run --out).")],
    k: Annotated[
        int | None, typer.Option(help="pass@k's k (default: the fewest samples of any task).")
    ] = None,
    save: Annotated[bool, typer.Option(help="Record the counts in difficulty.json.")] = False,
    store: Annotated[
        Path | None, typer.Option(help="Record them in this file instead (implies --save).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Measured difficulty per task version: decided episodes (n), passes (c), pass@1, pass@k
    and bucket (see rollbox.tasks.difficulty)."""
    from rollbox.tasks.difficulty import DifficultyStore, difficulty_rows, merge_counts, run_counts

    counted = dict(run_counts(r) for r in runs)
    k, rows = difficulty_rows(merge_counts(counted.values()).values(), k)
    if save or store is not None:
        ds = DifficultyStore(store)
        for run_id, counts in counted.items():
            ds.add_counts(run_id, counts)
        err.print(f"saved in {ds.save()}", highlight=False)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(rows)} task versions", title_justify="left")
    for col in ("task", "version", "n", "c", "pass@1", f"pass@{k}", "bucket"):
        table.add_column(col, justify="right" if col in ("n", "c") or "@" in col else "left")
    for r in rows:
        pk = r[f"pass@{k}"]
        table.add_row(
            r["task"], r["version"], str(r["n"]), str(r["c"]), f"{r['pass@1']:.2f}",
            "-" if pk is None else f"{pk:.2f}", r["bucket"],
        )  # fmt: skip
    out.print(table)


@app.command()
def bench(
    name: Annotated[str, typer.Argument(help="A benchmark name, or 'all'.")] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of figures.")] = False,
    quick: Annotated[bool, typer.Option(help="Fewer repeats (noisier).")] = False,
) -> None:
    """Run benchmarks; each figure is printed beside a baseline measured in the same run."""
    from rollbox.bench import available, run_benchmark

    names = available() if name == "all" else [name]
    figures = []
    for n in names:
        if not as_json:
            err.print(f"[dim]running benchmark {n}…[/dim]")
        figures.extend(run_benchmark(n, quick=quick))
    if as_json:
        print(json.dumps([f.to_dict() for f in figures], indent=2))
        return
    table = Table(title="benchmarks (ratio = value / baseline, same run)", title_justify="left")
    for col in ("bench", "figure", "value", "baseline", "ratio", "target", "met"):
        table.add_column(col, overflow="fold")
    for f in figures:
        table.add_row(
            f.bench,
            f.name,
            f"{f.value:.3g} {f.unit}",
            f"{f.baseline_value:.3g} {f.unit} ({f.baseline})" if f.baseline_value else "-",
            f"{f.ratio:.2f}x" if f.ratio is not None else "-",
            f.target or "-",
            "-" if f.met is None else ("[green]yes" if f.met else "[red]no"),
        )
    out.print(table)


@app.command()
def judge(
    task_dir: Annotated[Path, typer.Argument(help="The task directory.")],
    workspace_dir: Annotated[Path, typer.Argument(help="The finished workspace to judge.")],
    repeat: Annotated[
        int, typer.Option(help="Judge this many times; disagreement is a 'flaky' verdict.")
    ] = 1,
    backend: Backend = "bwrap",
    as_json: Annotated[bool, typer.Option("--json", help="Print the judgement as JSON.")] = False,
) -> None:
    """What would rollbox pay for this workspace? Prints the verdict and the reward breakdown.

    Exit status: 0 when judged, 3 when flaky, 4 when the judge could not decide.
    """
    from rollbox.judges import judge_workspace

    if repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if not workspace_dir.is_dir():
        raise ConfigError(f"workspace {str(workspace_dir)!r} is not a directory")
    task = load_task(task_dir)
    result = asyncio.run(judge_workspace(task, workspace_dir, _factory(backend), repeat=repeat))
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_judgement(result)
    status = str(result.verdict.status)
    raise typer.Exit({"judged": 0, "flaky": 3}.get(status, 4))


def _print_judgement(result: Any) -> None:
    v, r = result.verdict, result.reward
    table = Table(title=f"{result.task_id} · {v.judge} judge · {v.status}", title_justify="left")
    for col in ("outcome", "status", "detail"):
        table.add_column(col, overflow="fold")
    for o in v.outcomes:
        colour = "green" if o.passed else "red"
        detail = o.detail.strip().splitlines()[-1][:120] if o.detail.strip() else ""
        table.add_row(o.name, f"[{colour}]{o.status}", detail)
    out.print(table)
    if v.meta.get("isolation") == "in-process":
        out.print(
            "[yellow]the code under test ran in the tests' own process[/yellow] "
            "(isolation = in-process: weaker against reward hacking)"
        )
    for f in result.findings:
        out.print(f"[red]tampering[/red] {f.path}: {f.kind} ({f.detail})", highlight=False)
    if result.disagreements:
        out.print(f"[yellow]runs disagree on:[/yellow] {', '.join(result.disagreements)}")
    if r is None:
        why = (
            "the runs disagree (flaky)"
            if str(v.status) == "flaky"
            else "the judge could not decide"
        )
        out.print(f"reward: none, {why}")
        if v.diagnostics:
            out.print(v.diagnostics[-1500:], markup=False, highlight=False)
        return
    parts = [f"correctness {r.correctness:g}"]
    parts += [f"{k} +{val:g}" for k, val in r.auxiliary.items()]
    if r.penalty:
        parts.append(f"tampering -{r.penalty:g}")
    out.print(f"[bold]reward {r.total:g}[/bold] = " + " ".join(parts), highlight=False)
    sig = ", ".join(f"{k} {val:.3g}" for k, val in r.signals.items())
    out.print(f"[dim]pass fraction {r.pass_fraction:.2f}; signals: {sig}[/dim]", highlight=False)


@sandbox_app.command(
    "exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def sandbox_exec(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None, typer.Option(help="Start from a copy of this directory.")
    ] = None,
    limit: Annotated[
        list[str] | None,
        typer.Option(help="KEY=VALUE, e.g. wall_s=5 memory_mb=256 (repeatable)."),
    ] = None,
    backend: Backend = "bwrap",
    allow_unenforced: Annotated[
        bool, typer.Option(help="Start even if a limit cannot be enforced here.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ExecResult as JSON.")] = False,
) -> None:
    """Run one command in a fresh sandbox: rollbox sandbox exec [OPTIONS] -- CMD [ARGS...]

    Without --json, the command's output passes through and rollbox exits with its status.
    """
    import dataclasses

    from rollbox.sandbox import BwrapConfig, LocalConfig, make_sandbox
    from rollbox.sandbox.config import limits_from_pairs

    argv = list(ctx.args)
    if not argv:
        raise ConfigError("no command given: rollbox sandbox exec [OPTIONS] -- CMD [ARGS...]")
    if workspace is not None and not workspace.is_dir():
        raise ConfigError(f"--workspace {str(workspace)!r} is not a directory")
    limits = limits_from_pairs(limit or [])
    config: BwrapConfig | LocalConfig
    if backend == "local":
        err.print("[yellow]warning:[/yellow] the local backend does not isolate anything")
        config = LocalConfig(limits=limits)
    elif backend == "bwrap":
        config = BwrapConfig(limits=limits, allow_unenforced=allow_unenforced)
    else:
        raise ConfigError(f"unknown sandbox backend {backend!r}: use 'bwrap' or 'local'")

    async def go() -> Any:
        sb = await make_sandbox(config, workspace)
        try:
            return await sb.exec(argv)
        finally:
            await sb.close()

    res = asyncio.run(go())
    if as_json:
        print(json.dumps(dataclasses.asdict(res), indent=2))
        return
    sys.stdout.write(res.stdout)
    sys.stderr.write(res.stderr)
    flags = [n for n in ("timed_out", "oom_killed", "output_truncated") if getattr(res, n)]
    status = f"exit {res.exit_code}" if res.exit_code is not None else f"signal {res.signal}"
    peak = f", peak {res.peak_memory_kb} KiB" if res.peak_memory_kb is not None else ""
    err.print(
        f"[dim]{status}, {res.wall_s * 1000:.1f} ms wall, {res.cpu_s * 1000:.1f} ms CPU{peak}"
        + (f", {', '.join(flags)}" if flags else "")
        + "[/dim]",
        highlight=False,
    )
    code = res.exit_code if res.exit_code is not None else 128 + (res.signal or 0)
    raise typer.Exit(code)


@app.command()
def doctor(
    sweep: Annotated[
        bool, typer.Option(help="Also remove what crashed rollbox processes left behind.")
    ] = False,
) -> None:
    """Show which isolation and limit mechanisms are active on this host."""
    from rollbox.sandbox import doctor as doc
    from rollbox.sandbox import state

    if sweep:
        report = state.sweep()
        out.print(
            f"swept: {report.owners} dead owner(s), {report.mounts} mount(s), "
            f"{report.cgroups} cgroup(s)"
        )
    checks = doc.host_checks()
    if all(c.name != "bubblewrap" or c.ok for c in checks):
        checks.append(asyncio.run(doc.smoke_test()))
    table = Table(title="rollbox doctor", title_justify="left")
    for col in ("mechanism", "active", "how"):
        table.add_column(col, overflow="fold")
    for c in checks:
        table.add_row(c.name, "[green]yes" if c.ok else "[red]no", c.detail)
    out.print(table)
    missing = [c for c in checks if not c.ok]
    if missing:
        out.print(
            f"{len(missing)} mechanism(s) not active (above). A sandbox refuses to start when a "
            "limit it is given is not enforced, unless that is allowed (allow_unenforced)."
        )


def _run_job(cfg: Any, out_dir: Path | None) -> dict[str, Any]:
    """`rollbox run`'s work: episodes with a progress bar, then the summary table."""
    import time as _time

    from rollbox.runner import run as run_job

    if out_dir is None:
        out_dir = Path("runs") / _time.strftime("%Y%m%d-%H%M%S")
    err.print(f"run directory: {out_dir}  (run the same command with --out {out_dir} to resume)")
    passed = decided = tokens = ran = 0
    t0 = _time.perf_counter()
    with _progress() as progress:
        bar = progress.add_task("episodes", total=None, status="loading the policy")

        def started(done: int, total: int) -> None:
            nonlocal t0
            t0 = _time.perf_counter()
            progress.update(
                bar,
                total=total,
                completed=done,
                status=(f"resuming: {done} done before" if done else "running"),
            )

        def finished(traj: Any, done: int, total: int) -> None:
            nonlocal passed, decided, tokens, ran
            ran += 1
            decided += traj.reward is not None
            passed += traj.passed
            tokens += traj.completion_tokens
            dt = max(_time.perf_counter() - t0, 1e-9)
            rate = f"{passed}/{decided} passed" if decided else "none decided yet"
            progress.update(
                bar,
                completed=done,
                status=(f"{rate} · {60 * ran / dt:.1f} episodes/min · {tokens / dt:.0f} tokens/s"),
            )

        summary = asyncio.run(
            run_job(
                cfg, out_dir, sandboxes=_factory(cfg.backend), on_episode=finished, on_start=started
            )
        )
    _print_summary(summary, out_dir)
    return summary


def _print_summary(s: dict[str, Any], out_dir: Path) -> None:
    table = Table(title=f"run {s.get('run_id', '')} · {s['policy']['name']}", title_justify="left")
    for col in ("group", "episodes", "decided", "passed", "pass rate", "mean reward", "turns"):
        table.add_column(col, justify="right" if col != "group" else "left")

    def row(name: str, b: dict[str, Any]) -> None:
        table.add_row(
            name,
            str(b["n_episodes"]),
            str(b["n_decided"]),
            str(b["passed"]),
            f"{b['pass_rate']:.0%}",
            f"{b['mean_reward']:.2f}",
            f"{b['mean_turns']:.1f}",
        )

    for f, b in s["by_family"].items():
        row(f, b)
    table.add_section()
    for d, b in s["by_difficulty"].items():
        row(d, b)
    table.add_section()
    row("all", s)
    out.print(table)
    pak = ", ".join(f"pass@{k} {v:.0%}" for k, v in s["pass_at_k"].items())
    out.print(
        f"{pak} · infra failures {s['infra_failures']} · policy failures {s['policy_failures']}"
        f" · undecided {s['undecided']} · {s['tokens_generated']} tokens generated"
        f" · {s['sandbox_seconds']:.0f} sandbox-seconds · {s.get('wall_s', 0):.0f} s"
    )
    if s["solved"]:
        out.print(
            f"solved: {', '.join(s['solved'][:12])}" + (" …" if len(s["solved"]) > 12 else "")
        )
    out.print(f"trajectories and summary.json in {out_dir}")


@app.command("run")
def run_cmd(
    tasks: Annotated[str, typer.Option(help="A directory of tasks, or 'bundled'.")] = BUNDLED,
    split: Annotated[str | None, typer.Option(help="Only this split: train or eval.")] = None,
    family: Annotated[str | None, typer.Option(help="Only this family.")] = None,
    difficulty: Annotated[str | None, typer.Option(help="Only this difficulty.")] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")
    ] = None,
    policy: Annotated[
        str, typer.Option(help="smollm2, hf:PATH, openai:URL, scripted:FILE or oracle.")
    ] = "smollm2",
    limit: Annotated[int | None, typer.Option(help="At most this many tasks.")] = None,
    samples_per_task: Annotated[int, typer.Option(help="Episodes per task.")] = 1,
    concurrency: Annotated[int, typer.Option(help="Episodes at once.")] = 8,
    seed: Annotated[int, typer.Option(help="The run's seed (episodes derive theirs).")] = 0,
    max_turns: Annotated[
        int | None, typer.Option(help="Turns per episode (default: each task's own).")
    ] = None,
    max_tokens_per_turn: Annotated[int, typer.Option(help="Tokens per reply.")] = 384,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Run directory (default runs/<time>); an existing one resumes."),
    ] = None,
    backend: Backend = "bwrap",
    allow_invalid: Annotated[
        bool, typer.Option(help="Also run tasks that failed `rollbox tasks validate`.")
    ] = False,
) -> None:
    """Run a policy on tasks: episodes in sandboxes, judged, recorded in a run directory.

    Prints a progress bar, then a summary by family and difficulty; writes trajectories.jsonl,
    an SQLite index and summary.json. Running it again with the same --out resumes.
    """
    _run_job(
        _run_config(
            tasks=tasks,
            split=split,
            family=family,
            difficulty=difficulty,
            task_ids=tuple(task or ()),
            policy=policy,
            limit=limit,
            samples_per_task=samples_per_task,
            concurrency=concurrency,
            seed=seed,
            backend=backend,
            allow_invalid=allow_invalid,
            max_turns=max_turns,
            max_tokens_per_turn=max_tokens_per_turn,
            temperature=temperature,
        ),
        out_dir,
    )


def _run_config(
    *, max_turns: int | None, max_tokens_per_turn: int, temperature: float, **run: Any
) -> Any:
    """A RunConfig from the command's options, each bad one named in a one-line error."""
    from pydantic import ValidationError

    from rollbox.agent.episode import EpisodeConfig
    from rollbox.runner import RunConfig

    for name, key in (
        ("--concurrency", "concurrency"),
        ("--samples-per-task", "samples_per_task"),
        ("--limit", "limit"),
    ):
        if run.get(key) is not None and run[key] < 1:
            raise ConfigError(f"{name} must be at least 1 (got {run[key]})")
    if max_tokens_per_turn < 1:
        raise ConfigError(f"--max-tokens-per-turn must be at least 1 (got {max_tokens_per_turn})")
    if max_turns is not None and max_turns < 1:
        raise ConfigError(f"--max-turns must be at least 1 (got {max_turns})")
    if run.get("split") not in (None, "train", "eval"):
        raise ConfigError(f"--split must be train or eval (got {run['split']!r})")
    try:
        episode = EpisodeConfig(
            max_turns=max_turns, max_tokens_per_turn=max_tokens_per_turn, temperature=temperature
        )
        return RunConfig(**run, episode=episode)
    except ValidationError as e:
        raise ConfigError(str(e).splitlines()[0] + ": " + str(e).splitlines()[-1]) from None


@app.command()
def demo(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory.")] = None,
) -> None:
    """The main job with the bundled model (SmolLM2-135M-Instruct) on the bundled tasks it can
    sometimes solve: the trivial feature tasks, 4 samples each, up to 3 turns per episode; a few
    minutes on 2 cores. `rollbox run` runs any selection with any policy."""
    err.print(
        "[bold]rollbox demo[/bold]: the bundled 135M model acts on the bundled trivial feature "
        "tasks through tools in sandboxes; every finished workspace is judged by the hidden "
        "tests. (`rollbox run --help` for the rest of the bundled set and other policies.)"
    )
    cfg = _run_config(
        tasks=BUNDLED,
        family="feature",
        difficulty="trivial",
        policy="smollm2",
        samples_per_task=4,
        concurrency=8,
        max_turns=3,
        max_tokens_per_turn=160,
        temperature=0.7,
    )
    import time as _time

    summary = _run_job(cfg, out_dir or Path("runs") / _time.strftime("demo-%Y%m%d-%H%M%S"))
    if not summary["solved"]:
        err.print("[yellow]the model solved no task this time[/yellow]")


@app.command("serve")
def serve_cmd(
    model: Annotated[
        str, typer.Option(help="'smollm2' (the bundled model) or a model directory/file.")
    ] = "smollm2",
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    max_batch: Annotated[int, typer.Option(help="Requests generated together.")] = 16,
) -> None:
    """Serve a local model over an OpenAI-compatible API until Ctrl-C or SIGTERM.

    Prints the URL to use with --policy openai:URL once the model is loaded.
    """
    from rollbox.serve import serve_model

    serve_model(model, host=host, port=port, max_batch=max_batch)


@app.command()
def version() -> None:
    """Print rollbox's version."""
    print(__version__)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: the one place where errors are translated for the user."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="rollbox")
    except RollboxError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
