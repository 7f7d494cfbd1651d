"""The task registry (versions kept by content) and diffs between task sets and runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rollbox.errors import ConfigError, StoreError, TaskError
from rollbox.store.runstore import RunStore
from rollbox.tasks import load_task, load_tasks
from rollbox.tasks.registry import (
    TaskRegistry,
    TaskSetVersion,
    TaskVersion,
    default_registry_root,
    diff,
    state_of,
    task_set_hash,
)

IDS = ("feature-clamp-value", "bugfix-pager-page-count", "data-sensor-gaps")


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """Three bundled tasks, copied so that they can be edited."""
    base = tmp_path / "set"
    bundled = load_tasks("bundled")
    for task_id in IDS:
        shutil.copytree(bundled.get(task_id).root, base / task_id)
    return base


@pytest.fixture
def registry(tmp_path: Path) -> TaskRegistry:
    return TaskRegistry(tmp_path / "registry")


def files_under(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*") if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


# ---- the registry ----------------------------------------------------------------------------


def test_the_default_root_follows_rollbox_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLBOX_HOME", "/somewhere/rb")
    assert default_registry_root() == Path("/somewhere/rb/registry")
    monkeypatch.delenv("ROLLBOX_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert TaskRegistry().root == Path("/xdg/rollbox/registry")


def test_register_keeps_every_file_by_content(task_dir: Path, registry: TaskRegistry) -> None:
    ts = load_tasks(task_dir)
    tsv = registry.register(ts, source=str(task_dir))
    assert tsv.tasks == {t.id: t.version for t in ts}
    assert tsv.hash == task_set_hash(tsv.tasks) and len(tsv.hash) == 16
    assert registry.get_set(tsv.hash) == tsv
    for t in ts:
        m = registry.get(t.version)
        assert (m.id, m.version) == (t.id, t.version)
        assert m.spec["id"] == t.id and m.spec["judge"]["type"] == t.spec.judge.type
        on_disk = sorted(str(p.relative_to(t.root)) for p in t.root.rglob("*") if p.is_file())
        assert sorted(m.files) == on_disk
        assert registry.read_blob(m.files["task.toml"]) == (t.root / "task.toml").read_bytes()
    with pytest.raises(KeyError):
        registry.get("0123456789abcdef")


def test_registering_again_is_idempotent(task_dir: Path, registry: TaskRegistry) -> None:
    ts = load_tasks(task_dir)
    first = registry.register(ts, source="first")
    before = files_under(registry.root)
    again = registry.register(load_tasks(task_dir), source="second")
    assert again == first and again.source == "first"
    assert files_under(registry.root) == before  # nothing written again


def test_a_task_edited_after_loading_is_refused(task_dir: Path, registry: TaskRegistry) -> None:
    task = load_task(task_dir / IDS[0])
    (task.root / "workspace" / "extra.txt").write_text("new")
    with pytest.raises(TaskError, match="changed on disk"):
        registry.register([task])


def test_materialize_rebuilds_the_same_versions(
    task_dir: Path, registry: TaskRegistry, tmp_path: Path
) -> None:
    ts = load_tasks(task_dir)
    tsv = registry.register(ts)
    shutil.rmtree(task_dir)  # the registry holds the content now
    out = registry.materialize(tsv.hash[:8], tmp_path / "out")
    rebuilt = load_tasks(out)
    assert not rebuilt.errors
    assert {t.id: t.version for t in rebuilt} == tsv.tasks
    one = ts.get(IDS[1])
    single = load_task(registry.materialize(one.version, tmp_path / "one") / one.id)
    assert single.version == one.version
    with pytest.raises(ConfigError, match="already exists"):
        registry.materialize(one.version, tmp_path / "one")


def test_a_damaged_blob_is_detected(task_dir: Path, registry: TaskRegistry, tmp_path: Path) -> None:
    task = load_task(task_dir / IDS[0])
    m = registry.register_task(task)
    blob = registry.root / "blobs" / m.files["task.toml"][:2] / m.files["task.toml"]
    blob.write_bytes(blob.read_bytes().replace(b"id", b"ix", 1))
    with pytest.raises(StoreError, match="do not match"):
        registry.materialize(task.version, tmp_path / "out")


def test_a_manifest_that_does_not_give_its_version_is_detected(
    task_dir: Path, registry: TaskRegistry, tmp_path: Path
) -> None:
    task = load_task(task_dir / IDS[0])
    registry.register_task(task)
    path = registry.root / "tasks" / f"{task.version}.json"
    manifest = json.loads(path.read_text())
    manifest["files"] = {p: h for p, h in manifest["files"].items() if not p.startswith("tests/")}
    path.write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="do not give that version"):
        registry.materialize(task.version, tmp_path / "out")


def test_resolve_by_prefix(task_dir: Path, registry: TaskRegistry) -> None:
    ts = load_tasks(task_dir)
    tsv = registry.register(ts)
    assert registry.resolve(tsv.hash[:6]) == tsv
    found = registry.resolve(ts[0].version)
    assert isinstance(found, TaskVersion) and found.id == ts[0].id
    with pytest.raises(ConfigError, match="no task or task-set version"):
        registry.resolve("abcdef0123")
    with pytest.raises(ConfigError, match="not a version"):
        registry.resolve("abc")


# ---- diffs ---------------------------------------------------------------------------------


def test_identical_sets(task_dir: Path, registry: TaskRegistry) -> None:
    d = diff(state_of(str(task_dir), registry), state_of(str(task_dir), registry))
    assert d.identical and d.unchanged == 3


def test_diff_after_editing_one_file(task_dir: Path, registry: TaskRegistry) -> None:
    before = state_of(str(task_dir), registry)
    ws = task_dir / "feature-clamp-value" / "workspace"
    target = next(p for p in sorted(ws.rglob("*.py")))
    target.write_text(target.read_text() + "\n# touched\n")
    d = diff(before, state_of(str(task_dir), registry))
    assert not d.identical and d.unchanged == 2 and not d.added and not d.removed
    [c] = d.changed
    assert c.id == "feature-clamp-value" and c.known
    assert c.files_changed == (f"workspace/{target.relative_to(ws).as_posix()}",)
    assert c.files_added == c.files_removed == c.spec_fields == ()


def test_diff_names_the_spec_fields_that_changed(task_dir: Path, registry: TaskRegistry) -> None:
    before = state_of(str(task_dir), registry)
    toml = task_dir / "data-sensor-gaps" / "task.toml"
    edit(toml, 'difficulty = "hard"', 'difficulty = "medium"')
    edit(toml, 'tags = ["csv", ', 'tags = ["changed", ')
    [c] = diff(before, state_of(str(task_dir), registry)).changed
    assert c.spec_fields == ("difficulty", "tags")
    assert c.files_changed == ("task.toml",)


def test_diff_after_adding_and_removing_tasks(task_dir: Path, registry: TaskRegistry) -> None:
    before = state_of(str(task_dir), registry)
    shutil.rmtree(task_dir / "data-sensor-gaps")
    shutil.copytree(load_tasks("bundled").get("feature-is-even").root, task_dir / "feature-is-even")
    new = task_dir / "feature-clamp-value" / "tests" / "test_more.py"
    new.write_text("def test_more():\n    assert True\n")
    d = diff(before, state_of(str(task_dir), registry))
    assert d.added == ("feature-is-even",) and d.removed == ("data-sensor-gaps",)
    [c] = d.changed
    assert c.files_added == ("tests/test_more.py",) and d.unchanged == 1
    (task_dir / "feature-is-even" / "task.toml").write_text("id = ")
    d = diff(before, state_of(str(task_dir), registry))
    assert "feature-is-even" not in d.added and "invalid TOML" in d.warnings[0]
    assert any(line.startswith("warning: ") for line in d.lines())
    shutil.rmtree(task_dir / "feature-is-even")
    shutil.copytree(load_tasks("bundled").get("feature-is-even").root, task_dir / "feature-is-even")
    d = diff(before, state_of(str(task_dir), registry))
    lines = d.lines()
    assert "+ feature-is-even  (added)" in lines and "- data-sensor-gaps  (removed)" in lines
    assert lines[-1] == "1 added, 1 removed, 1 changed, 1 unchanged"


def fake_run(path: Path, versions: dict[str, str]) -> Path:
    """A run directory as the runner writes one (its config records the task versions)."""
    RunStore.create(path, {"tasks": "x", "task_versions": versions}).close()
    return path


def test_diff_between_a_run_and_the_current_set(
    task_dir: Path, registry: TaskRegistry, tmp_path: Path
) -> None:
    ts = load_tasks(task_dir)
    registry.register(ts)
    run = fake_run(tmp_path / "run", {t.id: t.version for t in ts})
    assert diff(state_of(str(run), registry), state_of(str(task_dir), registry)).identical
    target = task_dir / "bugfix-pager-page-count" / "task.toml"
    edit(target, "\n[judge]", "\n[limits]\ntimeout_s = 30\n\n[judge]")
    d = diff(state_of(str(run), registry), state_of(str(task_dir), registry))
    [c] = d.changed
    assert c.known and c.spec_fields == ("limits.timeout_s",)
    assert d.a.startswith("run ") and d.unchanged == 2
    # a run whose versions were never registered: only the versions are known
    d = diff(state_of(str(run), TaskRegistry(tmp_path / "empty")), state_of(str(task_dir)))
    assert [c.known for c in d.changed] == [False]


def test_a_registered_set_and_a_directory(task_dir: Path, registry: TaskRegistry) -> None:
    tsv = registry.register(load_tasks(task_dir))
    edit(task_dir / "feature-clamp-value" / "task.toml", 'title = "', 'title = "Now: ')
    d = diff(state_of(tsv.hash, registry), state_of(str(task_dir), registry))
    assert [(c.id, c.spec_fields) for c in d.changed] == [("feature-clamp-value", ("title",))]
    assert isinstance(registry.resolve(tsv.hash), TaskSetVersion)


def test_refs_that_name_nothing(tmp_path: Path, registry: TaskRegistry) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        state_of(str(tmp_path / "file"), registry)
    with pytest.raises(ConfigError, match="not a task directory"):
        state_of("no-such-thing", registry)
    bad_run = tmp_path / "badrun"
    bad_run.mkdir()
    (bad_run / "run.json").write_text(json.dumps({"run_schema": 1, "run_id": "r", "config": {}}))
    with pytest.raises(ConfigError, match="does not record its task versions"):
        state_of(str(bad_run), registry)


# ---- the commands ----------------------------------------------------------------------------


def rollbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_register_and_diff(task_dir: Path, tmp_path: Path) -> None:
    reg = str(tmp_path / "reg")
    res = rollbox("tasks", "register", str(task_dir), "--registry", reg, "--json")
    assert res.returncode == 0, res.stderr
    set_hash = json.loads(res.stdout)["hash"]
    res = rollbox("tasks", "diff", set_hash, str(task_dir), "--registry", reg, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["unchanged"] == 3

    edit(task_dir / "feature-clamp-value" / "task.toml", 'title = "', 'title = "Now: ')
    res = rollbox("tasks", "diff", set_hash[:7], str(task_dir), "--registry", reg)
    assert res.returncode == 1, res.stderr
    assert "~ feature-clamp-value" in res.stdout and "task.toml fields changed: title" in res.stdout

    res = rollbox("tasks", "diff", "deadbeef00", str(task_dir), "--registry", reg)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
