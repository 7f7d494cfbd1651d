"""Normal forms used to compare words."""

import unicodedata


def normalize(word):
    """Case-folded, with accents removed and typographic apostrophes made plain."""
    word = word.replace("\u2019", "'")
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
