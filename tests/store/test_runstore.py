"""The run directory: round trip, resume, config checks, crash repair, and a real SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rollbox.agent.types import Action, Message, Observation, Step, Trajectory
from rollbox.errors import ConfigError, RollboxError
from rollbox.store.runstore import (
    INDEX_FILE,
    JSONL_FILE,
    RUN_FILE,
    DuplicateEpisodeError,
    RunStore,
    StoreError,
)

CONFIG: dict[str, Any] = {
    "tasks": "tasks/bundled",
    "task_versions": {"t0": "abc", "t1": "def"},
    "policy": {"name": "scripted", "version": "1"},
    "seed": 7,
    "samples": 2,
    "budgets": {"max_turns": 10},
}


def make_traj(i: int, run_id: str, *, content: str = "fix it") -> Trajectory:
    step = Step(
        index=0,
        action=Action(text="ls", token_ids=(1, 2), logprobs=(-0.5, -0.25)),
        observation=Observation(text="calc.py", exit_code=0),
        generate_s=0.1,
        tool_s=0.2,
        overhead_s=0.01,
    )
    return Trajectory(
        episode_id=f"t{i:04d}#{i % 2}",
        run_id=run_id,
        task_id=f"t{i:04d}",
        task_version="v1",
        family="bugfix",
        difficulty="easy",
        split="train",
        sample=i % 2,
        seed=i,
        policy={"name": "scripted", "version": "1"},
        messages=(Message(role="user", content=content),),
        steps=(step,) * (i % 3),
        terminated=True,
        truncated=False,
        stop_reason="submitted",
        reward=None if i % 5 == 4 else float(i % 2),
        passed=i % 2 == 1,
        prompt_tokens=10 * i,
        completion_tokens=i,
        wall_s=1.5,
    )


def jsonl_ids(run: Path) -> list[str]:
    lines = (run / JSONL_FILE).read_bytes().splitlines()
    return [json.loads(line)["episode_id"] for line in lines]


def test_round_trip(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        trajs = [make_traj(i, store.run_id) for i in range(6)]
        for t in trajs:
            store.add(t)
        run_id = store.run_id
    info = json.loads((run / RUN_FILE).read_text())
    assert info["config"] == CONFIG and info["run_id"] == run_id
    assert info["rollbox_version"] and info["created"] and info["run_schema"] == 1
    with RunStore.open(run) as store:
        assert store.repairs == []
        assert list(store.trajectories()) == trajs
        assert store.count() == len(store) == 6
        assert store.done_ids() == {t.episode_id for t in trajs}
        assert store.get(trajs[3].episode_id) == trajs[3]
        with pytest.raises(KeyError):
            store.get("nope#0")
        rows = store.rows()
        assert [r.episode_id for r in rows] == [t.episode_id for t in trajs]
        assert [r.line_no for r in rows] == [1, 2, 3, 4, 5, 6]
        r4 = rows[4]
        assert (r4.reward, r4.passed, r4.turns, r4.tokens, r4.sample) == (None, False, 1, 44, 0)
        assert (rows[1].reward, rows[1].passed, rows[1].turns) == (1.0, True, 1)
        assert rows[2].turns == 2 and rows[2].stop_reason == "submitted"
        assert store.config == CONFIG
        store.write_summary({"passed": 3, "episodes": 6})
    assert json.loads((run / "summary.json").read_text()) == {"passed": 3, "episodes": 6}
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".")) == []
    with sqlite3.connect(run / INDEX_FILE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_resume_skips_done_and_refuses_duplicates(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.open_or_create(run, CONFIG) as store:
        run_id = store.run_id
        for i in range(3):
            store.add(make_traj(i, run_id))
    # the same config, given with other types (tuple, Path) that store alike: resumes
    same = {**CONFIG, "tasks": Path("tasks/bundled")}
    with RunStore.open_or_create(run, same) as store:
        assert store.run_id == run_id
        done = store.done_ids()
        assert done == {make_traj(i, run_id).episode_id for i in range(3)}
        todo = [
            make_traj(i, run_id) for i in range(5) if make_traj(i, run_id).episode_id not in done
        ]
        assert [t.episode_id for t in todo] == ["t0003#1", "t0004#0"]
        for t in todo:
            store.add(t)
        with pytest.raises(DuplicateEpisodeError, match="t0001#1"):
            store.add(make_traj(1, run_id, content="another attempt"))
        assert "t0001#1" in store
    assert jsonl_ids(run) == [make_traj(i, run_id).episode_id for i in range(5)]


def test_config_mismatch_names_each_difference(tmp_path: Path) -> None:
    run = tmp_path / "run"
    RunStore.create(run, CONFIG).close()
    other = {**CONFIG, "seed": 8, "policy": {"name": "scripted", "version": "2"}, "extra": 1}
    del other["budgets"]
    with pytest.raises(ConfigError) as err:
        RunStore.open_or_create(run, other)
    msg = str(err.value)
    for part in ("seed: the run has 7, the new config has 8", "policy.version", "budgets", "extra"):
        assert part in msg
    assert "samples" not in msg and "--out" in msg
    # only the identity keys count when given
    RunStore.open_or_create(run, other, identity_keys=["tasks", "samples"]).close()
    with pytest.raises(ConfigError, match="seed"):
        RunStore.open_or_create(run, other, identity_keys=["tasks", "seed"])
    with pytest.raises(ConfigError, match="already holds run"):
        RunStore.open_or_create(run, CONFIG, resume=False)
    with pytest.raises(ConfigError, match="resume it"):
        RunStore.create(run, CONFIG)
    with pytest.raises(ConfigError, match="different config"):
        RunStore.create(run, other)
    with pytest.raises(ConfigError, match="JSON"):
        RunStore.create(tmp_path / "r2", {"x": object()})


def test_torn_last_line_is_truncated(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        run_id = store.run_id
        for i in range(3):
            store.add(make_traj(i, run_id))
    size = (run / JSONL_FILE).stat().st_size
    torn = make_traj(3, run_id).model_dump_json().encode()[:57]
    with open(run / JSONL_FILE, "ab") as f:
        f.write(torn)
    with RunStore.open(run) as store:
        assert (run / JSONL_FILE).stat().st_size == size
        assert store.count() == 3 and "t0003#1" not in store
        assert any("torn" in r for r in store.repairs)
        store.add(make_traj(3, run_id))
    with RunStore.open(run) as store:
        assert store.repairs == []
        assert [t.episode_id for t in store.trajectories()] == jsonl_ids(run)
        assert store.count() == 4


def test_index_rebuilt_when_deleted_or_corrupt(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        for i in range(4):
            store.add(make_traj(i, store.run_id))
        before = store.rows()
    (run / INDEX_FILE).unlink()
    with RunStore.open(run) as store:
        assert store.rows() == before
        assert store.repairs == ["indexed 4 episodes missing from index.sqlite"]
    (run / INDEX_FILE).write_bytes(b"this is not a database" * 100)
    with RunStore.open(run) as store:
        assert store.rows() == before
        assert any("unreadable" in r for r in store.repairs)


def test_index_behind_ahead_or_with_holes_is_repaired(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        run_id = store.run_id
        for i in range(2):
            store.add(make_traj(i, run_id))
    old_index = (run / INDEX_FILE).read_bytes()
    with RunStore.open(run) as store:
        for i in range(2, 5):
            store.add(make_traj(i, run_id))
        full = store.rows()
    # behind: an index from when the run held 2 episodes
    (run / INDEX_FILE).write_bytes(old_index)
    with RunStore.open(run) as store:
        assert store.rows() == full
        assert store.repairs == ["indexed 3 episodes missing from index.sqlite"]
    # a hole in the middle: rebuilt whole
    with sqlite3.connect(run / INDEX_FILE) as db:
        db.execute("DELETE FROM episodes WHERE episode_id = 't0002#0'")
    with RunStore.open(run) as store:
        assert store.rows() == full
        assert any("rebuilt" in r for r in store.repairs)
    # ahead: the JSONL lost its last 2 lines (e.g. restored from a copy); their rows go
    lines = (run / JSONL_FILE).read_bytes().splitlines(keepends=True)
    (run / JSONL_FILE).write_bytes(b"".join(lines[:3]))
    with RunStore.open(run) as store:
        assert store.rows() == full[:3]
        assert any("dropped 2 index rows" in r for r in store.repairs)
        store.add(make_traj(3, run_id))
        assert store.rows()[-1].line_no == 4


def test_bad_line_in_the_middle_is_an_error_not_a_loss(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        for i in range(3):
            store.add(make_traj(i, store.run_id))
    lines = (run / JSONL_FILE).read_bytes().splitlines(keepends=True)
    lines[1] = lines[1][:40] + b"\n"
    (run / JSONL_FILE).write_bytes(b"".join(lines))
    (run / INDEX_FILE).unlink()
    size = (run / JSONL_FILE).stat().st_size
    with pytest.raises(StoreError, match=rf"{JSONL_FILE}:2: not valid JSON"):
        RunStore.open(run)
    assert (run / JSONL_FILE).stat().st_size == size  # nothing dropped
    # a duplicated episode (two writers) is named too
    good = (run / JSONL_FILE).read_bytes().splitlines(keepends=True)
    (run / JSONL_FILE).write_bytes(good[0] + good[2] + good[0])
    with pytest.raises(StoreError, match=rf"{JSONL_FILE}:3: episode t0000#0 appears a second"):
        RunStore.open(run)


def test_newer_schemas_are_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        store.add(make_traj(0, store.run_id))
        with pytest.raises(StoreError, match="schema_version 99"):
            store.add(make_traj(1, store.run_id).model_copy(update={"schema_version": 99}))
    line = json.loads((run / JSONL_FILE).read_text())
    with open(run / JSONL_FILE, "a") as f:
        f.write(json.dumps({**line, "episode_id": "x#0", "schema_version": 2}) + "\n")
    with pytest.raises(StoreError, match=r":2: trajectory schema_version 2 is newer"):
        RunStore.open(run)
    info = json.loads((run / RUN_FILE).read_text())
    (run / RUN_FILE).write_text(json.dumps({**info, "run_schema": 2}))
    with pytest.raises(StoreError, match="run_schema 2 is newer"):
        RunStore.open(run)


def test_bad_places_and_files(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        RunStore.create(a_file, CONFIG)
    with pytest.raises(ConfigError, match="is a file"):
        RunStore.open(a_file)
    with pytest.raises(ConfigError, match="is a file"):
        RunStore.open_or_create(a_file, CONFIG)
    with pytest.raises(ConfigError, match="no rollbox run here"):
        RunStore.open(tmp_path / "missing")
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / JSONL_FILE).write_text("")
    with pytest.raises(ConfigError, match=r"no run\.json"):
        RunStore.create(stray, CONFIG)
    run = tmp_path / "run"
    RunStore.create(run, CONFIG).close()
    (run / RUN_FILE).write_text('{"run_schema": 1, "run_id": ')
    with pytest.raises(StoreError, match=r"run\.json: corrupt"):
        RunStore.open(run)
    with pytest.raises(StoreError, match=r"run\.json: corrupt"):
        RunStore.open_or_create(run, CONFIG)
    (run / RUN_FILE).write_text("[]")
    with pytest.raises(RollboxError, match="not a JSON object"):
        RunStore.open(run)


def test_one_holder_and_one_run_id(tmp_path: Path) -> None:
    run = tmp_path / "run"
    store = RunStore.create(run, CONFIG)
    with pytest.raises(StoreError, match="open in another process"):
        RunStore.open(run)
    with pytest.raises(StoreError, match="belongs to run other"):
        store.add(make_traj(0, "other"))
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.add(make_traj(0, store.run_id))
    RunStore.open(run).close()  # the lock went with the close


def test_threads_add_concurrently(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.create(run, CONFIG) as store:
        errors: list[BaseException] = []

        def work(k: int) -> None:
            try:
                for i in range(k, 160, 8):
                    store.add(make_traj(i, store.run_id))
                    store.done_ids()
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert store.count() == 160
    ids = jsonl_ids(run)
    assert len(ids) == len(set(ids)) == 160
    with RunStore.open(run) as store:
        assert store.repairs == []  # the index matched the file, line for line
        assert [r.episode_id for r in store.rows()] == ids


WRITER = textwrap.dedent(
    """\
    import sys, time
    from rollbox.agent.types import Message, Trajectory
    from rollbox.store.runstore import RunStore

    out, total = sys.argv[1], int(sys.argv[2])
    store = RunStore.open_or_create(out, {"seed": 7, "total": total})
    print("open", len(store.done_ids()), flush=True)
    big = "x" * 20000
    for i in range(total):
        eid = f"t{i:04d}#0"
        if eid in store.done_ids():
            continue
        store.add(Trajectory(
            episode_id=eid, run_id=store.run_id, task_id=f"t{i:04d}", task_version="v",
            family="bugfix", difficulty="easy", split="train", sample=0, seed=i,
            policy={"name": "p", "version": "1"},
            messages=(Message(role="user", content=big),), steps=(),
            terminated=True, truncated=False, stop_reason="submitted", reward=1.0,
        ))
        print(eid, flush=True)
        time.sleep(0.01)
    print("done", flush=True)
    """
)


def _run_writer(script: Path, run: Path, total: int, kill_after: int | None) -> list[str]:
    """Run the writer; SIGKILL it once it reported `kill_after` episodes. Returns what it said."""
    proc = subprocess.Popen(
        [sys.executable, str(script), str(run), str(total)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    deadline = time.monotonic() + 10
    try:
        assert proc.stdout is not None
        while kill_after is not None and len(said) < kill_after + 1:
            line = proc.stdout.readline()
            assert line, f"the writer ended early: {proc.stderr.read() if proc.stderr else ''}"
            said.append(line.strip())
            assert time.monotonic() < deadline
        if kill_after is not None:
            time.sleep(random.uniform(0, 0.012))  # land anywhere in the add/sleep cycle
            os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said += out.splitlines()
    if kill_after is None:
        assert proc.returncode == 0, err
    else:
        assert proc.returncode == -signal.SIGKILL
    return said


def test_sigkill_midway_loses_nothing_committed_and_duplicates_nothing(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    run, total = tmp_path / "run", 120
    everything = {f"t{i:04d}#0" for i in range(total)}
    committed: list[str] = []
    for kill_after in (15, 30):
        said = _run_writer(script, run, total, kill_after)
        assert said[0] == f"open {len(committed)}"
        new = said[1:]
        assert "done" not in new and not set(new) & set(committed)
        committed += new
        with RunStore.open(run) as store:
            done = store.done_ids()
            ids = jsonl_ids(run)
            assert set(committed) <= done  # every reported episode survived
            # at most the one episode in flight got in without being reported
            assert len(done) - len(committed) in (0, 1)
            assert len(ids) == len(set(ids)) == store.count() == len(done)
            assert {t.episode_id for t in store.trajectories()} == done
        committed = sorted(done)
    said = _run_writer(script, run, total, None)
    assert said[0] == f"open {len(committed)}" and said[-1] == "done"
    assert set(said[1:-1]) == everything - set(committed)
    ids = jsonl_ids(run)
    assert len(ids) == total and set(ids) == everything
    with RunStore.open(run) as store:
        assert store.done_ids() == everything and store.count() == total
