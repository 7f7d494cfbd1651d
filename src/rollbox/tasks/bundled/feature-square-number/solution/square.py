"""A small numeric helper."""


def square(n):
    """Return n multiplied by itself."""
    return n * n
