"""Tokenising text and highlighting search terms in it."""

from textkit.highlight import highlight
from textkit.normalize import normalize
from textkit.tokenizer import Token, tokenize

__all__ = ["Token", "highlight", "normalize", "tokenize"]
