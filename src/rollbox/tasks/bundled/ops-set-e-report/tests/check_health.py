"""Hidden check for health_report.sh: zero counts, empty files, comments, exit codes."""
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def run(args):
    return subprocess.run(["bash", os.path.abspath("health_report.sh"), *args],
                          capture_output=True, text=True, timeout=20)


def write(d, name, text):
    with open(os.path.join(d, name), "w") as fh:
        fh.write(text)


def expect(args, rc, lines, what):
    r = run(args)
    if r.returncode != rc:
        fail(f"{what}: exit status {r.returncode}, expected {rc}; stderr: {r.stderr.strip()}")
    if r.stdout.splitlines() != lines:
        fail(f"{what}: output\n{r.stdout}\nexpected\n" + "\n".join(lines))
    return r


def main():
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "mixed dir")
        os.makedirs(d)
        write(d, "search.status", "check=index result=ok\ncheck=replicas result=ok shards=4\n")
        write(d, "auth.status",
              "# result=fail here is only a comment\n\n"
              "check=tokens result=warn expiring=2\n"
              "check=ldap result=fail error=refused\n"
              "check=sessions result=ok\n"
              "check=mfa result=fail\n")
        write(d, "cache.status", "")
        write(d, "billing.status",
              "check=invoices result=warn lag=30\ncheck=ledger result=warn\n"
              "check=failover result=ok note=result=failure-drill\n")
        write(d, "notes.txt", "check=x result=fail\n")
        mixed = [
            "service=auth status=FAIL failed=2 warn=1 first=ldap",
            "service=billing status=WARN failed=0 warn=2 first=-",
            "service=cache status=OK failed=0 warn=0 first=-",
            "service=search status=OK failed=0 warn=0 first=-",
            "total failed=2 warn=3 services=4",
        ]
        expect([d], 1, mixed, "mixed directory")
        r = expect(["-v", d], 1, mixed, "mixed directory with -v")
        if "reading" not in r.stderr:
            fail("-v did not trace on stderr")

        ok = os.path.join(tmp, "ok")
        os.makedirs(ok)
        write(ok, "zeta.status", "check=ping result=ok\n")
        write(ok, "alpha.status", "check=ping result=ok\ncheck=cert result=warn days=9\n")
        expect([ok], 0, ["service=alpha status=WARN failed=0 warn=1 first=-",
                         "service=zeta status=OK failed=0 warn=0 first=-",
                         "total failed=0 warn=1 services=2"], "healthy directory")

        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        write(empty, "README", "nothing here\n")
        expect([empty], 0, ["total failed=0 warn=0 services=0"], "directory without status files")

        r = run([os.path.join(tmp, "missing")])
        if r.returncode != 2:
            fail(f"missing directory: exit status {r.returncode}, expected 2")
    print("OK")


if __name__ == "__main__":
    main()
