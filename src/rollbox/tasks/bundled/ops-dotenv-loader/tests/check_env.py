"""Hidden check for lib/env.sh load_env: quoting, comments, escapes, CRLF, no execution."""
import json
import os
import subprocess
import sys
import tempfile

GOOD = (
    "# leading comment\n"
    "   # indented comment\n"
    "\n"
    "export APP_NAME=billing\n"
    "DB_URL=postgres://u:p%40ss@db:5432/app?sslmode=require&x=1\n"
    'GREETING="hello   world"   # spaces inside quotes are kept\n'
    "PATTERN='*.log [ab]?'\n"
    "LITERAL='$HOME `touch MARK1` $(touch MARK2)'\n"
    'DQ="say \\"hi\\"\\nsecond line \\\\ end # not a comment"\n'
    "HASH_IN_VALUE=abc#def\n"
    "SPACED=   trimmed   value    # trailing comment\n"
    "EMPTY=\n"
    'EMPTY_QUOTED=""\n'
    "EQUALS=a=b==c\n"
    "line=shadow-1\n"
    "key=shadow-2\n"
    "value=shadow-3\n"
    "  INDENTED=yes  \n"
    "WIN=crlf\r\n"
    "UNQ_DOLLAR=$(touch MARK3)\n"
    "LAST=no newline at end"
)
EXPECTED = {
    "APP_NAME": "billing",
    "DB_URL": "postgres://u:p%40ss@db:5432/app?sslmode=require&x=1",
    "GREETING": "hello   world",
    "PATTERN": "*.log [ab]?",
    "LITERAL": "$HOME `touch MARK1` $(touch MARK2)",
    "DQ": 'say "hi"\nsecond line \\ end # not a comment',
    "HASH_IN_VALUE": "abc#def",
    "SPACED": "trimmed   value",
    "EMPTY": "",
    "EMPTY_QUOTED": "",
    "EQUALS": "a=b==c",
    "line": "shadow-1",
    "key": "shadow-2",
    "value": "shadow-3",
    "INDENTED": "yes",
    "WIN": "crlf",
    "UNQ_DOLLAR": "$(touch MARK3)",
    "LAST": "no newline at end",
}
BAD = {
    "no-equals": "GOOD=1\nJUST_A_WORD\n",
    "bad-key": "1BAD=x\n",
    "dash-key": "MY-KEY=x\n",
    "unterminated": 'OPEN="never closed\n',
    "garbage-after-quote": "Q='abc' def\n",
}
PROBE = ('. lib/env.sh; load_env "$1" || exit 7; '
         'python3 -c "import json,os,sys; print(json.dumps({k: os.environ.get(k) '
         'for k in sys.argv[1:]}))" "${@:2}"')


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def load(tmp, text, keys):
    path = os.path.join(tmp, "test file.env")
    with open(path, "w", newline="") as fh:
        fh.write(text)
    return subprocess.run(["bash", "-c", PROBE, "probe", path, *keys], cwd=tmp,
                          capture_output=True, text=True, timeout=20,
                          env=dict(os.environ, PYTHONPATH=""))


def main():
    ws = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.join(ws, "lib"), os.path.join(tmp, "lib"))
        for name in ("a.log", "b.log", "x1"):
            open(os.path.join(tmp, name), "w").close()
        r = load(tmp, GOOD, list(EXPECTED))
        if r.returncode != 0:
            fail(f"load_env failed on a valid file (exit {r.returncode}): {r.stderr.strip()}")
        got = json.loads(r.stdout)
        for k, v in EXPECTED.items():
            if got.get(k) != v:
                fail(f"{k}: got {got.get(k)!r}, expected {v!r}")
        for mark in ("MARK1", "MARK2", "MARK3"):
            if os.path.exists(os.path.join(tmp, mark)):
                fail("load_env executed a command substitution from the file")
        for what, text in BAD.items():
            r = load(tmp, text, ["GOOD"])
            if r.returncode != 7:
                fail(f"{what}: load_env must return non-zero on an invalid line")
            if "test file.env" not in r.stderr:
                fail(f"{what}: the error message must name the file")
        r = load(tmp, "A=1\nB=2\nC=oops 'x\n\n!!!\n", ["A"])
        if r.returncode != 7 or ":5:" not in r.stderr:
            fail(f"invalid line 5: expected an error mentioning line 5, got {r.stderr.strip()!r}")
    print("OK")


if __name__ == "__main__":
    main()
