"""The Exercism importer on a small track in the Python track's layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rollbox.errors import ConfigError
from rollbox.tasks import load_task, read_tree
from rollbox.tasks.importers import import_tasks
from tests.tasks.importers.conftest import FIXTURES

TRACK = FIXTURES / "exercism-track"
PRACTICE = TRACK / "exercises" / "practice"


def test_imports_the_complete_exercises_and_skips_the_rest(tmp_path: Path) -> None:
    report = import_tasks("exercism", TRACK, tmp_path)
    assert [i.id for i in report.imported] == ["exercism-parking-fee", "exercism-reverse-words"]
    reasons = {s.source_id: s.reason for s in report.skipped}
    assert reasons == {
        "exercism/broken-cipher": "example solution .meta/example.py is missing",
        "exercism/old-greeting": "deprecated in the track's config.json",
    }
    for i in report.imported:
        load_task(i.path)


def test_what_maps_to_what(tmp_path: Path) -> None:
    import_tasks("exercism", TRACK, tmp_path)
    task = load_task(tmp_path / "exercism-reverse-words")
    src = PRACTICE / "reverse-words"
    assert read_tree(task.workspace_dir) == {
        "reverse_words.py": (src / "reverse_words.py").read_bytes()
    }
    # the task format's hidden tests are test_*.py files
    assert read_tree(task.tests_dir) == {
        "test_reverse_words.py": (src / "reverse_words_test.py").read_bytes()
    }
    assert read_tree(task.solution_dir) == {
        "reverse_words.py": (src / ".meta" / "example.py").read_bytes()
    }
    assert "Reverse the order of the words" in task.instruction
    assert "sentence must not be empty" in task.instruction  # instructions.append.md
    assert "`reverse_words.py`" in task.instruction
    assert task.spec.title == "Reverse Words: Reverse the order of the words in a sentence."
    assert (str(task.family), str(task.difficulty), str(task.split)) == ("feature", "easy", "train")
    assert task.spec.tags == ("exercism", "exercism-difficulty-1")

    fee = load_task(tmp_path / "exercism-parking-fee")
    assert set(read_tree(fee.workspace_dir)) == {"parking_fee.py", "rates.py"}  # editor files
    assert fee.instruction.startswith("# Introduction")
    assert "`rates.py` is given" in fee.instruction


def test_a_practice_dir_or_one_exercise_gives_the_same_tasks(tmp_path: Path) -> None:
    whole = import_tasks("exercism", TRACK, tmp_path / "a")
    versions = {i.id: i.version for i in whole.imported}
    practice = import_tasks("exercism", PRACTICE, tmp_path / "b")
    assert {i.id: i.version for i in practice.imported} == versions
    one = import_tasks("exercism", PRACTICE / "parking-fee", tmp_path / "c")
    assert [(i.id, i.version) for i in one.imported] == [
        ("exercism-parking-fee", versions["exercism-parking-fee"])
    ]


def test_broken_configs_are_skipped_with_their_reason(tmp_path: Path) -> None:
    practice = tmp_path / "practice"
    for slug in ("bad-json", "no-tests", "not-python", "no-runner", "no-docs"):
        shutil.copytree(PRACTICE / "reverse-words", practice / slug)
    (practice / "bad-json" / ".meta" / "config.json").write_text("{")
    edits = {
        "no-tests": lambda c: c["files"].update(test=[]),
        "not-python": lambda c: c["files"].update(solution=["reverse_words.rb"]),
        "no-runner": lambda c: c.update(test_runner=False),
    }
    for slug, edit in edits.items():
        path = practice / slug / ".meta" / "config.json"
        config = json.loads(path.read_text())
        edit(config)
        path.write_text(json.dumps(config))
    shutil.rmtree(practice / "no-docs" / ".docs")
    (practice / "not-an-exercise").mkdir()
    report = import_tasks("exercism", practice, tmp_path / "out")
    assert report.imported == ()
    reasons = {s.source_id.split("/")[1]: s.reason for s in report.skipped}
    assert reasons["bad-json"].startswith(".meta/config.json is not valid JSON")
    assert reasons["no-tests"] == ".meta/config.json: files.test lists no files"
    assert reasons["not-python"] == "not a Python exercise (solution files: reverse_words.rb)"
    assert reasons["no-runner"] == ".meta/config.json says its tests cannot run in a test runner"
    assert reasons["no-docs"] == ".docs/instructions.md is missing"
    assert reasons["not-an-exercise"] == ".meta/config.json is missing"


def test_a_directory_without_exercises_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no Exercism exercises"):
        import_tasks("exercism", tmp_path, tmp_path / "out")
    with pytest.raises(ConfigError, match="does not exist"):
        import_tasks("exercism", tmp_path / "nope", tmp_path / "out")
