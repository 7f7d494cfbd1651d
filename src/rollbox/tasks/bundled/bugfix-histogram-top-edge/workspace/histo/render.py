"""Render a histogram as lines of text."""


def render(counts, edges, width=20, mark="#"):
    """One line per bin: ``[left, right) count bar``; the longest bar has ``width`` marks."""
    peak = max(counts) if counts else 0
    lines = []
    for i, count in enumerate(counts):
        bar = mark * (round(count * width / peak) if peak else 0)
        closing = "]" if i == len(counts) - 1 else ")"
        lines.append(f"[{edges[i]:g}, {edges[i + 1]:g}{closing} {count:>4} {bar}".rstrip())
    return "\n".join(lines)
