"""Hidden check: run logship with the repaired logship.ini on generated logs."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def main():
    r = subprocess.run([sys.executable, "app.py", "--check-config"], capture_output=True, text=True)
    if r.returncode != 0:
        fail("--check-config: " + r.stderr.strip())
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in")
        out = os.path.join(tmp, "out")
        os.makedirs(inp)
        files = {"b-worker.log": 700, "a-api.log": 333, "c-cron.log": 1}
        expected = []
        for name in sorted(files):
            lines = []
            for i in range(files[name]):
                level = LEVELS[(i * 7 + len(name)) % 5]
                msg = f"event {i} in {name}: 50% done  (x=y)"
                lines.append(f"2024-04-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00 {level} {msg}")
                if LEVELS.index(level) >= 2:
                    expected.append({"ts": lines[-1].split(" ")[0], "level": level, "message": msg,
                                     "tag": "payments-prod", "source": name})
            lines.append("garbage line")
            with open(os.path.join(inp, name), "w") as fh:
                fh.write("\n".join(lines) + "\n")
        with open(os.path.join(inp, "ignored.txt"), "w") as fh:
            fh.write("2024-04-01T00:00:00 ERROR not a log file\n")
        r = subprocess.run([sys.executable, "app.py", "run", inp, "--output-dir", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail("run: " + r.stderr.strip())
        batches = sorted(os.listdir(out))
        want = [f"batch-{i:04d}.jsonl" for i in range(1, (len(expected) + 249) // 250 + 1)]
        if batches != want:
            fail(f"batch files {batches} != {want}")
        got = []
        for i, name in enumerate(batches):
            with open(os.path.join(out, name)) as fh:
                recs = [json.loads(line) for line in fh]
            if i < len(batches) - 1 and len(recs) != 250:
                fail(f"{name} has {len(recs)} records, expected 250")
            got.extend(recs)
        if got != expected:
            fail("shipped records differ from expected (level filter / tag / source)")
        # the tag must follow [DEFAULT] env, and the default output dir must be out/batches
        with open("logship.ini", encoding="utf-8") as fh:
            text = fh.read()
        staged, n = re.subn(r"(?m)^env\s*[=:].*$", "env = staging", text)
        if n != 1:
            fail("expected exactly one 'env = ...' line in logship.ini")
        conf = os.path.join(tmp, "staging.ini")
        with open(conf, "w", encoding="utf-8") as fh:
            fh.write(staged)
        small = os.path.join(tmp, "small")
        os.makedirs(small)
        with open(os.path.join(small, "x.log"), "w") as fh:
            fh.write("2024-05-05T05:05:05 CRITICAL disk full\n2024-05-05T05:05:06 INFO ok\n")
        shutil.rmtree(os.path.join("out", "batches"), ignore_errors=True)
        r = subprocess.run([sys.executable, "app.py", "--config", conf, "run", small],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail("run with env = staging: " + r.stderr.strip())
        path = os.path.join("out", "batches", "batch-0001.jsonl")
        if not os.path.isfile(path):
            fail("default output directory is not out/batches")
        with open(path) as fh:
            recs = [json.loads(line) for line in fh]
        shutil.rmtree("out", ignore_errors=True)
        want = [{"ts": "2024-05-05T05:05:05", "level": "CRITICAL", "message": "disk full",
                 "tag": "payments-staging", "source": "x.log"}]
        if recs != want:
            fail(f"with env = staging got {recs!r}, expected {want!r}")
    print("OK")


if __name__ == "__main__":
    main()
