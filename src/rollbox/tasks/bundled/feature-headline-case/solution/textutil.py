"""Text helpers for the CMS."""

MINOR_WORDS = frozenset(
    {"a", "an", "the", "and", "but", "or", "nor", "for", "of", "in", "on", "at", "to", "by"}
)


def normalize_spaces(text: str) -> str:
    """Collapse runs of whitespace into single spaces and strip the ends."""
    return " ".join(text.split())


def _is_acronym(word: str) -> bool:
    return len(word) >= 2 and word.isalpha() and word.isupper()


def headline_case(title: str) -> str:
    """Return title in headline case.

    Acronyms (all-uppercase words of 2+ characters) are kept; minor words are
    lowercased except in first or last position; every other word gets its first
    character uppercased and the rest lowercased.
    """
    words = title.split()
    out = []
    last = len(words) - 1
    for i, word in enumerate(words):
        if _is_acronym(word):
            out.append(word)
        elif word.lower() in MINOR_WORDS and 0 < i < last:
            out.append(word.lower())
        else:
            out.append(word[:1].upper() + word[1:].lower())
    return " ".join(out)
