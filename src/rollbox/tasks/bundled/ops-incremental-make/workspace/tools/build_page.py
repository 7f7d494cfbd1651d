"""build_page.py [--deps DEPFILE] PAGE OUT

Render PAGE (pages/NAME.page) into OUT with templates/layout.html.

A page starts with a 'title: TITLE' line; the remaining lines are the body. A body line
'@include partials/X.part' is replaced by the contents of that partial; partials may
include other partials the same way.

With --deps DEPFILE, also write a make dependency file for OUT:

    OUT: PAGE PARTIAL...
    PARTIAL:
    ...

listing every partial the page uses, directly or through other partials. The empty rules
keep make working after a partial has been deleted (like gcc -MP).

Every run appends 'page NAME' to build.log (a trace of what was rebuilt).
"""
import html
import os
import sys

LAYOUT = "templates/layout.html"


def expand(path, used, stack=()):
    if path in stack:
        sys.exit(f"build_page: include cycle through {path}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh.read().splitlines():
            if line.startswith("@include "):
                inc = line.split(None, 1)[1].strip()
                if inc not in used:
                    used.append(inc)
                out.extend(expand(inc, used, stack + (path,)))
            else:
                out.append(line)
    return out


def main(argv):
    deps = None
    if argv[:1] == ["--deps"]:
        deps, argv = argv[1], argv[2:]
    if len(argv) != 2:
        sys.exit(__doc__)
    page, out = argv
    used = []
    lines = expand(page, used)
    if not lines or not lines[0].startswith("title: "):
        sys.exit(f"build_page: {page}: first line must be 'title: ...'")
    title = lines[0][len("title: "):]
    body = "\n".join(f"<p>{html.escape(x)}</p>" for x in lines[1:] if x.strip())
    with open(LAYOUT, encoding="utf-8") as fh:
        layout = fh.read()
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(layout.replace("{{title}}", html.escape(title)).replace("{{body}}", body))
    if deps:
        with open(deps, "w", encoding="utf-8") as fh:
            fh.write(f"{out}: {page} {' '.join(used)}\n")
            for inc in used:
                fh.write(f"{inc}:\n")
    name = os.path.splitext(os.path.basename(page))[0]
    with open("build.log", "a", encoding="utf-8") as fh:
        fh.write(f"page {name}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
