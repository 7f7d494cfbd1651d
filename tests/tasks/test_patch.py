"""The unified-diff applier: exact, safe, and clear when a diff does not apply."""

from __future__ import annotations

import pytest

from rollbox.tasks.patch import PatchError, apply

FILES = {"pkg/a.py": b"one\ntwo\nthree\nfour\nfive\n", "b.txt": b"x\n"}


def test_modify_with_offset_context() -> None:
    diff = "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,3 +1,3 @@\n three\n-four\n+FOUR\n five\n"
    assert apply(FILES, diff) == {"pkg/a.py": b"one\ntwo\nthree\nFOUR\nfive\n"}


def test_create_and_delete() -> None:
    diff = (
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    assert apply(FILES, diff) == {"new.py": b"hello\nworld\n", "b.txt": None}


def test_no_newline_at_end_of_file() -> None:
    diff = "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n"
    assert apply(FILES, diff) == {"b.txt": b"y"}


def test_several_hunks_in_order() -> None:
    diff = (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
        "@@ -4,2 +4,2 @@\n four\n-five\n+FIVE\n"
    )
    assert apply(FILES, diff) == {"pkg/a.py": b"ONE\ntwo\nthree\nfour\nFIVE\n"}


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        ("--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,1 +1,1 @@\n-nope\n+yes\n", "does not apply"),
        ("--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-a\n+b\n", "does not exist"),
        ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "unsafe path"),
        ("--- /dev/null\n+++ /abs/path\n@@ -0,0 +1 @@\n+a\n", "unsafe path"),
        ("just some text\n", "no file changes"),
        ("--- a/b.txt\n+++ b/b.txt\n@@ garbage @@\n", "malformed hunk"),
        ("--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n x\n", "shorter than its header"),
        ("--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+y\n", "already exists"),
    ],
)
def test_bad_diffs_are_refused_with_a_reason(diff: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        apply(FILES, diff)
