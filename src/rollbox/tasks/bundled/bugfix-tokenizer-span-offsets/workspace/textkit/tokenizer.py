"""Split text into word and punctuation tokens that remember where they came from."""

import re
from dataclasses import dataclass

# A word is a run of letters/digits, optionally joined by apostrophes or hyphens
# ("don't", "state-of-the-art"); any other non-space character is a token on its own.
_PIECE = re.compile(r"\w+(?:['\u2019-]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offset of the first character in the original text
    end: int    # offset just past the last character, so text == original[start:end]
    kind: str   # "word" or "punct"


def tokenize(text):
    """All tokens of ``text`` in order. Whitespace separates tokens and is not a token."""
    tokens = []
    offset = 0
    for chunk in text.split():
        for m in _PIECE.finditer(chunk):
            kind = "word" if m.group()[0].isalnum() or m.group()[0] == "_" else "punct"
            tokens.append(Token(m.group(), offset + m.start(), offset + m.end(), kind))
        offset += len(chunk) + 1
    return tokens
