"""Hidden check for backup.sh: tricky file names, a destination with spaces, exact MANIFEST."""
import os
import subprocess
import sys
import tempfile

NAMES = [
    "plain.txt",
    "my docs/q1 report.txt",
    "my docs/nested  two/deep file.csv",
    "a*b.txt",
    "a1b.txt",
    "a2b.txt",
    "-n",
    "--help.txt",
    "tab\tname.log",
    " lead and trail .txt",
    "back\\slash.txt",
    "[brackets] (v2).txt",
    "dollar $HOME.txt",
]
SKIPPED = ["my docs/draft.tmp", "cache.tmp"]


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def main():
    script = os.path.abspath("backup.sh")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "source dir")
        dest = os.path.join(tmp, "backup target", "run 1")
        for i, name in enumerate(NAMES + SKIPPED):
            path = os.path.join(src, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(f"content #{i} of {name!r}\n")
        # an empty directory must not break anything
        os.makedirs(os.path.join(src, "empty dir"), exist_ok=True)
        r = subprocess.run(["bash", script, src, dest], capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            fail(f"backup.sh exited {r.returncode}: {r.stderr.strip()}")
        manifest = os.path.join(dest, "MANIFEST")
        if not os.path.isfile(manifest):
            fail("MANIFEST missing")
        with open(manifest, "rb") as fh:
            got = fh.read().decode()
        expected = "".join(n + "\n" for n in sorted(NAMES, key=lambda s: s.encode()))
        if got != expected:
            fail(f"MANIFEST differs:\n{got!r}\nexpected\n{expected!r}")
        for i, name in enumerate(NAMES):
            path = os.path.join(dest, name)
            if not os.path.isfile(path):
                fail(f"not copied: {name!r}")
            with open(path) as fh:
                if fh.read() != f"content #{i} of {name!r}\n":
                    fail(f"wrong content in copy of {name!r}")
        found = set()
        for d, _, files in os.walk(dest):
            for f in files:
                found.add(os.path.relpath(os.path.join(d, f), dest))
        extra = found - set(NAMES) - {"MANIFEST"}
        if extra:
            fail(f"unexpected files in destination: {sorted(extra)!r}")
        # the source must be untouched
        for i, name in enumerate(NAMES + SKIPPED):
            with open(os.path.join(src, name)) as fh:
                if fh.read() != f"content #{i} of {name!r}\n":
                    fail(f"source file changed: {name!r}")
        # a missing source is an error
        r = subprocess.run(["bash", script, os.path.join(tmp, "no such dir"), dest],
                           capture_output=True, text=True, timeout=20)
        if r.returncode == 0:
            fail("missing source directory must make backup.sh fail")
    print("OK")


if __name__ == "__main__":
    main()
