"""Near-duplicate tasks and contamination: MinHash sketches of token shingles, LSH for candidates.

    find_near_duplicates(tasks)                   pairs of tasks that are (nearly) the same
    find_near_duplicates(tasks, across_splits_only=True)
                                                  train/eval pairs: the contamination that matters
    find_contamination(tasks, load_corpus(path))  tasks that appear in a corpus the user gives

**What text stands for a task.** Two views, each compared only with the same view of another
task, and a pair's similarity is the higher of the two (`DuplicatePair.what` says which):

- `task`: the instruction, the workspace files, the visible and the hidden tests: the whole
  problem as posed. Two tasks built from one source match here even when their references differ.
- `problem`: the instruction and the reference solution (files or diff): the question and its
  answer, which is what a dataset record usually holds (an issue and its patch). A task whose big
  data files dilute the `task` view still matches here when its question and answer were copied.

**Normalization.** Text is split into tokens: identifiers and words, numbers, and single
punctuation characters; whitespace is dropped, so reflowed or re-indented text is the same text.
Each view is compared in two forms, and the higher similarity wins:

- literal: tokens lowercased;
- renamed: every identifier used more than once, Python keywords and builtins aside, is
  replaced by the order of its first appearance (`$0`, `$1`, ...), case kept, so a copy with
  its names consistently renamed matches (names used once stay, or any two texts of new words
  would look alike); this form is fragile to insertions (the numbering shifts), which the
  literal form is not.

**Similarity** is the Jaccard index of the two sets of 5-token shingles. Each set is sketched by
a one-permutation MinHash (one 64-bit hash per shingle, 128 slots, empty slots filled by optimal
densification; Shrivastava 2017): two sketches agree in a slot with probability equal to the
Jaccard index, like 128 independent permutations, at 1/128 of the hashing cost. LSH banding of
the sketches finds candidate pairs without comparing every pair; candidates whose estimate is
near the threshold are then confirmed on the exact shingle sets, and the exact value is reported.
Everything is seeded by constants: the same input always gives the same pairs.

Jaccard measures how much two texts share relative to both: a task copied into a much larger
corpus document scores low. Files that look binary are skipped; each file is read up to 1 MB.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import keyword
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rollbox.errors import ConfigError
from rollbox.tasks.loader import iter_files, read_tree
from rollbox.tasks.model import Task

SHINGLE = 5  # tokens per shingle
NUM_PERM = 128  # sketch slots
SEED = 0x5EED_D0D0  # fixed: the estimator is deterministic
DEFAULT_THRESHOLD = 0.8
MAX_FILE_BYTES = 1 << 20
_CONFIRM_SLACK = 0.2  # candidates estimated this far below the threshold are still confirmed
_RECALL = 0.999  # LSH: chance that a pair exactly at the threshold becomes a candidate

_TOKEN = re.compile(r"[^\W\d]\w*|\d+(?:\.\d+)?|[^\w\s]")
_KEEP = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


@dataclass(frozen=True)
class DuplicatePair:
    """Two items whose texts are nearly the same. Pairs of tasks have `a < b`; against a corpus,
    `a` is the task and `b` the corpus item (its split is None)."""

    a: str
    b: str
    similarity: float  # exact Jaccard index of the shingle sets, 0..1
    a_split: str | None
    b_split: str | None
    what: str  # the view that matched: "task" or "problem", with ", renamed" for that form

    @property
    def cross_split(self) -> bool:
        """One is train and the other eval: an eval task leaked into training."""
        return None not in (self.a_split, self.b_split) and self.a_split != self.b_split

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "similarity": round(self.similarity, 4)}


@dataclass(frozen=True)
class Document:
    """A text to compare: `owner` is what it stands for (a task id), `view` which of its texts."""

    owner: str
    text: str
    view: str = "text"
    split: str | None = None


@dataclass(frozen=True)
class CorpusItem:
    """One document of a corpus: a file, or one record of a JSONL file (`id` names which)."""

    id: str
    text: str


# ---- normalization and sketches ---------------------------------------------------------


def tokens(text: str) -> list[str]:
    """The literal form: identifiers/words, numbers and punctuation, lowercased."""
    return _TOKEN.findall(text.lower())


def renamed_tokens(text: str) -> list[str]:
    """The renamed form: each identifier used more than once (keywords and builtins aside)
    becomes `$<n>`, n being the order of its first appearance; case is kept.

    Names used once stay as they are: text whose every word is new would otherwise become the
    same `$0 $1 $2 ...` as any other such text.
    """
    toks = _TOKEN.findall(text)
    counts = Counter(toks)
    names: dict[str, str] = {}
    out = []
    for t in toks:
        if counts[t] > 1 and (t[0].isalpha() or t[0] == "_") and t not in _KEEP:
            t = names.setdefault(t, f"${len(names)}")
        out.append(t)
    return out


def shingles(toks: Sequence[str], k: int = SHINGLE) -> frozenset[int]:
    """The set of k-token windows, each as a 64-bit hash (one window when there are fewer)."""
    if not toks:
        return frozenset()
    raw = [t.encode() for t in toks]
    return frozenset(_hash64(b"\x1f".join(raw[i : i + k])) for i in range(max(1, len(raw) - k + 1)))


_SALT = SEED.to_bytes(8, "big")


def _hash64(data: bytes) -> int:
    """A seeded 64-bit hash (blake2b): the same on every machine and Python."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, salt=_SALT).digest(), "big")


