"""build_index.py OUT PAGE...

Write OUT, the handbook's table of contents: one link per page, with the page's title
(its first line, 'title: TITLE'), rendered with templates/layout.html.
Appends 'index' to build.log.
"""
import html
import os
import sys

out, pages = sys.argv[1], sorted(sys.argv[2:])
items = []
for page in pages:
    with open(page, encoding="utf-8") as fh:
        title = fh.readline().rstrip("\n")[len("title: "):]
    name = os.path.splitext(os.path.basename(page))[0]
    items.append(f'<li><a href="{name}.html">{html.escape(title)}</a></li>')
with open("templates/layout.html", encoding="utf-8") as fh:
    layout = fh.read()
with open(out, "w", encoding="utf-8") as fh:
    fh.write(layout.replace("{{title}}", "Handbook").replace("{{body}}", "<ul>\n" + "\n".join(items) + "\n</ul>"))
with open("build.log", "a", encoding="utf-8") as fh:
    fh.write("index\n")
