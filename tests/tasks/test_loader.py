"""Loading tasks: the good ones load, every bad one gets one error naming the file and problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rollbox.errors import TaskFormatError
from rollbox.tasks import Family, load_task, load_tasks
from tests.conftest import TASK_TOML, MakeTask


def test_a_valid_task_loads(make_task: MakeTask) -> None:
    t = load_task(make_task())
    assert t.id == "feature-add"
    assert t.family is Family.feature
    assert t.spec.judge.type == "pytest"
    assert t.spec.limits.timeout_s == 60
    assert len(t.version) == 16


def _break(root: Path, how: str) -> None:
    toml = root / "task.toml"
    text = toml.read_text()
    if how == "missing task.toml":
        toml.unlink()
    elif how == "bad toml":
        toml.write_text(text + "\nthis is not toml\n")
    elif how == "unknown field":
        toml.write_text(text.replace('split = "train"', 'split = "train"\ncolour = "red"'))
    elif how == "missing field":
        toml.write_text(text.replace('title = "Make add() add"\n', ""))
    elif how == "bad family":
        toml.write_text(text.replace('family = "feature"', 'family = "poetry"'))
    elif how == "bad judge type":
        toml.write_text(text.replace('type = "pytest"', 'type = "vibes"'))
    elif how == "id differs":
        toml.write_text(text.replace('id = "feature-add"', 'id = "feature-other"'))
    elif how == "missing workspace":
        shutil.rmtree(root / "workspace")
    elif how == "empty tests":
        shutil.rmtree(root / "tests")
        (root / "tests").mkdir()
    elif how == "no test files":
        (root / "tests" / "test_calc.py").rename(root / "tests" / "calc_check.py")
    elif how == "empty solution":
        shutil.rmtree(root / "solution")
        (root / "solution").mkdir()
    elif how == "diff does not apply":
        shutil.rmtree(root / "solution")
        (root / "solution").mkdir()
        (root / "solution" / "solution.diff").write_text(
            "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            "-    return None\n+    return a + b\n"
        )
    elif how == "bad limit":
        toml.write_text(text.replace("[judge]", "[limits]\ntimeout_s = -5\n\n[judge]"))
    elif how == "symlink":
        (root / "workspace" / "leak").symlink_to("/etc/passwd")
    elif how == "visible equals hidden":
        shutil.copytree(root / "tests", root / "visible_tests")
    elif how == "not utf-8":
        toml.write_bytes(b'id = "\xff\xfe"\n')
    else:
        raise AssertionError(how)


CASES = [
    ("missing task.toml", "task.toml", "missing task.toml"),
    ("bad toml", "task.toml", "invalid TOML"),
    ("unknown field", "task.toml", "'colour': unknown field"),
    ("missing field", "task.toml", "'title': required field is missing"),
    ("bad family", "task.toml", "'family'"),
    ("bad judge type", "task.toml", "'judge'"),
    ("id differs", "task.toml", "differs from the directory name"),
    ("missing workspace", "workspace", "missing directory 'workspace/'"),
    ("empty tests", "tests", "no hidden tests"),
    ("no test files", "tests", "needs test_*.py files"),
    ("empty solution", "solution", "no reference solution"),
    ("diff does not apply", "solution.diff", "does not apply"),
    ("bad limit", "task.toml", "'limits.timeout_s'"),
    ("symlink", "leak", "symbolic links are not allowed"),
    ("visible equals hidden", "test_calc.py", "hidden tests must differ"),
    ("not utf-8", "task.toml", "not valid UTF-8"),
]


@pytest.mark.parametrize(("how", "file", "problem"), CASES, ids=[c[0] for c in CASES])
def test_malformed_task_names_file_and_problem(
    make_task: MakeTask, how: str, file: str, problem: str
) -> None:
    root = make_task()
    _break(root, how)
    with pytest.raises(TaskFormatError) as info:
        load_task(root)
    err = info.value
    assert err.path.name == file, str(err)
    assert problem in str(err), str(err)
    assert str(err).startswith(str(err.path)), "the message starts with the file's path"


def test_a_directory_reports_every_bad_task_and_loads_the_good(
    make_task: MakeTask, tmp_path: Path
) -> None:
    base = tmp_path / "set"
    make_task("good-one", parent=base)
    make_task("good-two", parent=base)
    bad_a = make_task("bad-a", parent=base)
    _break(bad_a, "bad toml")
    bad_b = make_task("bad-b", parent=base)
    _break(bad_b, "empty solution")
    ts = load_tasks(base)
    assert [t.id for t in ts] == ["good-one", "good-two"]
    assert sorted(e.path.parent.name for e in ts.errors) == ["bad-a", "bad-b"]


def test_a_workspace_may_hold_a_task_toml_without_it_being_a_task(
    make_task: MakeTask, tmp_path: Path
) -> None:
    base = tmp_path / "set"
    root = make_task("outer", parent=base)
    (root / "workspace" / "inner").mkdir()
    (root / "workspace" / "inner" / "task.toml").write_text("not a task")
    ts = load_tasks(base)
    assert [t.id for t in ts] == ["outer"] and not ts.errors


def test_version_changes_with_any_file_and_ignores_caches(make_task: MakeTask) -> None:
    root = make_task()
    v0 = load_task(root).version
    (root / "tests" / "__pycache__").mkdir()
    (root / "tests" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert load_task(root).version == v0
    for part, rel in (("tests", "test_calc.py"), ("workspace", "calc.py"), ("solution", "calc.py")):
        p = root / part / rel
        original = p.read_text()
        p.write_text(original + "\n# changed\n")
        assert load_task(root).version != v0, part
        p.write_text(original)
    assert load_task(root).version == v0
    (root / "task.toml").write_text(TASK_TOML.format(id="feature-add").replace("trivial", "easy"))
    assert load_task(root).version != v0


def test_a_solution_diff_is_applied(make_task: MakeTask) -> None:
    from rollbox.tasks import reference_changes

    root = make_task(solution={})
    (root / "solution" / "solution.diff").write_text(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    raise NotImplementedError\n+    return a + b\n"
    )
    changes = reference_changes(load_task(root))
    assert changes == {"calc.py": b"def add(a, b):\n    return a + b\n"}


def test_taskset_views(make_task: MakeTask, tmp_path: Path) -> None:
    base = tmp_path / "set"
    for i in range(5):
        make_task(f"t{i}", parent=base)
    ts = load_tasks(base)
    assert [t.id for t in ts.head(2)] == ["t0", "t1"]
    shuffled = [t.id for t in ts.shuffle(3)]
    assert sorted(shuffled) == [t.id for t in ts]
    assert shuffled == [t.id for t in ts.shuffle(3)], "a seed gives one order"
    assert len(ts.filter(split="eval")) == 0 and len(ts.filter(family="feature")) == 5
