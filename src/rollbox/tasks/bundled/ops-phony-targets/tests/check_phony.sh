#!/usr/bin/env bash
# Hidden check: every non-file target must run even if a file/dir with its name exists.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
created=()
cleanup() {
    rm -rf "$tmp"
    for f in "${created[@]}"; do rm -rf -- "$f"; done
}
trap cleanup EXIT

# decoys with the names of the targets (test/ and docs/ are real directories already)
for f in all lint clean; do
    [ -e "$f" ] || { : > "$f"; created+=("$f"); }
done
touch -d '2001-01-01 00:00:00' test docs

# --- docs: must render every docs/*.md, including one added now
printf '# Hidden <page>\nfirst "para"\n\nsecond & last\n' > docs/zz-hidden.md
created+=(docs/zz-hidden.md)
rm -rf build
make -s docs >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "make docs failed"; }
[ -f build/docs/zz-hidden.html ] || fail "make docs did not render docs/zz-hidden.md"
expected=$'<h1>Hidden &lt;page&gt;</h1>\n<p>first &quot;para&quot;</p>\n<p>second &amp; last</p>'
[ "$(cat build/docs/zz-hidden.html)" = "$expected" ] || fail "wrong HTML for zz-hidden.md"
for md in docs/*.md; do
    [ -f "build/docs/$(basename "$md" .md).html" ] || fail "missing HTML for $md"
done
# running it again must re-render (docs is not a file target)
rm -f build/docs/index.html
make -s docs >"$tmp/out" 2>&1 || fail "second make docs failed"
[ -f build/docs/index.html ] || fail "second make docs did not run"

# --- test: a failing test must make 'make test' fail
cat > test/test_zz_hidden_fail.py <<'PY'
import unittest


class HiddenFail(unittest.TestCase):
    def test_fails(self):
        self.assertEqual(1, 2)
PY
created+=(test/test_zz_hidden_fail.py)
if make -s test >"$tmp/out" 2>&1; then fail "make test passed although a test fails (did it run?)"; fi
rm -f test/test_zz_hidden_fail.py
# a passing test must run and make 'make test' succeed
cat > test/test_zz_hidden_ok.py <<PY
import unittest


class HiddenOk(unittest.TestCase):
    def test_marker(self):
        with open("$tmp/marker", "w") as fh:
            fh.write("ran")
PY
created+=(test/test_zz_hidden_ok.py)
make -s test >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "make test failed"; }
[ -f "$tmp/marker" ] || fail "make test did not run the tests"

# --- lint: a syntax error in src must make 'make lint' fail
printf 'def broken(:\n    pass\n' > src/zz_hidden_bad.py
created+=(src/zz_hidden_bad.py)
if make -s lint >"$tmp/out" 2>&1; then fail "make lint passed on a syntax error (did it run?)"; fi
rm -f src/zz_hidden_bad.py
make -s lint >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "make lint failed on clean sources"; }

# --- clean: must remove build/ even though a file named 'clean' exists
make -s clean >"$tmp/out" 2>&1 || fail "make clean failed"
[ ! -e build ] || fail "make clean did not remove build/"

# --- all: lint, test and docs
rm -f "$tmp/marker"
make -s all >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "make all failed"; }
[ -f "$tmp/marker" ] || fail "make all did not run the tests"
[ -f build/docs/roles.html ] || fail "make all did not build the docs"
make -s clean >/dev/null 2>&1
echo OK
