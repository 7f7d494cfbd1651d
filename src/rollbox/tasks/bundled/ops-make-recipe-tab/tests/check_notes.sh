#!/usr/bin/env bash
# Hidden check: the Makefile must concatenate every note of SRC_DIR, in name order, into OUT.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
printf 'gamma line\n' > "$tmp/src/c.md"
printf 'alpha line\nalpha two\n' > "$tmp/src/a.md"
printf 'beta line\n' > "$tmp/src/b.md"
printf 'not a note\n' > "$tmp/src/skip.txt"
make -s SRC_DIR="$tmp/src" OUT="$tmp/out/all.txt" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "make exited non-zero"; }
[ -f "$tmp/out/all.txt" ] || fail "output file was not created"
expected=$'alpha line\nalpha two\nbeta line\ngamma line'
[ "$(cat "$tmp/out/all.txt")" = "$expected" ] || fail "wrong content: $(cat "$tmp/out/all.txt")"
# default build from the workspace notes
rm -rf build
make -s >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "default make failed"; }
[ "$(cat build/notes.txt)" = "$(cat notes/*.md)" ] || fail "default build/notes.txt is wrong"
echo OK
