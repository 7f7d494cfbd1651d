"""List helper."""


def last(items):
    """Return the last element of the non-empty list items."""
    return items[-1]