@lru_cache(maxsize=NUM_PERM * 4)
def _donors(slot: int, num_perm: int, attempts: int) -> tuple[int, ...]:
    """The fixed sequence of slots an empty slot borrows from (the same for every sketch)."""
    return tuple(_hash64(f"donor:{slot}:{t}".encode()) % num_perm for t in range(attempts))


def signature(shingle_set: Iterable[int], num_perm: int = NUM_PERM) -> tuple[int, ...]:
    """A one-permutation MinHash sketch with optimal densification (empty for an empty set).

    A shingle's hash picks its slot (hash mod num_perm); each slot keeps its smallest hash. An
    empty slot takes the value of the first non-empty slot along a fixed pseudo-random sequence
    of slots (the same for every sketch), so two sketches agree in a slot with probability equal
    to the Jaccard index; a borrowed value (another slot's residue) never equals an owned one.
    """
    empty = -1
    slots = [empty] * num_perm
    for h in shingle_set:
        i = h % num_perm
        if slots[i] == empty or h < slots[i]:
            slots[i] = h
    if all(s == empty for s in slots):
        return ()
    filled = list(slots)
    for i, s in enumerate(slots):
        attempts = 64
        while s == empty:
            s = next((slots[d] for d in _donors(i, num_perm, attempts) if slots[d] != empty), empty)
            attempts *= 4
        filled[i] = s
    return tuple(filled)


