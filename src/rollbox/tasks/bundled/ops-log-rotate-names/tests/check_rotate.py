"""Hidden check for rotate_logs.sh: ages from names, hyphenated services, MIN_KEEP, -n."""
import datetime as dt
import gzip
import os
import re
import subprocess
import sys
import tempfile

PAT = re.compile(r"^(.+)-(\d{4}-\d{2}-\d{2})\.log(\.gz)?$")


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def expected_actions(names, today, retain, keep):
    today = dt.date.fromisoformat(today)
    groups = {}
    for n in names:
        m = PAT.match(n)
        if m:
            groups.setdefault(m.group(1), []).append((m.group(2), n))
    deletes, compresses = [], []
    for svc, items in groups.items():
        items.sort(reverse=True)
        for rank, (d, n) in enumerate(items):
            age = (today - dt.date.fromisoformat(d)).days
            if rank >= keep and age > retain:
                deletes.append(n)
            elif n.endswith(".log") and age > 0:
                compresses.append(n)
    key = lambda s: s.encode()
    return ([f"delete {n}" for n in sorted(deletes, key=key)]
            + [f"compress {n}" for n in sorted(compresses, key=key)])


def scenario(script, names, today, env_extra):
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "log dir")
        os.makedirs(logdir)
        os.makedirs(os.path.join(logdir, "old-2000-01-01.log"))  # a directory: not a log file
        contents = {}
        # modification times run opposite to the dates in the names
        for i, n in enumerate(sorted(names)):
            data = f"{n}: payload {i}\n".encode() * (i + 1)
            contents[n] = data
            path = os.path.join(logdir, n)
            with open(path, "wb") as fh:
                fh.write(gzip.compress(data, mtime=0) if n.endswith(".gz") else data)
            os.utime(path, (2_000_000_000 - i * 86400, 2_000_000_000 - i * 86400))
        env = dict(os.environ, **env_extra)
        retain = int(env_extra.get("RETAIN_DAYS", 14))
        keep = int(env_extra.get("MIN_KEEP", 3))
        want = expected_actions(names, today, retain, keep)
        before = sorted(os.listdir(logdir))
        r = subprocess.run(["bash", script, "-n", logdir, today], capture_output=True, text=True,
                           env=env, timeout=30)
        if r.returncode != 0:
            fail(f"-n run exited {r.returncode}: {r.stderr.strip()}")
        if r.stdout.splitlines() != want:
            fail(f"today={today} {env_extra}: dry-run output\n{r.stdout}\nexpected\n"
                 + "\n".join(want))
        if sorted(os.listdir(logdir)) != before:
            fail("-n changed the directory")
        r = subprocess.run(["bash", script, logdir, today], capture_output=True, text=True,
                           env=env, timeout=30)
        if r.returncode != 0:
            fail(f"run exited {r.returncode}: {r.stderr.strip()}")
        if r.stdout.splitlines() != want:
            fail(f"today={today}: real run output differs from the expected actions")
        final = set(names)
        for line in want:
            kind, n = line.split(" ", 1)
            final.discard(n)
            if kind == "compress":
                final.add(n + ".gz")
        final.add("old-2000-01-01.log")
        if set(os.listdir(logdir)) != final:
            fail(f"directory after rotation: {sorted(os.listdir(logdir))}, expected {sorted(final)}")
        for n in final:
            path = os.path.join(logdir, n)
            if os.path.isdir(path):
                continue
            with open(path, "rb") as fh:
                raw = fh.read()
            orig = n[:-3] if (n.endswith(".gz") and n[:-3] in contents) else n
            data = gzip.decompress(raw) if n.endswith(".gz") else raw
            if data != contents[orig]:
                fail(f"content of {n} changed")


def main():
    script = os.path.abspath("rotate_logs.sh")
    names1 = [
        "api-2023-11-05.log", "api-2023-11-04.log", "api-2023-11-01.log",
        "api-2023-10-22.log.gz", "api-2023-10-21.log.gz", "api-2023-10-10.log",
        "api-gateway-2023-10-01.log", "api-gateway-2023-09-30.log",
        "api-gateway-2023-09-29.log.gz", "api-gateway-2023-09-28.log",
        "db-2023-01-01.log.gz", "db-2022-12-31.log",
        "payment-gateway-eu-2023-11-05.log.gz", "payment-gateway-eu-2023-10-31.log",
        "notes.txt", "api.log", "api-2023-11-01.log.1", "cron-latest.log",
        "x-2023-11-01.log.bak", "README",
    ]
    scenario(script, names1, "2023-11-05", {})
    names2 = [
        "edge-2024-03-01.log", "edge-2024-02-29.log", "edge-2024-02-15.log",
        "edge-2024-01-31.log.gz", "edge-2024-01-30.log", "edge-proxy-2024-02-28.log",
        "edge-proxy-2023-12-31.log.gz", "worker-2024-01-01.log",
    ]
    scenario(script, names2, "2024-03-01", {"RETAIN_DAYS": "30", "MIN_KEEP": "1"})
    # nothing to do: empty output, success
    scenario(script, ["misc.txt"], "2024-03-01", {})
    print("OK")


if __name__ == "__main__":
    main()
