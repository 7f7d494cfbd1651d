"""Tokenizer for calc expressions."""

from dataclasses import dataclass

from calc.errors import CalcError

NUMBER = "NUMBER"   # value: int or float
NAME = "NAME"       # value: str
OP = "OP"           # value: one of + - * / % ^
LPAREN = "LPAREN"   # value: "("
RPAREN = "RPAREN"   # value: ")"
COMMA = "COMMA"     # value: ","
END = "END"         # value: None; always the last token

_SINGLE = {"+": OP, "-": OP, "*": OP, "/": OP, "%": OP, "^": OP, "(": LPAREN, ")": RPAREN, ",": COMMA}


@dataclass(frozen=True)
class Token:
    kind: str
    value: object
    pos: int


def tokenize(text: str) -> list[Token]:
    """Split text into tokens; the list always ends with an END token."""
    tokens = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _SINGLE:
            tokens.append(Token(_SINGLE[ch], ch, i))
            i += 1
        elif ch.isascii() and (ch.isdigit() or ch == "."):
            start = i
            while i < n and text[i].isascii() and (text[i].isdigit() or text[i] == "."):
                i += 1
            literal = text[start:i]
            if literal.count(".") > 1 or literal == ".":
                raise CalcError(f"bad number {literal!r}", start)
            tokens.append(Token(NUMBER, float(literal) if "." in literal else int(literal), start))
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            start = i
            while i < n and text[i].isascii() and (text[i].isalnum() or text[i] == "_"):
                i += 1
            tokens.append(Token(NAME, text[start:i], start))
        else:
            raise CalcError(f"unexpected character {ch!r}", i)
    tokens.append(Token(END, None, n))
    return tokens