def estimate_jaccard(a: Sequence[int], b: Sequence[int]) -> float:
    """The fraction of sketch slots that agree: an unbiased estimate of the Jaccard index."""
    if not a or not b or len(a) != len(b):
        return 0.0
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """The exact Jaccard index of two shingle sets."""
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def lsh_bands(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """(bands, rows): the most selective banding that still makes a pair at the threshold a
    candidate with probability at least 0.999."""
    best = (num_perm, 1)
    for rows in range(1, num_perm + 1):
        if num_perm % rows:
            continue
        bands = num_perm // rows
        if 1 - (1 - threshold**rows) ** bands >= _RECALL:
            best = (bands, rows)
    return best


# ---- the index ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sketch:
    doc: Document
    form: str  # "literal" or "renamed"
    shingles: frozenset[int]
    sig: tuple[int, ...]


def _sketches(doc: Document) -> list[_Sketch]:
    out = []
    for form, toks in (("literal", tokens(doc.text)), ("renamed", renamed_tokens(doc.text))):
        sh = shingles(toks)
        if sh:
            out.append(_Sketch(doc, form, sh, signature(sh)))
    return out


class _Index:
    """LSH buckets of sketches: (form, band, slot values) -> sketches."""

    def __init__(self, threshold: float) -> None:
        _check_threshold(threshold)
        self.threshold = threshold
        self.bands, self.rows = lsh_bands(threshold)
        self.buckets: dict[tuple[str, int, tuple[int, ...]], list[_Sketch]] = defaultdict(list)

    def _keys(self, s: _Sketch) -> Iterator[tuple[str, int, tuple[int, ...]]]:
        r = self.rows
        for b in range(self.bands):
            yield (s.form, b, s.sig[b * r : (b + 1) * r])

    def add(self, s: _Sketch) -> None:
        for key in self._keys(s):
            self.buckets[key].append(s)

    def query(self, s: _Sketch) -> list[_Sketch]:
        """Sketches that share a band with `s` (each once)."""
        seen: dict[int, _Sketch] = {}
        for key in self._keys(s):
            for other in self.buckets.get(key, ()):
                seen.setdefault(id(other), other)
        return list(seen.values())

    def candidate_pairs(self) -> Iterator[tuple[_Sketch, _Sketch]]:
        """Every pair that shares a band, each once."""
        seen: set[tuple[int, int]] = set()
        for members in self.buckets.values():
            if len(members) < 2:
                continue
            for i, x in enumerate(members):
                for y in members[i + 1 :]:
                    key = (id(x), id(y)) if id(x) < id(y) else (id(y), id(x))
                    if key not in seen:
                        seen.add(key)
                        yield x, y

    def similarity(self, x: _Sketch, y: _Sketch) -> float | None:
        """The exact similarity when the pair reaches the threshold, else None."""
        if estimate_jaccard(x.sig, y.sig) < self.threshold - _CONFIRM_SLACK:
            return None
        sim = jaccard(x.shingles, y.shingles)
        return sim if sim >= self.threshold else None


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"the similarity threshold must be in (0, 1], got {threshold}")


def _what(view: str, form: str) -> str:
    return view if form == "literal" else f"{view}, renamed"


def _keep_best(best: dict[tuple[str, str], DuplicatePair], pair: DuplicatePair) -> None:
    key = (pair.a, pair.b)
    old = best.get(key)
    if old is None or pair.similarity > old.similarity:
        best[key] = pair


def _sorted(pairs: Iterable[DuplicatePair]) -> list[DuplicatePair]:
    return sorted(pairs, key=lambda p: (-p.similarity, p.a, p.b, p.what))


def near_duplicates(
    docs: Iterable[Document],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    across_splits_only: bool = False,
) -> list[DuplicatePair]:
    """Pairs of owners with a view whose texts reach `threshold` (the best view per pair).

    Only the same view of two different owners is compared. With `across_splits_only`, only
    owners whose splits are both known and differ.
    """
    index = _Index(threshold)
    for doc in docs:
        for s in _sketches(doc):
            index.add(s)
    best: dict[tuple[str, str], DuplicatePair] = {}
    for x, y in index.candidate_pairs():
        dx, dy = x.doc, y.doc
        if dx.owner == dy.owner or dx.view != dy.view:
            continue
        if across_splits_only and (None in (dx.split, dy.split) or dx.split == dy.split):
            continue
        sim = index.similarity(x, y)
        if sim is None:
            continue
        if dy.owner < dx.owner:
            dx, dy = dy, dx
        _keep_best(
            best, DuplicatePair(dx.owner, dy.owner, sim, dx.split, dy.split, _what(dx.view, x.form))
        )
    return _sorted(best.values())


# ---- tasks ----------------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    """A file's text (up to MAX_FILE_BYTES), or None when it looks binary."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES)
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _tree_text(base: Path | None) -> list[str]:
    if base is None:
        return []
    out = []
    for _, path in iter_files(base):
        text = _read_text(path)
        if text is not None:
            out.append(text)
    return out


