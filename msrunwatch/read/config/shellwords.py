"""Lex bash text into commands of words, keeping the line and column of every piece.

Nothing is executed. The lexer knows bash's quoting (single, double, backslash,
`\\`-newline continuation), comments, operators (`;`, `&&`, `||`, `|`, `&`, parentheses),
redirections (dropped, here-document bodies skipped) and the `$` forms: `$VAR`, `${VAR}`,
`${VAR:-default}` and friends, `$((arithmetic))`. The parts are defined in `shellparts`,
words are lexed by `shellscan` (quoting) and `shelldollar` (`$` forms); this module
splits the text into commands and re-exports what the other readers use.
"""

from __future__ import annotations

from collections.abc import Iterator

from msrunwatch.core.errors import ShellSyntaxError
from msrunwatch.read.config.shelldollar import PARAM_OPS, SPECIAL_PARAMS, SUBST, WordLexer
from msrunwatch.read.config.shellparts import (
    ASSIGNMENT,
    NAME,
    Arith,
    ArrayLit,
    Command,
    Lit,
    Opaque,
    Param,
    Part,
    Word,
    advance,
)
from msrunwatch.read.config.shellscan import META, PLACEHOLDER

__all__ = [
    "ASSIGNMENT",
    "META",
    "NAME",
    "PARAM_OPS",
    "REDIRECTIONS",
    "SPECIAL_PARAMS",
    "SUBST",
    "Arith",
    "ArrayLit",
    "Command",
    "Lit",
    "Opaque",
    "Param",
    "Part",
    "ShellSyntaxError",
    "Word",
    "advance",
    "iter_commands",
    "lex",
]

REDIRECTIONS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", "<", ">")


def lex(text: str, line: int = 1, col: int = 1) -> list[Command]:
    """Split bash text (written from line:col) into simple commands."""
    return list(_Lexer(text, line, col).commands())


def iter_commands(text: str, line: int = 1) -> Iterator[Command]:
    """Split bash text into simple commands, lazily (ShellSyntaxError when reached)."""
    return _Lexer(text, line, 1).commands()


class _Lexer(WordLexer):
    """The word lexer plus what separates commands: blanks, operators, redirections."""

    def __init__(self, text: str, line: int, col: int) -> None:
        super().__init__(text, line, col)
        self.heredocs: list[tuple[str, bool]] = []
        self._out: list[Command] = []
        self._words: list[Word] = []
        self._start = line
        """The line of the command being lexed."""

    def commands(self) -> Iterator[Command]:
        """Every simple command, in order, as it is lexed; a trailing one ends with ''.

        Commands are handed on one by one, so reading a script holds one command's words
        at a time, not the whole script's."""
        while not self.at_end():
            self._next()
            yield from self._out
            self._out.clear()
        if self._words:
            self._end("")
        yield from self._out

    def _next(self) -> None:
        """Lex what starts at the cursor: a blank, a newline, a comment, an operator or a word."""
        c = self.peek()
        if c in " \t":
            end = self.i + 1
            while end < len(self.s) and self.s[end] in " \t":
                end += 1
            self.col += end - self.i
            self.i = end
        elif c == "\\" and self.peek(1) == "\n":
            self.take()
            self.take()
        elif c == "\n":
            self.take()
            self._end("\n")
            self._skip_heredocs()
        elif c == "#":
            end = self.s.find("\n", self.i)
            end = len(self.s) if end < 0 else end
            self.col += end - self.i
            self.i = end
        elif c == "<" and PLACEHOLDER.match(self.s, self.i):
            self._begin()
            self._next_word()
        elif c in "<>" or (c == "&" and self.peek(1) == ">"):
            self._redirection()
        elif c in ";&|()":
            self._begin()
            self._end(self._operator())
        else:
            self._begin()
            self._next_word()

    def _begin(self) -> None:
        """A command starts on this line unless it already has words."""
        if not self._words:
            self._start = self.line

    def _end(self, op: str) -> None:
        self._out.append(Command(tuple(self._words), self._start, op))
        self._words = []

    def _next_word(self) -> None:
        word = self._word()
        lit = word.literal()
        if self.peek() in ("<", ">") and lit is not None and lit.isdigit():
            return  # an io number: `2>&1`
        self._words.append(word)

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
