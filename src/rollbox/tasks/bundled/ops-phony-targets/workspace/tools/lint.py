"""Minimal linter: syntax errors and lines longer than 100 characters fail."""
import ast
import sys

status = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        ast.parse(text, path)
    except SyntaxError as exc:
        print(f"{path}:{exc.lineno}: syntax error: {exc.msg}")
        status = 1
        continue
    for no, line in enumerate(text.splitlines(), 1):
        if len(line) > 100:
            print(f"{path}:{no}: line too long ({len(line)} > 100)")
            status = 1
sys.exit(status)
