"""Text helpers for the CMS."""

MINOR_WORDS = frozenset(
    {"a", "an", "the", "and", "but", "or", "nor", "for", "of", "in", "on", "at", "to", "by"}
)


def normalize_spaces(text: str) -> str:
    """Collapse runs of whitespace into single spaces and strip the ends."""
    return " ".join(text.split())


def headline_case(title: str) -> str:
    """Return title in headline case.

    Acronyms (all-uppercase words of 2+ characters) are kept; minor words are
    lowercased except in first or last position; every other word gets its first
    character uppercased and the rest lowercased.
    """
    raise NotImplementedError
