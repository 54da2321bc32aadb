"""Lex bash's `$` forms and backquotes into parameters, arithmetic and opaque parts.

Forms that are not evaluated (command substitution, arrays, positional parameters,
pattern operations) become `Opaque` parts that say why.
"""

from __future__ import annotations

import re

from msrunwatch.core.errors import ShellSyntaxError
from msrunwatch.read.config.shellparts import (
    NAME,
    Arith,
    Opaque,
    Param,
    Part,
    advance,
)
from msrunwatch.read.config.shellscan import Scanner, shorten

SPECIAL_PARAMS = "@*#?$!-0123456789"
INDEX = re.compile(r"\[(?:@|\*|[0-9]{1,6})\]")
"""`${NAME[@]}`, `${NAME[*]}`, `${NAME[2]}`: the array reads that are evaluated."""
PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")
SUBST = "is a command substitution: its output is known only when the script runs"


class WordLexer(Scanner):
    """The scanner with the `$` forms and backquotes: a whole word's parts."""

    def _dollar(self, quoted: bool) -> None:
        line, col = self.line, self.col
        self.take()
        c = self.peek()
        if c == "'" and not quoted:
            self._single_quoted()  # $'...': escapes are kept as written
            return
        if c == '"' and not quoted:
            self._double_quoted()
            return
        part = self._expansion(c, line, col, quoted)
        if part is None:
            self._add("$", line, col, quoted)
            return
        self._flush()
        self.parts.append(part)

    def _expansion(self, c: str, line: int, col: int, quoted: bool) -> Part | None:
        """The form after a `$` (taken, at line:col); None when the `$` is plain text."""
        if self.s.startswith("((", self.i):
            return self._arith(line, col, quoted)
        if c == "(":
            self.take()
            raw = "$(" + self._after_open("(", ")", line) + ")"
            return Opaque(raw, f"`{shorten(raw)}` {SUBST}", line, col, quoted)
        if c == "{":
            self.take()
            inner_at = (self.line, self.col)
            inner = self._after_open("{", "}", line)
            return _param(inner, line, col, inner_at, quoted)
        if m := NAME.match(self.s, self.i):
            for _ in m.group():
                self.take()
            return Param(m.group(), "", (), "$" + m.group(), line, col, quoted)
        if c and c in SPECIAL_PARAMS:
            self.take()
            return Opaque("$" + c, _special_reason(c), line, col, quoted)
        return None

    def _arith(self, line: int, col: int, quoted: bool) -> Arith:
        self.take()
        self.take()
        inner_at = (self.line, self.col)
        inner = self._arith_body(line)
        return Arith(tuple(sublex(inner, *inner_at)), f"$(({inner}))", line, col, quoted)

    def _backtick(self, quoted: bool) -> None:
        line, col = self.line, self.col
        self.take()
        out: list[str] = []
        while True:
            if self.at_end():
                raise ShellSyntaxError("unexpected end of file: unterminated backquote", line)
            c = self.take()
            if c == "\\" and not self.at_end():
                out.append(c + self.take())
                continue
            if c == "`":
                break
            out.append(c)
        raw = "`" + "".join(out) + "`"
        self._flush()
        self.parts.append(Opaque(raw, f"`{shorten(raw)}` (backquotes) {SUBST}", line, col, quoted))

    def _arith_body(self, line: int) -> str:
        start, depth = self.i, 0
        while True:
            if self.at_end():
                raise ShellSyntaxError("unexpected end of file: unterminated $((", line)
            c = self.peek()
            if c == ")" and depth == 0:
                if self.peek(1) != ")":
                    raise ShellSyntaxError("syntax error: $(( closed by a single )", line)
                body = self.s[start : self.i]
                self.take()
                self.take()
                return body
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            self.take()


def _special_reason(c: str) -> str:
    if c.isdigit() or c in "@*#":
        return f"${c} is a positional parameter: it is set when the script runs"
    return f"${c} is a special parameter: it is set when the script runs"


def _param(inner: str, line: int, col: int, inner_at: tuple[int, int], quoted: bool) -> Part:
    """`${inner}` as a Param, or an Opaque part for the forms that are not evaluated."""
    raw = "${" + inner + "}"
    if inner.startswith("#") and len(inner) > 1:
        return _length(inner[1:], raw, line, col, quoted)
    m = NAME.match(inner)
    if not m:
        return _unnamed(inner, raw, line, col, quoted)
    name, rest = m.group(), inner[m.end() :]
    if not rest:
        return Param(name, "", (), raw, line, col, quoted)
    if rest.startswith("["):
        if INDEX.fullmatch(rest):
            return Param(name, rest, (), raw, line, col, quoted)
        return Opaque(raw, f"`{raw}` reads an array this way: not evaluated", line, col, quoted)
    for op in PARAM_OPS:
        if rest.startswith(op):
            arg_at = advance(*inner_at, inner[: m.end() + len(op)])
            arg = sublex(rest[len(op) :], *arg_at)
            return Param(name, op, tuple(arg), raw, line, col, quoted)
    reason = f"`{shorten(raw)}` is a pattern or substring operation, not evaluated"
    return Opaque(raw, reason, line, col, quoted)


def _length(of: str, raw: str, line: int, col: int, quoted: bool) -> Part:
    """`${#NAME}`; the length of anything else is not evaluated."""
    if NAME.fullmatch(of):
        return Param(of, "#", (), raw, line, col, quoted)
    m = NAME.match(of)
    if m and of[m.end() :] in ("[@]", "[*]"):
        return Param(m.group(), "#[@]", (), raw, line, col, quoted)
    what = "an array's length" if "[" in of else "a length"
    return Opaque(raw, f"`{raw}` is {what}: not evaluated", line, col, quoted)


def _unnamed(inner: str, raw: str, line: int, col: int, quoted: bool) -> Part:
    """`${...}` that does not start with a name: special, indirect, or bad substitution."""
    if inner and inner[0] in SPECIAL_PARAMS:
        return Opaque(raw, _special_reason(inner[0]), line, col, quoted)
    if inner.startswith("!"):
        return Opaque(raw, f"`{raw}` is an indirect expansion, not evaluated", line, col, quoted)
    raise ShellSyntaxError(f"{raw}: bad substitution", line)


def sublex(text: str, line: int, col: int) -> list[Part]:
    """Parts of text where blanks are literal (an arithmetic body, a `${X:-default}` word)."""
    lexer = WordLexer(text, line, col)
    while not lexer.at_end():
        if lexer.peek() in "\\'\"$`":
            lexer._piece(quoted=True)
        else:
            lexer._take_lit(True)
    lexer._flush()
    return lexer.parts
