"""Recursive-descent evaluator for calc expressions."""

from calc.errors import CalcError
from calc.tokens import COMMA, END, LPAREN, NAME, NUMBER, OP, RPAREN, Token, tokenize

# name -> (function, minimum number of arguments, maximum number or None for no limit)
FUNCTIONS = {
    "abs": (abs, 1, 1),
    "min": (min, 1, None),
    "max": (max, 1, None),
}


def evaluate(text: str, variables: dict | None = None):
    """Evaluate the arithmetic expression in text and return its value.

    Raises CalcError for any syntax or evaluation error.
    """
    raise NotImplementedError
