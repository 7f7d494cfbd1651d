"""Hidden check: setup_node.sh must be idempotent and switch releases cleanly."""
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def snapshot(root):
    state = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                state[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                state[rel] = ("dir",)
            else:
                with open(p, "rb") as fh:
                    state[rel] = ("file", fh.read(), os.access(p, os.X_OK))
    return state


def diff(a, b):
    keys = sorted(set(a) | set(b))
    return [k for k in keys if a.get(k) != b.get(k)]


def main():
    ws = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        proj = os.path.join(tmp, "deploy")
        os.makedirs(proj)
        shutil.copy(os.path.join(ws, "setup_node.sh"), proj)
        os.makedirs(os.path.join(proj, "payload", "bin"))
        os.makedirs(os.path.join(proj, "payload", "lib", "plugins"))
        os.makedirs(os.path.join(proj, "config"))
        app = os.path.join(proj, "payload", "bin", "app")
        with open(app, "w") as fh:
            fh.write('#!/usr/bin/env bash\nr=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)\n'
                     'echo "node $(cat "$r/VERSION") $(cat "$r/lib/plugins/name")"\n')
        os.chmod(app, 0o755)
        with open(os.path.join(proj, "payload", "lib", "plugins", "name"), "w") as fh:
            fh.write("alpha")
        with open(os.path.join(proj, "payload", "lib", "old.txt"), "w") as fh:
            fh.write("only in the first payload\n")
        with open(os.path.join(proj, "config", "app.conf.default"), "w") as fh:
            fh.write("threads = 8\n")

        prefix = os.path.join(tmp, "srv", "node")
        os.makedirs(os.path.join(prefix, "etc"))
        with open(os.path.join(prefix, "etc", "profile"), "w") as fh:
            fh.write("# site profile\nexport LANG=C.UTF-8\n")

        def setup(release):
            r = subprocess.run(["bash", os.path.join(proj, "setup_node.sh"), prefix, release],
                               capture_output=True, text=True, timeout=20)
            if r.returncode != 0:
                fail(f"setup_node.sh {release} exited {r.returncode}: {r.stderr.strip()}")
            return snapshot(prefix)

        def run_app():
            r = subprocess.run([os.path.join(prefix, "bin", "app")], capture_output=True,
                               text=True, timeout=20)
            return r.stdout.strip()

        s1 = setup("7.1.0")
        if run_app() != "node 7.1.0 alpha":
            fail(f"bin/app after the first setup printed {run_app()!r}")
        if s1.get("current") != ("link", "releases/7.1.0"):
            fail(f"current is {s1.get('current')}, expected a link to releases/7.1.0")
        if s1.get("bin/app") != ("link", "../current/bin/app"):
            fail(f"bin/app is {s1.get('bin/app')}")
        if s1.get("shared/log") != ("dir",):
            fail("shared/log/ missing")
        want_rel = {"VERSION", "bin", "bin/app", "lib", "lib/old.txt", "lib/plugins",
                    "lib/plugins/name"}
        got_rel = {k[len("releases/7.1.0/"):] for k in s1 if k.startswith("releases/7.1.0/")}
        if got_rel != want_rel:
            fail(f"releases/7.1.0 holds {sorted(got_rel)}, expected {sorted(want_rel)}")
        path_line = f'export PATH="{prefix}/bin:$PATH"'
        profile = f"# site profile\nexport LANG=C.UTF-8\n{path_line}\n".encode()
        if s1["etc/profile"][1] != profile:
            fail(f"etc/profile is {s1['etc/profile'][1]!r}")

        s2 = setup("7.1.0")
        if s2 != s1:
            fail(f"second identical run changed: {diff(s1, s2)}")

        # the admin edits the config; a new release with a changed payload
        with open(os.path.join(prefix, "shared", "config", "app.conf"), "w") as fh:
            fh.write("threads = 32  # tuned\n")
        with open(os.path.join(proj, "payload", "lib", "plugins", "name"), "w") as fh:
            fh.write("beta")
        os.remove(os.path.join(proj, "payload", "lib", "old.txt"))
        s3 = setup("7.2.0-rc1")
        if run_app() != "node 7.2.0-rc1 beta":
            fail(f"bin/app after switching printed {run_app()!r}")
        if s3.get("current") != ("link", "releases/7.2.0-rc1"):
            fail(f"current is {s3.get('current')} after switching to 7.2.0-rc1")
        if any(k.startswith("releases/7.1.0/7") or k.startswith("releases/7.2.0-rc1/p")
               or "/releases/" in k for k in s3):
            fail("a link or directory was created inside an existing one")
        if s3["shared/config/app.conf"][1] != b"threads = 32  # tuned\n":
            fail("the edited app.conf was overwritten")
        if s3["etc/profile"][1] != profile:
            fail(f"etc/profile is {s3['etc/profile'][1]!r} after the second release")
        if s3["releases.txt"][1] != b"7.1.0\n7.2.0-rc1\n":
            fail(f"releases.txt is {s3['releases.txt'][1]!r}")
        if "releases/7.2.0-rc1/lib/old.txt" in s3:
            fail("release directory is not an exact copy of payload/")
        if s3.get("releases/7.1.0/lib/old.txt") is None:
            fail("the older release was modified")
        changed = set(diff(s2, s3))
        allowed_prefixes = ("releases/7.2.0-rc1", "current", "releases.txt", "shared/config/app.conf")
        unexpected = [k for k in changed if not k.startswith(allowed_prefixes)]
        if unexpected:
            fail(f"switching release changed unrelated paths: {unexpected}")

        s4 = setup("7.2.0-rc1")
        if s4 != s3:
            fail(f"re-running 7.2.0-rc1 changed: {diff(s3, s4)}")

        # reinstalling an old release (rollback) refreshes it from the payload
        s5 = setup("7.1.0")
        if run_app() != "node 7.1.0 beta":
            fail(f"bin/app after rollback printed {run_app()!r}")
        if "releases/7.1.0/lib/old.txt" in s5:
            fail("reinstalled release still holds a file removed from payload/")
        if s5["releases.txt"][1] != b"7.1.0\n7.2.0-rc1\n":
            fail(f"releases.txt after rollback is {s5['releases.txt'][1]!r}")
        if s5["shared/config/app.conf"][1] != b"threads = 32  # tuned\n":
            fail("app.conf overwritten on rollback")
        s6 = setup("7.1.0")
        if s6 != s5:
            fail(f"re-running the rollback changed: {diff(s5, s6)}")
    print("OK")


if __name__ == "__main__":
    main()
