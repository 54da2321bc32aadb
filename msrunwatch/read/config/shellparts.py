"""What lexed bash text is made of: parts, words and commands, each with its position."""

from __future__ import annotations

import re
from typing import Union

from msrunwatch.core.compat import dataclass

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")


@dataclass(frozen=True, slots=True)
class Lit:
    """Literal text on one line; `quoted` text is never split into words."""

    text: str
    line: int
    col: int
    quoted: bool


@dataclass(frozen=True, slots=True)
class Param:
    """`$NAME`, `${NAME}` or `${NAME<op><arg>}`; op is '' or one of PARAM_OPS, '#', or an
    array index (`[@]`, `[*]`, `[N]`)."""

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


@dataclass(frozen=True, slots=True)
class ArrayLit:
    """`NAME=(...)`: the elements' text, lexed into words when the assignment runs."""

    raw: str
    inner: str
    line: int
    col: int
    inner_line: int
    inner_col: int
    quoted: bool = False


Part = Union[Lit, Param, Arith, Opaque, ArrayLit]


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


def advance(line: int, col: int, text: str) -> tuple[int, int]:
    """The position just after text that starts at (line, col)."""
    newlines = text.count("\n")
    if newlines:
        return line + newlines, len(text) - text.rfind("\n")
    return line, col + len(text)
