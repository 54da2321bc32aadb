"""A tiny evaluator for bash `$((...))` integer arithmetic; nothing is `eval`ed.

Supported: decimal, octal (leading 0) and hex (0x) numbers, variable names (looked up
through a callback), parentheses, unary `+ - ! ~`, `**`, `* / %`, `+ -`, `<< >>`,
comparisons, `== !=`, `& ^ |`, `&& ||` and `c ? a : b`. Results wrap to signed 64 bits
as in bash. Assignments (`=`, `+=`, `++`) are refused: they would change a variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from msrunwatch.core.errors import ArithError

TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|[0-9]+)|([A-Za-z_][A-Za-z0-9_]*)"
    r"|(\*\*|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%()<>!~&^|?:=]))"
)
MAX_NODES = 500
MASK = (1 << 64) - 1

Lookup = Callable[[str], int]
"""Returns a variable's integer value, or raises ArithError saying why it has none."""


def _wrap(value: int) -> int:
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


def _number(text: str) -> int:
    if len(text) > 64:
        raise ArithError(f"{text[:20]}...: value too great for an integer")
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    if len(text) > 1 and text[0] == "0":
        if any(c in "89" for c in text):
            raise ArithError(f"{text}: value too great for base (bash reads a leading 0 as octal)")
        return int(text, 8)
    return int(text)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = TOKEN.match(stripped, pos)
        if not m or m.end() == pos:
            raise ArithError(
                f"syntax error in expression (error token is {stripped[pos:].strip()!r})"
            )
        out.append(m.group(m.lastindex or 0))
        pos = m.end()
    return out


BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "||": (1, lambda a, b: int(bool(a) or bool(b))),
    "&&": (2, lambda a, b: int(bool(a) and bool(b))),
    "|": (3, lambda a, b: a | b),
    "^": (4, lambda a, b: a ^ b),
    "&": (5, lambda a, b: a & b),
    "==": (6, lambda a, b: int(a == b)),
    "!=": (6, lambda a, b: int(a != b)),
    "<": (7, lambda a, b: int(a < b)),
    ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)),
    ">=": (7, lambda a, b: int(a >= b)),
    "<<": (8, lambda a, b: a << (b & 63)),
    ">>": (8, lambda a, b: a >> (b & 63)),
    "+": (9, lambda a, b: a + b),
    "-": (9, lambda a, b: a - b),
}


def _divide(op: str, a: int, b: int) -> int:
    if b == 0:
        raise ArithError("division by 0")
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # truncates toward 0, as C
    return quotient if op == "/" else a - b * quotient


def _power(a: int, b: int) -> int:
    if b < 0:
        raise ArithError("exponent less than 0")
    return _wrap(pow(a, b, 1 << 64))


class _Parser:
    def __init__(self, tokens: list[str], lookup: Lookup) -> None:
        self.tokens = tokens
        self.pos = 0
        self.lookup = lookup
        self.nodes = 0

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.pos += 1
        return token

    def expect(self, token: str) -> None:
        if self.take() != token:
            raise ArithError(f"syntax error in expression: expected {token!r}")

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek() != "?":
            return cond
        self.take()
        yes = self.ternary()
        self.expect(":")
        no = self.ternary()
        return yes if cond else no

    def binary(self, level: int) -> int:
        left = self.binary(level + 1) if level < 10 else self.unary()
        while True:
            op = self.peek()
            if level == 10 and op in ("*", "/", "%"):
                self.take()
                left = _wrap(_divide(op, left, self.unary()) if op != "*" else left * self.unary())
                continue
            if op in BINARY and BINARY[op][0] == level:
                self.take()
                right = self.binary(level + 1)
                left = _wrap(BINARY[op][1](left, right))
                continue
            return left

    def unary(self) -> int:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ArithError("expression too long")
        token = self.peek()
        if token in ("++", "--", "="):
            raise ArithError(f"{token!r} would change a variable; not evaluated")
        if token in ("+", "-", "!", "~"):
            self.take()
            value = self.unary()
            return {"+": value, "-": _wrap(-value), "!": int(not value), "~": ~value}[token]
        base = self.primary()
        if self.peek() == "**":
            self.take()
            return _power(base, self.unary())
        return base

    def primary(self) -> int:
        token = self.take()
        if token == "(":
            value = self.ternary()
            self.expect(")")
            return value
        if token[:1].isdigit():
            return _wrap(_number(token))
        if token[:1].isalpha() or token[:1] == "_":
            if self.peek() in ("=", "++", "--"):
                raise ArithError(f"assignment to {token} in an expression; not evaluated")
            return self.lookup(token)
        raise ArithError("syntax error in expression" + (f" near {token!r}" if token else ""))


def evaluate(text: str, lookup: Lookup) -> int:
    """The value of a bash arithmetic expression (`$NPUS*$NNODES` already expanded)."""
    tokens = _tokens(text)
    if not tokens:
        return 0  # bash: $(( )) is 0
    parser = _Parser(tokens, lookup)
    try:
        value = parser.ternary()
    except RecursionError:
        raise ArithError("expression nested too deeply") from None
    if parser.pos != len(tokens):
        raise ArithError(f"syntax error in expression (error token is {parser.peek()!r})")
    return value
