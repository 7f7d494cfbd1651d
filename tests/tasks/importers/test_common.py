"""What the importers share: ids, task.toml, reading JSONL, writing (idempotent, never over a
different task), options and the limit."""

from __future__ import annotations

import gzip
import json
import shutil
import tomllib
from pathlib import Path

import pytest

from rollbox.errors import ConfigError
from rollbox.tasks import load_task
from rollbox.tasks.importers import ImportOptions, import_tasks, parse_options
from rollbox.tasks.importers.common import SkipItem, make_spec, read_records, spec_toml, task_id
from rollbox.tasks.model import Family, Split, TaskSpec
from tests.tasks.importers.conftest import FIXTURES

HUMANEVAL = FIXTURES / "humaneval.jsonl"


@pytest.mark.parametrize(
    ("prefix", "raw", "expected"),
    [
        ("exercism", "two-fer", "exercism-two-fer"),
        ("swebench", "astropy__astropy-12907", "swebench-astropy__astropy-12907"),
        ("swebench", "Org/Repo Name#7", "swebench-org-repo-name-7"),
        ("mbpp", "11", "mbpp-11"),
    ],
)
def test_task_ids_are_sanitized_and_prefixed(prefix: str, raw: str, expected: str) -> None:
    assert task_id(prefix, raw) == expected


def test_a_task_id_too_long_is_a_skip() -> None:
    with pytest.raises(SkipItem, match="not a valid id"):
        task_id("swebench", "x" * 200)


AWKWARD = [
    "plain text\n",
    "quotes ' \" and ''' triple and \"\"\" too\n",
    "a backslash \\n that is not a newline, a tab\there\n",
    "control \x01 and DEL \x7f and a carriage\rreturn",
    "non-ASCII: é, 漢字, 🙂 and U+2028 \u2028 inside\n",
    "ends with a quote'",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_task_toml_round_trips_awkward_text(text: str) -> None:
    spec = make_spec(
        tid="mbpp-1",
        title=f"title {text}",
        instruction=text,
        family=Family.feature,
        difficulty="easy",  # type: ignore[arg-type]
        options=ImportOptions(),
        tags=(text.strip() or "t",),
        extra={"judge": {"required": ["t.py::a"], "pass_to_pass": ["t.py::a"]}},
    )
    again = TaskSpec.model_validate(tomllib.loads(spec_toml(spec)))
    assert again == spec
    assert "\r" not in again.instruction  # line endings are normalized


def test_read_records_reports_the_line_of_bad_json(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"a": 1}\n\n{"a": 2,\n{"a": 3}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:3: not valid JSON"):
        read_records(src)


def test_read_records_gzip_json_list_and_unicode_line_separators(tmp_path: Path) -> None:
    items = [{"text": "a\u2028b"}, {"text": "c"}]
    plain = tmp_path / "x.jsonl"
    plain.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    packed = tmp_path / "x.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    listed = tmp_path / "x.json"
    listed.write_text(json.dumps(items, indent=2))
    for path in (plain, packed, listed):
        assert [r.value for r in read_records(path)] == items, path


def test_read_records_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_records(tmp_path / "nope.jsonl")


def test_unknown_kind_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown source kind 'apps'"):
        import_tasks("apps", HUMANEVAL, tmp_path)


def test_options_from_the_command_line() -> None:
    opts = parse_options(split="eval", family="bugfix", limit=2)
    assert (opts.split, opts.family, opts.limit) == (Split.eval, Family.bugfix, 2)
    for bad, message in (
        ({"split": "test"}, "--split must be one of train, eval"),
        ({"family": "nope"}, "--family must be one of"),
        ({"limit": 0}, "--limit must be at least 1"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_options(**bad)  # type: ignore[arg-type]


def test_split_family_and_limit_apply(tmp_path: Path) -> None:
    opts = ImportOptions(split=Split.eval, family=Family.bugfix, limit=2)
    report = import_tasks("humaneval", HUMANEVAL, tmp_path, opts)
    assert [i.id for i in report.imported] == ["humaneval-0", "humaneval-1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["humaneval-0", "humaneval-1"]
    for i in report.imported:
        t = load_task(i.path)
        assert (t.split, t.family) == (Split.eval, Family.bugfix)


def test_reimporting_is_idempotent_and_never_overwrites_a_different_task(tmp_path: Path) -> None:
    first = import_tasks("humaneval", HUMANEVAL, tmp_path)
    assert {i.status for i in first.imported} == {"new"}
    again = import_tasks("humaneval", HUMANEVAL, tmp_path)
    assert {i.status for i in again.imported} == {"unchanged"}
    assert [i.version for i in again.imported] == [i.version for i in first.imported]

    victim = tmp_path / "humaneval-1" / "workspace" / "solution.py"
    victim.write_text("# my own work\n")
    with pytest.raises(ConfigError, match=r"humaneval-1 already holds a different task"):
        import_tasks("humaneval", HUMANEVAL, tmp_path)
    assert victim.read_text() == "# my own work\n"

    shutil.rmtree(tmp_path / "humaneval-1")
    (tmp_path / "humaneval-1").mkdir()  # not a task at all
    with pytest.raises(ConfigError, match="something that is not a task"):
        import_tasks("humaneval", HUMANEVAL, tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "staging left behind"


def test_a_destination_that_is_a_file_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "file"
    dest.write_text("")
    with pytest.raises(ConfigError, match="not a directory"):
        import_tasks("humaneval", HUMANEVAL, dest)
