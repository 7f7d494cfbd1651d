"""Unified diffs: parse them and apply them exactly (no fuzz) to a set of files.

Used for reference solutions given as `solution/solution.diff`, and later for the policy's
changes. Pure Python, so that it behaves the same on every host and never runs a program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEV_NULL = "/dev/null"


class PatchError(ValueError):
    """A diff that cannot be parsed or does not apply."""


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_lines: tuple[str, ...]  # context and removed lines, with their line endings
    new_lines: tuple[str, ...]  # context and added lines


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None  # None: a new file
    new_path: str | None  # None: a deleted file
    hunks: tuple[Hunk, ...] = field(default=())

    @property
    def path(self) -> str:
        p = self.new_path if self.new_path is not None else self.old_path
        assert p is not None
        return p


def _clean_path(raw: str, where: str) -> str | None:
    raw = raw.split("\t", 1)[0].strip()
    if raw == DEV_NULL:
        return None
    if raw.startswith(("a/", "b/")):
        raw = raw[2:]
    p = PurePosixPath(raw)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise PatchError(f"{where}: unsafe path {raw!r} in diff header")
    return str(p)


def parse(text: str) -> list[FilePatch]:
    """Parse a unified diff into per-file patches."""
    lines = text.splitlines(keepends=True)
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"line {i + 1}: '---' header without a '+++' line after it")
        old = _clean_path(lines[i][4:], f"line {i + 1}")
        new = _clean_path(lines[i + 1][4:], f"line {i + 2}")
        if old is None and new is None:
            raise PatchError(f"line {i + 1}: both sides of the diff are /dev/null")
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if not m:
                raise PatchError(f"line {i + 1}: malformed hunk header {lines[i].rstrip()!r}")
            old_count = int(m.group(2)) if m.group(2) is not None else 1
            new_count = int(m.group(4)) if m.group(4) is not None else 1
            i += 1
            old_l: list[str] = []
            new_l: list[str] = []
            while i < len(lines) and (len(old_l) < old_count or len(new_l) < new_count):
                line = lines[i]
                tag, body = line[:1], line[1:]
                if line.startswith("\\"):  # "\ No newline at end of file"
                    _strip_last_newline(old_l, new_l, lines[i - 1][:1])
                elif tag == " " or line in ("\n", "\r\n"):
                    body = body if tag == " " else line
                    old_l.append(body)
                    new_l.append(body)
                elif tag == "-":
                    old_l.append(body)
                elif tag == "+":
                    new_l.append(body)
                else:
                    raise PatchError(f"line {i + 1}: unexpected line in hunk: {line.rstrip()!r}")
                i += 1
            if i < len(lines) and lines[i].startswith("\\"):
                _strip_last_newline(old_l, new_l, lines[i - 1][:1])
                i += 1
            if len(old_l) != old_count or len(new_l) != new_count:
                raise PatchError(f"line {i}: hunk is shorter than its header says")
            hunks.append(Hunk(int(m.group(1)), tuple(old_l), tuple(new_l)))
        if not hunks and not (old is None or new is None):
            raise PatchError(f"line {i}: file header for {new!r} without any hunk")
        patches.append(FilePatch(old, new, tuple(hunks)))
    if not patches:
        raise PatchError("no file changes found (expected '--- a/path' and '+++ b/path' headers)")
    return patches


def _strip_last_newline(old_l: list[str], new_l: list[str], tag: str) -> None:
    targets = {" ": (old_l, new_l), "-": (old_l,), "+": (new_l,)}.get(tag, ())
    for lst in targets:
        if lst and lst[-1].endswith("\n"):
            lst[-1] = lst[-1][:-1]


def _apply_hunks(path: str, original: str, hunks: tuple[Hunk, ...]) -> str:
    src = original.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    for n, h in enumerate(hunks, 1):
        want = list(h.old_lines)
        start = max(h.old_start - 1, 0) if want else h.old_start
        at = _find(src, want, start, pos)
        if at is None:
            raise PatchError(f"{path}: hunk {n} (at line {h.old_start}) does not apply")
        out.extend(src[pos:at])
        out.extend(h.new_lines)
        pos = at + len(want)
    out.extend(src[pos:])
    return "".join(out)


def _find(src: list[str], want: list[str], start: int, floor: int) -> int | None:
    """Where `want` matches exactly, nearest to `start` and not before `floor`."""
    if not want:
        return min(max(start, floor), len(src))
    for delta in range(len(src) + 1):
        for at in (start - delta, start + delta) if delta else (start,):
            if floor <= at <= len(src) - len(want) and src[at : at + len(want)] == want:
                return at
    return None


def apply(files: dict[str, bytes], diff_text: str) -> dict[str, bytes | None]:
    """The changes a diff makes to `files` (path -> new bytes, or None for deleted)."""
    changes: dict[str, bytes | None] = {}
    for fp in parse(diff_text):
        if fp.old_path is None:
            if fp.new_path in files:
                raise PatchError(f"{fp.new_path}: the diff creates a file that already exists")
            changes[fp.path] = _apply_hunks(fp.path, "", fp.hunks).encode()
            continue
        if fp.old_path not in files:
            raise PatchError(f"{fp.old_path}: the diff changes a file that does not exist")
        try:
            text = files[fp.old_path].decode()
        except UnicodeDecodeError as e:
            raise PatchError(f"{fp.old_path}: not a text file") from e
        new_text = _apply_hunks(fp.old_path, text, fp.hunks)
        if fp.new_path is None:
            if new_text:
                raise PatchError(f"{fp.old_path}: the diff deletes a file it does not empty")
            changes[fp.old_path] = None
        else:
            if fp.new_path != fp.old_path:
                changes[fp.old_path] = None
            changes[fp.new_path] = new_text.encode()
    return changes