def task_documents(task: Task) -> list[Document]:
    """The texts that stand for a task: its `task` and `problem` views (see the module doc)."""
    split = str(task.split)
    whole = [
        task.instruction,
        *_tree_text(task.workspace_dir),
        *_tree_text(task.visible_tests_dir),
        *_tree_text(task.tests_dir),
    ]
    solution = read_tree(task.solution_dir)
    problem = [task.instruction] + [
        data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        for data in solution.values()
        if b"\0" not in data[:8192]
    ]
    return [
        Document(task.id, "\n".join(whole), "task", split),
        Document(task.id, "\n".join(problem), "problem", split),
    ]


def find_near_duplicates(
    tasks: Sequence[Task],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    across_splits_only: bool = False,
) -> list[DuplicatePair]:
    """Pairs of tasks whose `task` or `problem` texts reach `threshold`, most similar first.

    `across_splits_only`: only train/eval pairs (an eval task leaked into training).
    """
    docs = [d for t in tasks for d in task_documents(t)]
    return near_duplicates(docs, threshold=threshold, across_splits_only=across_splits_only)


# ---- a corpus ---------------------------------------------------------------------------------

_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _records(path: Path, name: str) -> Iterator[CorpusItem]:
    """JSONL: one item per line; its `text` field, else all of its string fields."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{path}:{line_no}: not valid JSON ({e})") from None
            if isinstance(rec, dict) and isinstance(rec.get("text"), str):
                text = rec["text"]
            else:
                text = "\n".join(_strings(rec))
            label = rec.get("id") if isinstance(rec, dict) else None
            suffix = f" ({label})" if isinstance(label, str | int) else ""
            yield CorpusItem(f"{name}:{line_no}{suffix}", text)


def load_corpus(path: Path | str) -> Iterator[CorpusItem]:
    """A corpus: a JSONL file (one item per record), a text file (one item), or a directory of
    both (items named by relative path, and `path:line` for records). Binary files are skipped.

    Raises ConfigError at once when the path does not exist; items are read as they are used.
    """
    root = Path(path).expanduser()
    if not root.exists():
        raise ConfigError(f"corpus {str(path)!r} does not exist")
    if root.is_file():
        return _corpus_file(root, root.name)
    return _corpus_dir(root)


def _corpus_dir(root: Path) -> Iterator[CorpusItem]:
    stack = [root]
    files: list[Path] = []
    while stack:
        d = stack.pop()
        for entry in sorted(d.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                if entry.name not in _SKIP_DIRS:
                    stack.append(entry)
            elif entry.is_file():
                files.append(entry)
    for f in sorted(files):
        yield from _corpus_file(f, f.relative_to(root).as_posix())


def _corpus_file(path: Path, name: str) -> Iterator[CorpusItem]:
    if path.suffix == ".jsonl":
        yield from _records(path, name)
        return
    text = _read_text(path)
    if text is not None:
        yield CorpusItem(name, text)


def find_contamination(
    tasks: Sequence[Task],
    corpus: Iterable[CorpusItem],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[DuplicatePair]:
    """(task, corpus item) pairs whose texts reach `threshold`, most similar first.

    Each item is compared with both views of every task (the best counts). The tasks are held
    in memory; the corpus is streamed, one item at a time.
    """
    index = _Index(threshold)
    for t in tasks:
        for d in task_documents(t):
            for s in _sketches(d):
                index.add(s)
    best: dict[tuple[str, str], DuplicatePair] = {}
    for item in corpus:
        for s in _sketches(Document(item.id, item.text)):
            for hit in index.query(s):
                sim = index.similarity(hit, s)
                if sim is not None:
                    d = hit.doc
                    _keep_best(
                        best,
                        DuplicatePair(d.owner, item.id, sim, d.split, None, _what(d.view, s.form)),
                    )
    return _sorted(best.values())
