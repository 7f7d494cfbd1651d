"""Run-length encoding: "aaabcc" <-> "3a1b2c"."""

from codec.errors import CodecError

_DIGITS = "0123456789"


def encode(text: str) -> str:
    """Run-length encode text. Raises CodecError if text contains an ASCII digit."""
    parts = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _DIGITS:
            raise CodecError("cannot encode a digit", i)
        j = i
        while j < len(text) and text[j] == char:
            j += 1
        parts.append(f"{j - i}{char}")
        i = j
    return "".join(parts)


def decode(data: str) -> str:
    """Decode run-length encoded data. Raises CodecError on malformed input."""
    parts = []
    i = 0
    while i < len(data):
        start = i
        while i < len(data) and data[i] in _DIGITS:
            i += 1
        count_text = data[start:i]
        if not count_text:
            raise CodecError("missing run length", start)
        if count_text[0] == "0":
            raise CodecError("run length is zero or has a leading zero", start)
        if i == len(data):
            raise CodecError("run length without a character", start)
        parts.append(data[i] * int(count_text))
        i += 1
    return "".join(parts)
