"""Recursive-descent evaluator for calc expressions."""

from calc.errors import CalcError
from calc.tokens import COMMA, END, LPAREN, NAME, NUMBER, OP, RPAREN, Token, tokenize

# name -> (function, minimum number of arguments, maximum number or None for no limit)
FUNCTIONS = {
    "abs": (abs, 1, 1),
    "min": (min, 1, None),
    "max": (max, 1, None),
}


class _Parser:
    def __init__(self, tokens: list[Token], variables: dict):
        self.tokens = tokens
        self.i = 0
        self.variables = variables

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, kind: str) -> Token:
        if self.tok.kind != kind:
            raise CalcError(f"expected {kind}, got {self.tok.kind}", self.tok.pos)
        return self.take()

    def is_op(self, *ops: str) -> bool:
        return self.tok.kind == OP and self.tok.value in ops

    # expr := term (("+" | "-") term)*
    def expr(self):
        value = self.term()
        while self.is_op("+", "-"):
            op = self.take().value
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    # term := unary (("*" | "/" | "%") unary)*
    def term(self):
        value = self.unary()
        while self.is_op("*", "/", "%"):
            tok = self.take()
            right = self.unary()
            if right == 0:
                raise CalcError("division by zero", tok.pos)
            if tok.value == "*":
                value = value * right
            elif tok.value == "/":
                value = value / right
            else:
                value = value % right
        return value

    # unary := ("-" | "+") unary | power
    def unary(self):
        if self.is_op("-"):
            self.take()
            return -self.unary()
        if self.is_op("+"):
            self.take()
            return +self.unary()
        return self.power()

    # power := atom ("^" unary)?
    def power(self):
        base = self.atom()
        if self.is_op("^"):
            tok = self.take()
            exponent = self.unary()
            try:
                result = base**exponent
            except ZeroDivisionError:
                raise CalcError("division by zero", tok.pos) from None
            except OverflowError:
                raise CalcError("result too large", tok.pos) from None
            if isinstance(result, complex):
                raise CalcError("complex result", tok.pos)
            return result
        return base

    # atom := NUMBER | NAME | NAME "(" args ")" | "(" expr ")"
    def atom(self):
        tok = self.tok
        if tok.kind == NUMBER:
            self.take()
            return tok.value
        if tok.kind == LPAREN:
            self.take()
            value = self.expr()
            self.expect(RPAREN)
            return value
        if tok.kind == NAME:
            self.take()
            if self.tok.kind == LPAREN:
                return self.call(tok)
            if tok.value not in self.variables:
                raise CalcError(f"unknown variable {tok.value!r}", tok.pos)
            return self.variables[tok.value]
        raise CalcError(f"unexpected {tok.kind}", tok.pos)

    def call(self, name: Token):
        self.expect(LPAREN)
        args = [self.expr()]
        while self.tok.kind == COMMA:
            self.take()
            args.append(self.expr())
        self.expect(RPAREN)
        if name.value not in FUNCTIONS:
            raise CalcError(f"unknown function {name.value!r}", name.pos)
        func, lo, hi = FUNCTIONS[name.value]
        if len(args) < lo or (hi is not None and len(args) > hi):
            raise CalcError(f"wrong number of arguments for {name.value}", name.pos)
        if func in (min, max) and len(args) == 1:
            return args[0]
        return func(*args)


def evaluate(text: str, variables: dict | None = None):
    """Evaluate the arithmetic expression in text and return its value.

    Raises CalcError for any syntax or evaluation error.
    """
    parser = _Parser(tokenize(text), variables or {})
    value = parser.expr()
    parser.expect(END)
    return value
