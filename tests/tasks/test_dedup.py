"""Near-duplicates and contamination: copies and renamed copies are found, others are not."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollbox.errors import ConfigError
from rollbox.tasks import load_task, load_tasks
from rollbox.tasks.dedup import (
    DEFAULT_THRESHOLD,
    NUM_PERM,
    Document,
    estimate_jaccard,
    find_contamination,
    find_near_duplicates,
    jaccard,
    load_corpus,
    lsh_bands,
    near_duplicates,
    renamed_tokens,
    shingles,
    signature,
    task_documents,
    tokens,
)

BUNDLED = load_tasks("bundled")
SOURCE = "bugfix-pager-page-count"  # small enough that renaming three names changes a lot


def copy_task(task_id: str, dest: Path, new_id: str, *, split: str | None = None) -> Path:
    """A bundled task copied under another id (and split)."""
    root = dest / new_id
    shutil.copytree(BUNDLED.get(task_id).root, root)
    toml = (root / "task.toml").read_text()
    toml = re.sub(r'(?m)^id = ".*"$', f'id = "{new_id}"', toml)
    if split is not None:
        toml = re.sub(r'(?m)^split = ".*"$', f'split = "{split}"', toml)
    (root / "task.toml").write_text(toml)
    return root


def rewrite_files(root: Path, edit: object) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != "task.toml":
            path.write_text(edit(path.read_text()))  # type: ignore[operator]
    toml = root / "task.toml"
    text = toml.read_text()
    head, sep, instruction = text.partition('instruction = """')
    body, end, tail = instruction.partition('"""')
    toml.write_text(head + sep + edit(body) + end + tail)  # type: ignore[operator]


def rename_and_reflow(text: str) -> str:
    for old, new in (("page_count", "n_pages"), ("per_page", "size"), ("page_slice", "chunk")):
        text = re.sub(rf"\b{old}\b", new, text)
    return re.sub(r"[ \t]+", "   ", text).replace("\n", " \n\n")


# ---- the estimator --------------------------------------------------------------------------


def test_tokens_ignore_whitespace_and_case() -> None:
    assert tokens("def  Foo(x):\n\treturn x+1.5") == tokens("def foo( x ) :  return x + 1.5")
    assert tokens("a_b 12 ==") == ["a_b", "12", "=", "="]


def test_renamed_form_is_the_same_under_consistent_renaming() -> None:
    a = "def area(w, h):\n    return w * h\nprint(area(2, 3))"
    b = "def surface(width, height):\n    return width * height\nprint(surface(2, 3))"
    assert renamed_tokens(a) == renamed_tokens(b)
    assert tokens(a) != tokens(b)
    # names used once stay: texts of only new words do not all look alike
    assert renamed_tokens("alpha beta gamma") != renamed_tokens("delta epsilon zeta")


@pytest.mark.parametrize("sizes", [(8, 100), (100, 800)])  # few shingles: densified slots
def test_estimate_is_unbiased_and_deterministic(sizes: tuple[int, int]) -> None:
    rng = random.Random(7)
    errors = []
    for _ in range(150):
        words = [f"w{rng.randrange(5000)}" for _ in range(rng.randint(*sizes))]
        other = [w if rng.random() < rng.random() else f"x{rng.randrange(5000)}" for w in words]
        a, b = shingles(words), shingles(other)
        sig_a = signature(a)
        assert sig_a == signature(set(a)) and len(sig_a) == NUM_PERM
        errors.append(estimate_jaccard(sig_a, signature(b)) - jaccard(a, b))
    mean = sum(errors) / len(errors)
    spread = (sum(e * e for e in errors) / len(errors)) ** 0.5
    assert abs(mean) < 0.02, mean
    assert spread < 0.06, spread  # about sqrt(J(1-J)/128) <= 0.044


def test_identical_sets_agree_everywhere_and_disjoint_ones_nowhere() -> None:
    a = shingles([f"t{i}" for i in range(300)])
    b = shingles([f"u{i}" for i in range(300)])
    assert estimate_jaccard(signature(a), signature(a)) == 1.0
    assert estimate_jaccard(signature(a), signature(b)) < 0.05


