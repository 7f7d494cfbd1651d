"""Hidden check for build_bundle.sh on a different project: layout, manifest, reproducibility."""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

NAME, PKG = "edge-probe", "edge_probe"
SOURCES = {
    "src/main.py": "#!/usr/bin/env python3\nprint('edge-probe')\n",
    f"src/{PKG}/__init__.py": "VERSION = 'dev'\n",
    f"src/{PKG}/core.py": "def run():\n    return 42\n",
    f"src/{PKG}/collectors/__init__.py": "",
    f"src/{PKG}/collectors/disk.py": "def usage():\n    return {}\n",
    f"src/{PKG}/collectors/net/__init__.py": "",
    f"src/{PKG}/collectors/net/tcp.py": "PORTS = [80, 443]\n",
    f"src/{PKG}/collectors/net/tests/test_tcp.py": "def test_x():\n    pass\n",
    f"src/{PKG}/tests/test_core.py": "def test_run():\n    pass\n",
    f"src/{PKG}/tests/fixtures/data.py": "X = 1\n",
    f"src/{PKG}/__pycache__/core.cpython-311.pyc": "\x00binary",
    f"src/{PKG}/collectors/__pycache__/disk.cpython-311.pyc": "\x00binary",
    f"src/{PKG}/schema.json": "{}\n",
    f"src/{PKG}/NOTES.txt": "not shipped\n",
    "conf/agent.ini.example": "[agent]\ninterval_s = 30\ntargets = a, b\n",
    "README.md": "# edge-probe\n\nProbes the edge.\n",
    "tests/test_outside.py": "not shipped\n",
}


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def expected_files(sources):
    files = {
        f"bin/{NAME}": sources["src/main.py"],
        "etc/agent.ini": sources["conf/agent.ini.example"],
        "share/doc/README.md": sources["README.md"],
    }
    prefix = f"src/{PKG}/"
    for path, text in sources.items():
        if not path.startswith(prefix) or not path.endswith(".py"):
            continue
        parts = path[len(prefix):].split("/")
        if "tests" in parts[:-1] or "__pycache__" in parts[:-1]:
            continue
        files[f"lib/{PKG}/" + "/".join(parts)] = text
    lines = []
    for path in sorted(files, key=lambda p: p.encode()):
        lines.append(f"{hashlib.sha256(files[path].encode()).hexdigest()}  {path}\n")
    files["MANIFEST.sha256"] = "".join(lines)
    return files


def build(root, umask="022"):
    r = subprocess.run(["bash", "-c", f"umask {umask}; bash build_bundle.sh"], cwd=root,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        fail(f"build_bundle.sh failed (umask {umask}): {r.stderr.strip()}")
    path = os.path.join(root, "dist", f"{NAME}.tar.gz")
    if not os.path.isfile(path):
        fail(f"dist/{NAME}.tar.gz was not created")
    with open(path, "rb") as fh:
        return fh.read()


def check_archive(data, sources, what):
    want = expected_files(sources)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
        got = {}
        for m in members:
            name = m.name[2:] if m.name.startswith("./") else m.name
            if name.rstrip("/") != NAME and not name.startswith(NAME + "/"):
                fail(f"{what}: entry {m.name!r} is not under the top-level directory {NAME}/")
            if m.uid != 0 or m.gid != 0:
                fail(f"{what}: {m.name} is not owned by 0:0")
            if m.mtime != 0:
                fail(f"{what}: {m.name} has mtime {m.mtime}, expected 0")
            if m.isdir():
                if m.mode & 0o7777 != 0o755:
                    fail(f"{what}: directory {m.name} has mode {oct(m.mode)}")
                continue
            if not m.isfile():
                fail(f"{what}: {m.name} is not a regular file or directory")
            rel = name[len(NAME) + 1:]
            got[rel] = tar.extractfile(m).read().decode()
            mode = 0o755 if rel == f"bin/{NAME}" else 0o644
            if m.mode & 0o7777 != mode:
                fail(f"{what}: {m.name} has mode {oct(m.mode & 0o7777)}, expected {oct(mode)}")
        siblings = {}
        for m in members:
            parent, _, base = m.name.rstrip("/").rpartition("/")
            siblings.setdefault(parent, []).append(base.encode())
        for parent, bases in siblings.items():
            if bases != sorted(bases):
                fail(f"{what}: entries of {parent or '.'}/ are not stored sorted by name")
    if sorted(got) != sorted(want):
        fail(f"{what}: files in the archive\n  {sorted(got)}\nexpected\n  {sorted(want)}")
    for rel, text in want.items():
        if got[rel] != text:
            fail(f"{what}: content of {NAME}/{rel} is wrong:\n{got[rel]!r}\nexpected\n{text!r}")
    if data[3] & 0x08 or int.from_bytes(data[4:8], "little") != 0:
        fail(f"{what}: the gzip header stores a file name or a timestamp")


def main():
    ws = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "proj")
        os.makedirs(root)
        shutil.copy(os.path.join(ws, "build_bundle.sh"), root)
        with open(os.path.join(root, "bundle.conf"), "w") as fh:
            fh.write(f"name={NAME}\npackage={PKG}\n")
        sources = dict(SOURCES)
        for path, text in sources.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as fh:
                fh.write(text)
        os.chmod(os.path.join(root, "src/main.py"), 0o644)
        # leftovers of an older build must not be shipped
        stale = os.path.join(root, "build", NAME, "lib", PKG, "removed.py")
        os.makedirs(os.path.dirname(stale))
        with open(stale, "w") as fh:
            fh.write("stale\n")

        first = build(root)
        check_archive(first, sources, "first build")

        # same contents, other mtimes and umask: identical bytes
        for d, _, files in os.walk(os.path.join(root, "src")):
            for i, f in enumerate(sorted(files)):
                os.utime(os.path.join(d, f), (1_500_000_000 + i, 1_500_000_000 + i))
        second = build(root, umask="077")
        if second != first:
            fail("rebuilding with other mtimes / umask 077 gave a different archive")

        # a module removed from the sources disappears from the bundle
        os.remove(os.path.join(root, f"src/{PKG}/collectors/disk.py"))
        del sources[f"src/{PKG}/collectors/disk.py"]
        third = build(root)
        check_archive(third, sources, "build after removing a module")
    print("OK")


if __name__ == "__main__":
    main()
