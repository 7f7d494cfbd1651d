"""Hidden check for bump_version.sh: semver rules, scoped edits, validation, atomicity."""
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def setup_cfg(v, pin="0.9.10"):
    return ("[metadata]\n"
            "name = harbour-lights\n"
            f"version = {v}\n"
            "description = Release train 0r9r10 of the lights\n"
            "\n[options]\n"
            "install_requires =\n"
            f"    libbeacon=={pin}\n"
            "    libfog>=0.9.1\n"
            "\n[tool:legacy]\n"
            f"version = {pin}\n")


def init_main(v, pin="0.9.10"):
    return ('"""harbour lights."""\n'
            f'__version__ = "{v}"\n'
            f'MIN_SERVER = "{pin}"\n'
            "# protocol 0x9y10 is still spoken\n")


def init_plugins(v):
    return f'__version__ = "{v}"\n__all__ = []\n'


INIT_OTHER = "from .core import run  # no version here\n"
CHANGELOG = ("# Changelog\n\nAll notable changes.\n\n## [Unreleased]\n\n### Added\n"
             "- Fog horn support (needs libbeacon 0.9.10).\n\n"
             "## [0.9.10] - 2024-05-30\n### Fixed\n- Blink rate.\n")


def make_project(root, v, changelog=CHANGELOG, **over):
    files = {
        "VERSION": f"{v}\n",
        "setup.cfg": setup_cfg(v),
        "src/harbour_lights/__init__.py": init_main(v),
        "src/harbour_plugins/__init__.py": init_plugins(v),
        "src/harbour_other/__init__.py": INIT_OTHER,
        "CHANGELOG.md": changelog,
        "README.md": f"Install harbour-lights {v} with pip.\n",
    }
    files.update(over)
    if os.path.exists(root):
        shutil.rmtree(root)
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as fh:
            fh.write(text)
    return files


def read_all(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if f == "bump_version.sh":
                continue
            with open(p) as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def bump(root, *args):
    return subprocess.run(["bash", "bump_version.sh", *args], cwd=root, capture_output=True,
                          text=True, timeout=20)


def with_heading(changelog, v, date):
    return changelog.replace("## [Unreleased]\n", f"## [Unreleased]\n\n## [{v}] - {date}\n", 1)


def main():
    script = os.path.abspath("bump_version.sh")
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "proj")

        def install():
            shutil.copy(script, os.path.join(root, "bump_version.sh"))

        # a release sequence on one project
        make_project(root, "0.9.10")
        install()
        changelog = CHANGELOG
        current = "0.9.10"
        for part, date, new in (("patch", "2024-07-01", "0.9.11"),
                                ("minor", "2024-07-15", "0.10.0"),
                                ("major", "2024-08-01", "1.0.0"),
                                ("patch", "2024-08-02", "1.0.1")):
            r = bump(root, part, date)
            if r.returncode != 0:
                fail(f"{part} from {current}: exit {r.returncode}: {r.stderr.strip()}")
            if r.stdout.strip() != f"{current} -> {new}":
                fail(f"{part} from {current}: printed {r.stdout.strip()!r}, expected "
                     f"'{current} -> {new}'")
            changelog = with_heading(changelog, new, date)
            want = {
                "VERSION": f"{new}\n",
                "setup.cfg": setup_cfg(new),
                "src/harbour_lights/__init__.py": init_main(new),
                "src/harbour_plugins/__init__.py": init_plugins(new),
                "src/harbour_other/__init__.py": INIT_OTHER,
                "CHANGELOG.md": changelog,
                "README.md": "Install harbour-lights 0.9.10 with pip.\n",
            }
            got = read_all(root)
            for rel in sorted(set(want) | set(got)):
                if got.get(rel) != want.get(rel):
                    fail(f"{part} {current} -> {new}: {rel} is\n{got.get(rel)!r}\nexpected\n"
                         f"{want.get(rel)!r}")
            current = new

        # semver rules, including pre-releases
        cases = [
            ("2.0.0-rc.1", "patch", "2.0.0"), ("2.0.3-rc.1", "patch", "2.0.3"),
            ("2.1.0-beta.2", "minor", "2.1.0"), ("2.1.3-rc-1", "minor", "2.2.0"),
            ("3.0.0-alpha", "major", "3.0.0"), ("3.1.0-alpha", "major", "4.0.0"),
            ("3.0.2-alpha.1", "major", "4.0.0"), ("9.19.99", "patch", "9.19.100"),
            ("9.19.99", "minor", "9.20.0"), ("19.0.7", "major", "20.0.0"),
        ]
        for old, part, new in cases:
            make_project(root, old)
            install()
            r = bump(root, part, "2025-01-31")
            if r.returncode != 0:
                fail(f"{part} from {old}: exit {r.returncode}: {r.stderr.strip()}")
            got = read_all(root)
            if (got["VERSION"] != f"{new}\n" or got["setup.cfg"] != setup_cfg(new)
                    or got["src/harbour_plugins/__init__.py"] != init_plugins(new)
                    or got["src/harbour_lights/__init__.py"] != init_main(new)
                    or got["CHANGELOG.md"] != with_heading(CHANGELOG, new, "2025-01-31")):
                fail(f"{part} from {old}: expected {new}, got VERSION {got['VERSION'].strip()!r}"
                     " (or the other files differ)")

        # invalid invocations and inconsistent projects: exit code, nothing modified
        bad = [
            ("1.2.3", ["micro", "2025-01-31"], 2, {}),
            ("1.2.3", ["patch", "31.01.2025"], 2, {}),
            ("1.2.3", ["patch"], 2, {}),
            ("1.2", ["patch", "2025-01-31"], 1, {"setup.cfg": setup_cfg("1.2"),
                                                  "src/harbour_lights/__init__.py": init_main("1.2"),
                                                  "src/harbour_plugins/__init__.py": init_plugins("1.2")}),
            ("1.2.3", ["minor", "2025-01-31"], 1, {"setup.cfg": setup_cfg("1.2.2", pin="1.2.3")}),
            ("1.2.3", ["major", "2025-01-31"], 1, {"src/harbour_plugins/__init__.py": init_plugins("1.2.0")}),
            ("1.2.3", ["patch", "2025-01-31"], 1,
             {"CHANGELOG.md": "# Changelog\n\n## [1.2.3] - 2024-01-01\n- x\n"}),
            ("1.2.3", ["patch", "2025-01-31"], 1,
             {"CHANGELOG.md": CHANGELOG + "\n## [Unreleased]\n- again\n"}),
        ]
        for v, args, code, over in bad:
            files = make_project(root, v, **over)
            install()
            r = bump(root, *args)
            if r.returncode != code:
                fail(f"bump_version.sh {' '.join(args)} on {v} {sorted(over)}: exit {r.returncode},"
                     f" expected {code}")
            got = read_all(root)
            if got != files:
                changed = [k for k in files if got.get(k) != files[k]]
                fail(f"bump_version.sh {' '.join(args)} on {v} {sorted(over)} modified {changed}")
    print("OK")


if __name__ == "__main__":
    main()
