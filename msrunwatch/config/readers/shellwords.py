"""Lex bash text into commands of words, keeping the line and column of every piece.

Nothing is executed. The lexer knows bash's quoting (single, double, backslash,
`\\`-newline continuation), comments, operators (`;`, `&&`, `||`, `|`, `&`, parentheses),
redirections (dropped, here-document bodies skipped) and the `$` forms: `$VAR`, `${VAR}`,
`${VAR:-default}` and friends, `$((arithmetic))`. Forms it does not evaluate (command
substitution, arrays, positional parameters, pattern operations) become `Opaque` parts
that say why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
META = " \t\n;&|()<>"
SPECIAL_PARAMS = "@*#?$!-0123456789"
PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")
REDIRECTIONS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", "<", ">")
SUBST = "is a command substitution: its output is known only when the script runs"


class ShellSyntaxError(Exception):
    """Text bash itself could not parse; `line` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class Lit:
    """Literal text on one line; `quoted` text is never split into words."""

    text: str
    line: int
    col: int
    quoted: bool


@dataclass(frozen=True, slots=True)
class Param:
    """`$NAME`, `${NAME}` or `${NAME<op><arg>}`; op is '' or one of PARAM_OPS or '#'."""

    name: str
    op: str
    arg: tuple[Part, ...]
    raw: str
    line: int
    col: int
    quoted: bool


@dataclass(frozen=True, slots=True)
class Arith:
    """`$((expression))`; parts are the expression with its `$` forms."""

    parts: tuple[Part, ...]
    raw: str
    line: int
    col: int
    quoted: bool


@dataclass(frozen=True, slots=True)
class Opaque:
    """A form that is not evaluated (`$(cmd)`, arrays, `$1`...), with the reason."""

    raw: str
    reason: str
    line: int
    col: int
    quoted: bool


