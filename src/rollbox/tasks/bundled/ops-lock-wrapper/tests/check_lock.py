"""Hidden check for run_locked.sh: exit codes, argument passing, lock release, signals."""
import os
import signal
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def default_signals():
    # the wrapper must start with default dispositions, even if this check was started
    # from a background job that ignores SIGINT
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run(lock, *cmd, **kw):
    return subprocess.run(["bash", os.path.abspath("run_locked.sh"), lock, "--", *cmd],
                          capture_output=True, text=True, timeout=20,
                          preexec_fn=default_signals, **kw)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        lock = os.path.join(tmp, "locks", "nightly job.lock")
        os.makedirs(os.path.dirname(lock))

        # arguments reach the command unchanged, and the lock is held while it runs
        probe = ('import json, os, sys; '
                 'print(json.dumps([sys.argv[1:], os.path.isfile(os.path.join(sys.argv[1], "pid"))]))')
        args = [lock, "two  spaces", "*", "", "--flag=a b", "$HOME"]
        r = run(lock, sys.executable, "-c", probe, *args)
        if r.returncode != 0:
            fail(f"successful command: exit {r.returncode}, stderr {r.stderr.strip()!r}")
        if r.stdout.strip() != __import__("json").dumps([args, True]):
            fail(f"command saw {r.stdout.strip()}, expected {args} and the pid file present")
        if os.path.exists(lock):
            fail("lock not released after a successful command")

        # the command's exit status is passed through, the lock released
        for code in (1, 3, 42):
            r = run(lock, "bash", "-c", f"echo partial output; exit {code}")
            if r.returncode != code:
                fail(f"command exiting {code}: wrapper exited {r.returncode}")
            if r.stdout != "partial output\n":
                fail(f"command output not passed through: {r.stdout!r}")
            if os.path.exists(lock):
                fail(f"lock not released after the command exited {code}")

        # a held lock: 75, message on stderr, command not run, lock untouched
        os.makedirs(lock)
        with open(os.path.join(lock, "pid"), "w") as fh:
            fh.write("99999\n")
        marker = os.path.join(tmp, "ran")
        r = run(lock, "touch", marker)
        if r.returncode != 75:
            fail(f"held lock: exit {r.returncode}, expected 75")
        if f"run_locked: {lock} is held" not in r.stderr or r.stdout:
            fail(f"held lock: expected the message on stderr only, got {r.stdout!r} / {r.stderr!r}")
        if os.path.exists(marker):
            fail("held lock: the command was run anyway")
        with open(os.path.join(lock, "pid")) as fh:
            if fh.read() != "99999\n":
                fail("held lock: the other holder's lock was modified")
        os.remove(os.path.join(lock, "pid"))
        os.rmdir(lock)

        # signals: the command signals the wrapper (its parent), then finishes
        for sig, code in (("TERM", 143), ("INT", 130)):
            r = run(lock, "bash", "-c", f"kill -{sig} $PPID; sleep 0.3; exit 0")
            if r.returncode != code:
                fail(f"SIG{sig}: wrapper exited {r.returncode}, expected {code}")
            if os.path.exists(lock):
                fail(f"SIG{sig}: lock not released")
    print("OK")


if __name__ == "__main__":
    main()
