"""Hidden check: the handbook Makefile must rebuild exactly what changed.

Works on a copy of the build files (Makefile, tools/, templates/, assets/) with its own
pages and partials. Modification times are set explicitly (no dependence on the clock):
sources at T0, build products at T1, the file under test at T2.
"""
import os
import shutil
import subprocess
import sys
import tempfile

T0, T1, T2 = 1_600_000_000, 1_600_086_400, 1_600_172_800
SOURCE_DIRS = ("pages", "partials", "templates", "assets", "tools")

PAGES = {
    "alerts": "title: Alerting\n\nAlerts route to the pager.\n@include partials/contacts.part\n",
    "backups": "title: Backups & restores\n\nNightly at 02:00.\n@include partials/legal.part\n",
    "capacity": "title: Capacity\n\nReview monthly.\n",
    "db": "title: Databases\n\nPrimary in eu-west.\n@include partials/contacts.part\n"
          "@include partials/legal.part\n",
}
PARTIALS = {
    "contacts": "Escalate via the rota.\n@include partials/rota.part\n",
    "rota": "Week 1: Ana; week 2: Bo.\n",
    "legal": "Internal use only.\n",
    "unused": "Nobody includes me.\n",
}


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


class Build:
    def __init__(self, root):
        self.root = root

    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, text):
        os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
        with open(self.path(rel), "w") as fh:
            fh.write(text)

    def normalize(self):
        """Sources at T0, everything else (products) at T1; empty build.log."""
        for d, _, files in os.walk(self.root):
            rel = os.path.relpath(d, self.root)
            top = rel.split(os.sep)[0]
            for f in files:
                p = os.path.join(d, f)
                is_src = top in SOURCE_DIRS or (rel == "." and f == "Makefile")
                os.utime(p, (T0, T0) if is_src else (T1, T1))
        open(self.path("build.log"), "w").close()
        os.utime(self.path("build.log"), (T1, T1))

    def touch(self, rel):
        os.utime(self.path(rel), (T2, T2))

    def make(self, *args):
        r = subprocess.run(["make", "-s", *args], cwd=self.root, capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            fail(f"make {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
        return r

    def rebuilt(self):
        with open(self.path("build.log")) as fh:
            return sorted(fh.read().split("\n")[:-1])

    def expect(self, what, want, *args):
        self.make(*args)
        got = self.rebuilt()
        if got != sorted(want):
            fail(f"{what}: rebuilt {got}, expected exactly {sorted(want)}")


def main():
    ws = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "handbook")
        os.makedirs(root)
        shutil.copy(os.path.join(ws, "Makefile"), root)
        for d in ("tools", "templates", "assets"):
            shutil.copytree(os.path.join(ws, d), os.path.join(root, d))
        b = Build(root)
        for name, text in PAGES.items():
            b.write(f"pages/{name}.page", text)
        for name, text in PARTIALS.items():
            b.write(f"partials/{name}.part", text)
        for name, text in PAGES.items():
            os.utime(b.path(f"pages/{name}.page"), (T0, T0))

        # 1. full parallel build from scratch
        b.make("-j4")
        all_pages = [f"page {n}" for n in PAGES]
        if b.rebuilt() != sorted(all_pages + ["index"]):
            fail(f"full build ran {b.rebuilt()}")
        for n in PAGES:
            if not os.path.isfile(b.path(f"site/{n}.html")):
                fail(f"site/{n}.html not built")
        with open(b.path("site/db.html")) as fh:
            db = fh.read()
        if "Week 1: Ana; week 2: Bo." not in db or "Internal use only." not in db:
            fail("site/db.html does not contain its (nested) partials")
        with open(b.path("site/style.css")) as fh, open(b.path("assets/style.css")) as src:
            if fh.read() != src.read():
                fail("site/style.css is not a copy of assets/style.css")

        # 2. nothing changed: nothing rebuilt
        b.normalize()
        b.expect("no change", [])

        # 3. partials: only the pages using them (directly or through another partial)
        b.normalize(); b.touch("partials/legal.part")
        b.expect("touch partials/legal.part", ["page backups", "page db"])
        b.normalize(); b.touch("partials/rota.part")
        b.expect("touch partials/rota.part (nested)", ["page alerts", "page db"])
        b.normalize(); b.touch("partials/unused.part")
        b.expect("touch an unused partial", [])

        # 4. a page source: that page and the index
        b.normalize(); b.touch("pages/capacity.page")
        b.expect("touch pages/capacity.page", ["page capacity", "index"])

        # 5. the layout: everything
        b.normalize(); b.touch("templates/layout.html")
        b.expect("touch templates/layout.html", all_pages + ["index"])

        # 6. the stylesheet: only the copy
        b.normalize()
        b.write("assets/style.css", "h1 { color: teal; }\n")
        b.touch("assets/style.css")
        b.expect("touch assets/style.css", [])
        with open(b.path("site/style.css")) as fh:
            if fh.read() != "h1 { color: teal; }\n":
                fail("site/style.css was not updated")

        # 7. a page starts including a partial: the dependency must be picked up
        b.normalize()
        b.write("pages/capacity.page", "title: Capacity\n\nReview monthly.\n"
                "@include partials/unused.part\n")
        b.touch("pages/capacity.page")
        b.expect("edit pages/capacity.page", ["page capacity", "index"])
        b.normalize(); b.touch("partials/unused.part")
        b.expect("touch a newly included partial", ["page capacity"])

        # 8. a page stops including a partial which is then deleted
        b.normalize()
        b.write("pages/backups.page", "title: Backups & restores\n\nNightly at 03:00.\n")
        b.touch("pages/backups.page")
        b.write("pages/db.page", "title: Databases\n\nPrimary in eu-west.\n"
                "@include partials/contacts.part\n")
        b.touch("pages/db.page")
        os.remove(b.path("partials/legal.part"))
        b.expect("delete partials/legal.part", ["page backups", "page db", "index"])

        # 9. a new page
        b.normalize()
        b.write("pages/zz-new.page", "title: New\n\n@include partials/rota.part\n")
        b.touch("pages/zz-new.page")
        b.expect("add pages/zz-new.page", ["page zz-new", "index"])
        with open(b.path("site/index.html")) as fh:
            if 'href="zz-new.html"' not in fh.read():
                fail("index does not list the new page")

        # 10. clean, then a serial build from scratch
        b.make("clean")
        if os.path.exists(b.path("site")):
            fail("make clean left site/ behind")
        b.make()
        if b.rebuilt() != sorted([f"page {n}" for n in PAGES] + ["page zz-new", "index"]):
            fail(f"build after clean ran {b.rebuilt()}")
        b.normalize()
        b.expect("no change after rebuild", [])
    print("OK")


if __name__ == "__main__":
    main()
