"""Run-length encoding: "aaabcc" <-> "3a1b2c"."""

from codec.errors import CodecError


def encode(text: str) -> str:
    """Run-length encode text. Raises CodecError if text contains an ASCII digit."""
    raise NotImplementedError


def decode(data: str) -> str:
    """Decode run-length encoded data. Raises CodecError on malformed input."""
    raise NotImplementedError
