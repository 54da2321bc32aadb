"""Lex one bash word's characters and quoting, keeping the position of every piece.

`$` forms and backquotes are lexed by the subclass in `shelldollar`; `Scanner` only
calls them.
"""

from __future__ import annotations

import re

from msrunwatch.core.errors import ShellSyntaxError
from msrunwatch.read.config.shellparts import (
    ASSIGNMENT,
    ArrayLit,
    Lit,
    Opaque,
    Part,
    Word,
)

META = " \t\n;&|()<>"
PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`=]+")
"""A run of unquoted characters that need no lexing (`=` is left out: `NAME=(` starts an
array). Taking runs instead of characters keeps lexing a 4 MB script to seconds."""
PLACEHOLDER = re.compile(r"<[^<>\s][^<>\n]*[^<>\s]>(?=$|[\s;)'\"])|<[^<>\s]>(?=$|[\s;)'\"])")
"""`<master_ip_address>`, `<Specify path to file>`: no blank just inside the brackets and a
word end right after, so `<in >out` and `<in>out` stay redirections."""
IN_DOUBLE = re.compile(r'[^"\\$`\n]+')
IN_SINGLE = re.compile(r"[^'\n]+")


class Scanner:
    """A cursor over bash text that lexes words; `parts` holds the current word's parts."""

    def __init__(self, text: str, line: int, col: int) -> None:
        self.s = text
        self.i = 0
        self.line, self.col = line, col
        self.parts: list[Part] = []
        self._buf: list[str] = []
        self._buf_at = (0, 0, False)
        self._buf_end = (0, 0)

    # -- characters ------------------------------------------------------------------------

    def peek(self, k: int = 0) -> str:
        """The character k ahead of the cursor, or '' past the end."""
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take(self) -> str:
        """Move past one character, keeping the line and column."""
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line, self.col = self.line + 1, 1
        else:
            self.col += 1
        return c

    def at_end(self) -> bool:
        """Whether the whole text was taken."""
        return self.i >= len(self.s)

    # -- words -----------------------------------------------------------------------------

    def _word(self) -> Word:
        line, col = self.line, self.col
        self.parts = []
        while not self.at_end():
            c = self.peek()
            if c == "(" and self._array_assignment():
                self._array()
                continue
            at_start = not self.parts and not self._buf
            if c == "<" and (at_start or self._array_assignment()) and self._placeholder():
                continue
            if c in META:
                break
            if not self._take_run(PLAIN, False):
                self._piece(quoted=False)
        self._flush()
        return Word(tuple(self.parts), line, col)

    def _array_assignment(self) -> bool:
        if self.parts or not self._buf or self._buf_at[2]:
            return False
        return ASSIGNMENT.fullmatch("".join(self._buf)) is not None

    def _array(self) -> None:
        """`NAME=(...)`: the parenthesised elements, lexed into words when assigned."""
        self._flush()
        at = (self.line, self.col)
        self.take()
        inner_at = (self.line, self.col)
        inner = self._after_open("(", ")", at[0])
        self.parts.append(ArrayLit(f"({inner})", inner, *at, *inner_at))

    def _placeholder(self) -> bool:
        """`<master_ip_address>` where a word starts or after `NAME=`: a placeholder left
        for the user to fill in, not a redirection (bash would stop at it)."""
        m = PLACEHOLDER.match(self.s, self.i)
        if m is None:
            return False
        self._flush()
        raw = m.group()
        reason = f"`{shorten(raw)}` is a placeholder to fill in before the script runs"
        self.parts.append(Opaque(raw, reason, self.line, self.col, False))
        self.i = m.end()
        self.col += len(raw)
        return True

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

    def _take_run(self, pattern: re.Pattern[str], quoted: bool) -> bool:
        """Take a run of characters matching pattern (never a newline) as literal text."""
        m = pattern.match(self.s, self.i)
        if m is None:
            return False
        text = m.group()
        self._add(text, self.line, self.col, quoted)
        self.i = m.end()
        self.col += len(text)
        return True

    def _take_lit(self, quoted: bool) -> None:
        """Take one character as literal text, keeping its position."""
        line, col = self.line, self.col
        self._add(self.take(), line, col, quoted)

    def _add(self, ch: str, line: int, col: int, quoted: bool) -> None:
        """Add text written at (line, col); a piece never spans a line or a gap."""
        if self._buf and self._buf_at[2] == quoted and self._buf_end == (line, col):
            self._buf.append(ch)
        else:
            self._flush()
            self._buf = [ch]
            self._buf_at = (line, col, quoted)
        self._buf_end = (-1, -1) if ch.endswith("\n") else (line, col + len(ch))

    def _flush(self) -> None:
        if self._buf:
            line, col, quoted = self._buf_at
            self.parts.append(Lit("".join(self._buf), line, col, quoted))
            self._buf = []

    # -- quoting ---------------------------------------------------------------------------

    def _backslash(self) -> None:
        self.take()
        if self.at_end():
            return  # bash drops a backslash that ends the file (`printf %s a \` prints a)
        if self.peek() == "\n":
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
            if not self._take_run(IN_SINGLE, True):
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
            elif not self._take_run(IN_DOUBLE, True):
                self._take_lit(True)

    # -- $ forms and backquotes, lexed by a subclass ---------------------------------------

    def _dollar(self, quoted: bool) -> None:
        """Lex a `$` form (the cursor is on the `$`)."""
        raise NotImplementedError

    def _backtick(self, quoted: bool) -> None:
        """Lex a backquoted command (the cursor is on the backquote)."""
        raise NotImplementedError

    # -- balanced text ---------------------------------------------------------------------

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
                self._skip_double_quoted()
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return

    def _skip_double_quoted(self) -> None:
        """Move past the rest of a double-quoted string (its `"` is taken)."""
        while not self.at_end():
            d = self.take()
            if d == "\\" and not self.at_end():
                self.take()
            elif d == '"':
                break


def shorten(raw: str) -> str:
    """raw on one line, cut to 40 characters, for a reason text."""
    flat = " ".join(raw.split())
    return flat if len(flat) <= 40 else flat[:37] + "..."