def test_bands_catch_a_pair_at_the_threshold() -> None:
    assert lsh_bands(0.8) == (32, 4)
    for t in (0.3, 0.5, 0.8, 0.9, 0.95):
        bands, rows = lsh_bands(t)
        assert bands * rows == NUM_PERM
        assert 1 - (1 - t**rows) ** bands >= 0.999


def test_only_the_same_view_is_compared() -> None:
    text = "the same words in the same order, " * 20
    assert near_duplicates([Document("a", text, "task"), Document("b", text, "problem")]) == []
    [pair] = near_duplicates([Document("a", text, "task"), Document("b", text, "task")])
    assert (pair.a, pair.b, pair.similarity, pair.what) == ("a", "b", 1.0, "task")


def test_bad_threshold_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threshold"):
        near_duplicates([], threshold=0.0)


# ---- tasks ----------------------------------------------------------------------------------


def test_the_bundled_set_has_no_near_duplicates() -> None:
    assert find_near_duplicates(BUNDLED) == []


def test_an_exact_copy_in_the_other_split_is_found(tmp_path: Path) -> None:
    task = BUNDLED.get(SOURCE)
    other = "eval" if str(task.split) == "train" else "train"
    copy = load_task(copy_task(SOURCE, tmp_path, "copy-of-pager", split=other))
    unrelated = [BUNDLED.get("feature-rle-codec"), BUNDLED.get("data-sensor-gaps")]
    pairs = find_near_duplicates([task, copy, *unrelated], across_splits_only=True)
    assert [(p.a, p.b) for p in pairs] == [("bugfix-pager-page-count", "copy-of-pager")]
    assert pairs[0].similarity == pytest.approx(1.0)
    assert pairs[0].cross_split and {pairs[0].a_split, pairs[0].b_split} == {"train", "eval"}


def test_same_split_pairs_are_left_out_across_splits_only(tmp_path: Path) -> None:
    task = BUNDLED.get(SOURCE)
    copy = load_task(copy_task(SOURCE, tmp_path, "copy-of-pager"))
    assert find_near_duplicates([task, copy], across_splits_only=True) == []
    assert len(find_near_duplicates([task, copy])) == 1


def test_a_renamed_and_reflowed_copy_is_above_the_threshold(tmp_path: Path) -> None:
    task = BUNDLED.get(SOURCE)
    root = copy_task(SOURCE, tmp_path, "pager-renamed")
    rewrite_files(root, rename_and_reflow)
    copy = load_task(root)
    assert copy.version != task.version
    literal = [shingles(tokens(d.text)) for d in (task_documents(task)[0], task_documents(copy)[0])]
    assert jaccard(*literal) < DEFAULT_THRESHOLD  # the literal form alone misses it
    pairs = find_near_duplicates([task, copy, *BUNDLED.head(10)])
    assert [(p.a, p.b) for p in pairs] == [("bugfix-pager-page-count", "pager-renamed")]
    assert pairs[0].similarity > DEFAULT_THRESHOLD
    assert pairs[0].what.endswith("renamed")


def test_unrelated_tasks_are_far_below_the_threshold() -> None:
    pairs = find_near_duplicates(BUNDLED.filter(family="feature"), threshold=0.5)
    assert pairs == []


def test_two_thousand_items_quickly() -> None:
    rng = random.Random(3)
    vocab = [f"word{i}" for i in range(5000)]
    docs = [
        Document(f"d{i:04d}", " ".join(rng.choice(vocab) for _ in range(120)), split="train")
        for i in range(2000)
    ]
    planted = set()
    for i in range(0, 40, 2):  # d0000~d0001, ...: the second a light edit of the first
        words = docs[i].text.split()
        words[rng.randrange(len(words))] = "edited"
        docs[i + 1] = Document(docs[i + 1].owner, " ".join(words), split="eval")
        planted.add((docs[i].owner, docs[i + 1].owner))
    t0 = time.perf_counter()
    pairs = near_duplicates(docs)
    elapsed = time.perf_counter() - t0
    assert {(p.a, p.b) for p in pairs} == planted
    assert all(p.similarity > 0.85 for p in pairs)
    assert elapsed < 15, elapsed  # about 1.5 s here