Part = Lit | Param | Arith | Opaque


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word as written: its parts, in order."""

    parts: tuple[Part, ...]
    line: int
    col: int

    def literal(self) -> str | None:
        """The word's text if it is one unquoted literal (a command name, a keyword)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Lit) and not self.parts[0].quoted:
            return self.parts[0].text
        return None


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command (possibly empty) and the operator that ended it."""

    words: tuple[Word, ...]
    line: int
    end: str
    """'\\n', ';', ';;', '&&', '||', '|', '&', '(', ')' or '' at the end of the text."""


def lex(text: str, line: int = 1) -> list[Command]:
    """Split bash text into simple commands."""
    return _Lexer(text, line, 1).commands()


def advance(line: int, col: int, text: str) -> tuple[int, int]:
    """The position just after text that starts at (line, col)."""
    newlines = text.count("\n")
    if newlines:
        return line + newlines, len(text) - text.rfind("\n")
    return line, col + len(text)


class _Lexer:
    def __init__(self, text: str, line: int, col: int) -> None:
        self.s = text
        self.i = 0
        self.line, self.col = line, col
        self.heredocs: list[tuple[str, bool]] = []
        self.parts: list[Part] = []
        self._buf: list[str] = []
        self._buf_at = (0, 0, False)
        self._buf_end = (0, 0)

    # -- characters ------------------------------------------------------------------------

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take(self) -> str:
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line, self.col = self.line + 1, 1
        else:
            self.col += 1
        return c

    def at_end(self) -> bool:
        return self.i >= len(self.s)

    # -- commands --------------------------------------------------------------------------

    def commands(self) -> list[Command]:
        out: list[Command] = []
        words: list[Word] = []
        start = self.line

        def end(op: str) -> None:
            nonlocal words
            out.append(Command(tuple(words), start, op))
            words = []

        while not self.at_end():
            c = self.peek()
            if c in " \t":
                self.take()
            elif c == "\\" and self.peek(1) == "\n":
                self.take()
                self.take()
            elif c == "\n":
                self.take()
                end("\n")
                self._skip_heredocs()
            elif c == "#":
                while not self.at_end() and self.peek() != "\n":
                    self.take()
            elif c in "<>" or (c == "&" and self.peek(1) == ">"):
                self._redirection()
            elif c in ";&|()":
                if not words:
                    start = self.line
                end(self._operator())
            else:
                if not words:
                    start = self.line
                word = self._word()
                lit = word.literal()
                if self.peek() in ("<", ">") and lit is not None and lit.isdigit():
                    continue  # an io number: `2>&1`
                words.append(word)
        if words:
            end("")
        return out

    def _operator(self) -> str:
        c = self.take()
        nxt = self.peek()
        if c == ";":
            if nxt in (";", "&"):
                self.take()
                if nxt == ";" and self.peek() == "&":
                    self.take()
                return ";;"
            return ";"
        if c == "&":
            if nxt == "&":
                self.take()
                return "&&"
            return "&"
        if c == "|":
            if nxt == "|":
                self.take()
                return "||"
            if nxt == "&":
                self.take()
            return "|"
        return c  # ( or )

    def _redirection(self) -> None:
        line = self.line
        op = next(o for o in REDIRECTIONS if self.s.startswith(o, self.i))
        for _ in op:
            self.take()
        if op in ("<", ">") and self.peek() == "(":
            self.take()
            self._balanced("(", ")", line)  # a process substitution
            return
        while self.peek() in (" ", "\t"):
            self.take()
        if self.at_end() or self.peek() in "\n;&|()<>":
            raise ShellSyntaxError(f"syntax error: nothing after the redirection {op!r}", line)
        target = self._word()
        if op in ("<<", "<<-"):
            delimiter = "".join(p.text for p in target.parts if isinstance(p, Lit))
            self.heredocs.append((delimiter, op == "<<-"))

    def _skip_heredocs(self) -> None:
        for delimiter, strip_tabs in self.heredocs:
            while not self.at_end():
                start = self.i
                while not self.at_end() and self.peek() != "\n":
                    self.take()
                body = self.s[start : self.i]
                if not self.at_end():
                    self.take()
                if (body.lstrip("\t") if strip_tabs else body) == delimiter:
                    break
        self.heredocs.clear()

    # -- words -----------------------------------------------------------------------------

    def _word(self) -> Word:
        line, col = self.line, self.col
        self.parts = []
        while not self.at_end():
            c = self.peek()
            if c == "(" and self._array_assignment():
                self._flush()
                at = (self.line, self.col)
                self.take()
                raw = "(" + self._after_open("(", ")", at[0]) + ")"
                reason = f"`{_short(raw)}` is an array: arrays are not evaluated"
                self.parts.append(Opaque(raw, reason, *at, False))
                continue
            if c in META:
                break
            self._piece(quoted=False)
        self._flush()
        return Word(tuple(self.parts), line, col)

    def _array_assignment(self) -> bool:
        if self.parts or not self._buf or self._buf_at[2]:
            return False
        return ASSIGNMENT.fullmatch("".join(self._buf)) is not None

    def _piece(self, quoted: bool) -> None:
        """Lex one character, or one quoted, `$` or backquoted form."""
        c = self.peek()
        if c == "\\":
            self._backslash()
        elif c == "'":
            self._single_quoted()
        elif c == '"':
            self._double_quoted()
        elif c == "$":
            self._dollar(quoted)
        elif c == "`":
            self._backtick(quoted)
        else:
            self._take_lit(quoted)

    def _take_lit(self, quoted: bool) -> None:
        """Take one character as literal text, keeping its position."""
        line, col = self.line, self.col
        self._add(self.take(), line, col, quoted)

    def _add(self, ch: str, line: int, col: int, quoted: bool) -> None:
        """Add a character written at (line, col); a piece never spans a line or a gap."""
        if self._buf and self._buf_at[2] == quoted and self._buf_end == (line, col):
            self._buf.append(ch)
        else:
            self._flush()
            self._buf = [ch]
            self._buf_at = (line, col, quoted)
        self._buf_end = (-1, -1) if ch == "\n" else (line, col + len(ch))

    def _flush(self) -> None:
        if self._buf:
            line, col, quoted = self._buf_at
            self.parts.append(Lit("".join(self._buf), line, col, quoted))
            self._buf = []

    def _backslash(self) -> None:
        line, col = self.line, self.col
        self.take()
        if self.at_end():
            self._add("\\", line, col, False)
        elif self.peek() == "\n":
            self.take()  # a continuation
        else:
            self._take_lit(True)

    def _empty_quotes(self, line: int, col: int) -> None:
        self._flush()
        self.parts.append(Lit("", line, col, True))

    def _single_quoted(self) -> None:
        line, col = self.line, self.col
        self.take()
        if self.peek() == "'":
            self.take()
            self._empty_quotes(line, col)
            return
        while True:
            if self.at_end():
                raise ShellSyntaxError("unexpected end of file: unterminated single quote", line)
            if self.peek() == "'":
                self.take()
                return
            self._take_lit(True)

    def _double_quoted(self) -> None:
        line, col = self.line, self.col
        self.take()
        if self.peek() == '"':
            self.take()
            self._empty_quotes(line, col)
            return
        while True:
            if self.at_end():
                raise ShellSyntaxError("unexpected end of file: unterminated double quote", line)
            c = self.peek()
            if c == '"':
                self.take()
                return
            if c == "\\" and self.peek(1) == "\n":
                self.take()
                self.take()
            elif c == "\\" and self.peek(1) != "" and self.peek(1) in '$`"\\':
                self.take()
                self._take_lit(True)
            elif c == "$":
                self._dollar(True)
            elif c == "`":
                self._backtick(True)
            else:
                self._take_lit(True)

    # -- $ forms ---------------------------------------------------------------------------

    def _dollar(self, quoted: bool) -> None:
        line, col = self.line, self.col
        self.take()
        c = self.peek()
        if self.s.startswith("((", self.i):
            self.take()
            self.take()
            inner_at = (self.line, self.col)
            inner = self._arith_body(line)
            part: Part = Arith(tuple(_sublex(inner, *inner_at)), f"$(({inner}))", line, col, quoted)
        elif c == "(":
            self.take()
            raw = "$(" + self._after_open("(", ")", line) + ")"
            part = Opaque(raw, f"`{_short(raw)}` {SUBST}", line, col, quoted)
        elif c == "{":
            self.take()
            inner_at = (self.line, self.col)
            inner = self._after_open("{", "}", line)
            part = _param(inner, line, col, inner_at, quoted)
        elif c == "'" and not quoted:
            self._single_quoted()  # $'...': escapes are kept as written
            return
        elif c == '"' and not quoted:
            self._double_quoted()
            return
        elif m := NAME.match(self.s, self.i):
            for _ in m.group():
                self.take()
            part = Param(m.group(), "", (), "$" + m.group(), line, col, quoted)
        elif c and c in SPECIAL_PARAMS:
            self.take()
            part = Opaque("$" + c, _special_reason(c), line, col, quoted)
        else:
            self._add("$", line, col, quoted)
            return
        self._flush()
        self.parts.append(part)

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
        self.parts.append(Opaque(raw, f"`{_short(raw)}` (backquotes) {SUBST}", line, col, quoted))

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

    def _after_open(self, open_: str, close: str, line: int) -> str:
        """The text up to the matching close (the opener is already taken); skips the close."""
        start = self.i
        self._balanced(open_, close, line)
        return self.s[start : self.i - 1]

    def _balanced(self, open_: str, close: str, line: int) -> None:
        depth = 1
        while True:
            if self.at_end():
                raise ShellSyntaxError(f"unexpected end of file: unterminated {open_}", line)
            c = self.take()
            if c == "\\" and not self.at_end():
                self.take()
            elif c == "'" and open_ != "{":
                while not self.at_end() and self.take() != "'":
                    pass
            elif c == '"':
                while not self.at_end():
                    d = self.take()
                    if d == "\\" and not self.at_end():
                        self.take()
                    elif d == '"':
                        break
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return


def _short(raw: str) -> str:
    flat = " ".join(raw.split())
    return flat if len(flat) <= 40 else flat[:37] + "..."


def _special_reason(c: str) -> str:
    if c.isdigit() or c in "@*#":
        return f"${c} is a positional parameter: it is set when the script runs"
    return f"${c} is a special parameter: it is set when the script runs"


def _param(inner: str, line: int, col: int, inner_at: tuple[int, int], quoted: bool) -> Part:
    raw = "${" + inner + "}"
    if inner.startswith("#") and len(inner) > 1:
        if NAME.fullmatch(inner[1:]):
            return Param(inner[1:], "#", (), raw, line, col, quoted)
        what = "an array's length" if "[" in inner else "a length"
        return Opaque(raw, f"`{raw}` is {what}: not evaluated", line, col, quoted)
    m = NAME.match(inner)
    if not m:
        if inner and inner[0] in SPECIAL_PARAMS:
            return Opaque(raw, _special_reason(inner[0]), line, col, quoted)
        if inner.startswith("!"):
            return Opaque(
                raw, f"`{raw}` is an indirect expansion, not evaluated", line, col, quoted
            )
        raise ShellSyntaxError(f"{raw}: bad substitution", line)
    name, rest = m.group(), inner[m.end() :]
    if not rest:
        return Param(name, "", (), raw, line, col, quoted)
    if rest.startswith("["):
        return Opaque(raw, f"`{raw}` reads an array: arrays are not evaluated", line, col, quoted)
    for op in PARAM_OPS:
        if rest.startswith(op):
            arg_at = advance(*inner_at, inner[: m.end() + len(op)])
            arg = _sublex(rest[len(op) :], *arg_at)
            return Param(name, op, tuple(arg), raw, line, col, quoted)
    reason = f"`{_short(raw)}` is a pattern or substring operation, not evaluated"
    return Opaque(raw, reason, line, col, quoted)


def _sublex(text: str, line: int, col: int) -> list[Part]:
    """Parts of text where blanks are literal (an arithmetic body, a `${X:-default}` word)."""
    lexer = _Lexer(text, line, col)
    while not lexer.at_end():
        if lexer.peek() in "\\'\"$`":
            lexer._piece(quoted=True)
        else:
            lexer._take_lit(True)
    lexer._flush()
    return lexer.parts
