"""Mark search terms in a text."""

from textkit.normalize import normalize
from textkit.tokenizer import tokenize


def highlight(text, terms, before="[", after="]"):
    """Return ``text`` with every word token matching one of ``terms`` wrapped in markers.

    Matching compares normalised forms (see textkit.normalize). Everything else in the
    text, whitespace included, is kept exactly as it was.
    """
    wanted = {normalize(t) for t in terms}
    pieces = []
    last = 0
    for token in tokenize(text):
        if token.kind == "word" and normalize(token.text) in wanted:
            pieces.append(text[last:token.start])
            pieces.append(before + text[token.start:token.end] + after)
            last = token.end
    pieces.append(text[last:])
    return "".join(pieces)