# ---- a corpus ---------------------------------------------------------------------------------


def _problem_text(task_id: str) -> tuple[str, str]:
    t = BUNDLED.get(task_id)
    solution = "\n".join(p.read_text() for p in sorted(t.solution_dir.rglob("*")) if p.is_file())
    return t.instruction, solution


def test_contamination_in_a_directory_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    instruction, solution = _problem_text(SOURCE)
    (corpus / "sub" / "leak.md").write_text(f"# Issue\n{instruction}\n\n## Fix\n{solution}")
    (corpus / "other.txt").write_text(_problem_text("feature-rle-codec")[0][:200])
    (corpus / "blob.bin").write_bytes(b"\0\1\2" * 100)
    items = list(load_corpus(corpus))
    assert [i.id for i in items] == ["other.txt", "sub/leak.md"]
    pairs = find_contamination(BUNDLED, items)
    assert [(p.a, p.b, p.what) for p in pairs] == [(SOURCE, "sub/leak.md", "problem")]
    assert pairs[0].b_split is None and pairs[0].similarity > 0.9


def test_contamination_in_a_jsonl_corpus(tmp_path: Path) -> None:
    instruction, solution = _problem_text(SOURCE)
    whole = task_documents(BUNDLED.get("data-sensor-gaps"))[0].text
    lines = [
        json.dumps({"id": "r1", "text": "nothing to see here " * 20}),
        "",
        json.dumps({"problem_statement": instruction, "patch": solution, "n": 3}),
        json.dumps({"text": whole, "meta": "ignored when text is there"}),
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("\n".join(lines) + "\n")
    items = list(load_corpus(path))
    assert [i.id for i in items] == ["dump.jsonl:1 (r1)", "dump.jsonl:3", "dump.jsonl:4"]
    pairs = find_contamination(BUNDLED, items)
    assert {(p.a, p.b) for p in pairs} == {
        (SOURCE, "dump.jsonl:3"),
        ("data-sensor-gaps", "dump.jsonl:4"),
    }
    path.write_text('{"text": "ok"}\n{not json\n')
    with pytest.raises(ConfigError, match=r"dump.jsonl:2"):
        list(load_corpus(path))


def test_a_missing_corpus_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_corpus(tmp_path / "nope")


# ---- the command ------------------------------------------------------------------------------


def rollbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollbox.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_exit_0_when_none_1_when_found(tmp_path: Path) -> None:
    base = tmp_path / "set"
    for task_id in (SOURCE, "feature-rle-codec"):
        copy_task(task_id, base, task_id)
    res = rollbox("tasks", "dedup", str(base), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == []

    copy_task(SOURCE, base, "pager-copy", split="eval")
    res = rollbox("tasks", "dedup", str(base), "--json", "--cross-split")
    assert res.returncode == 1, res.stderr
    [pair] = json.loads(res.stdout)
    assert (pair["a"], pair["b"], pair["similarity"]) == (SOURCE, "pager-copy", 1.0)
    res = rollbox("tasks", "dedup", str(base))
    assert res.returncode == 1 and "pager-copy" in res.stdout and "1 pairs" in res.stdout


def test_cli_against_a_corpus(tmp_path: Path) -> None:
    base = tmp_path / "set"
    copy_task(SOURCE, base, SOURCE)
    corpus = tmp_path / "c.jsonl"
    instruction, solution = _problem_text(SOURCE)
    corpus.write_text(json.dumps({"issue": instruction, "patch": solution}) + "\n")
    res = rollbox("tasks", "dedup", str(base), "--against", str(corpus), "--json")
    assert res.returncode == 1, res.stderr
    assert [(p["a"], p["b"]) for p in json.loads(res.stdout)] == [(SOURCE, "c.jsonl:1")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tasks", "dedup", "/nonexistent/tasks"), "does not exist"),
        (("tasks", "dedup", "bundled", "--against", "/nonexistent/corpus"), "does not exist"),
        (("tasks", "dedup", "bundled", "--threshold", "1.5"), "threshold"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    res = rollbox(*args)
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
