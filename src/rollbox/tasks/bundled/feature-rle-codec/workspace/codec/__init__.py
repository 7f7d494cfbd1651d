"""Tiny text codecs."""

from codec.errors import CodecError
from codec.rle import decode, encode

__all__ = ["CodecError", "decode", "encode"]
