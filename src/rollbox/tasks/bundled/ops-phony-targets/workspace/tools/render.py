"""Render a very small markdown subset to HTML: '# ' headings and paragraphs."""
import html
import sys

src, dst = sys.argv[1], sys.argv[2]
out = []
with open(src, encoding="utf-8") as fh:
    for line in fh:
        line = line.rstrip("\n")
        if line.startswith("# "):
            out.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
with open(dst, "w", encoding="utf-8") as fh:
    fh.write("\n".join(out) + "\n")
