"""A script's variables: their values, what they were at each launch, and their caps.

Reading a script must take time and memory in proportion to its size, whatever it does
(issue 10: a 642-byte script doubling a variable 39 times grew without bound, and a
3.9 MB script took minutes and gigabytes). So:

- a launch command keeps a `Snapshot` of the variables (a clock reading), not a copy;
- `A+=x` extends a buffer the variables share instead of copying the old value;
- a value past MAX_VALUE_CHARS characters or MAX_VALUE_SPANS pieces is not kept: the
  variable becomes unresolved, with the reason, and later appends cost nothing.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import field
from typing import Protocol

from msrunwatch.core.compat import dataclass
from msrunwatch.read.config.shellfield import Field, Span

MAX_VALUE_CHARS = 256 * 1024
"""A variable's value past this many characters is unresolved (`grows past`), not kept."""
MAX_VALUE_SPANS = 4096
"""...or past this many pieces (each `$X` and each line of a quoted string is one)."""


PLACEHOLDER = re.compile(
    r"(?i)\s*(?:<[^<>]+>|your\b.*|.*\byour\s.*|master node ip|path to\b.*|ip_?\d*"
    r"|x{3,}(?:\.x{3,}){0,3}|x+(?:\.x+){3}(?::\d+)?|\.\.\.)\s*"
)
"""Values left for the user to fill in (`"your master node IP"`, `<master_ip_address>`,
`'IP1'`): upstream scripts ship them, and they are unknown values, never words to read."""
PLACEHOLDER_NOTE = "is a placeholder to fill in before the script runs"


def placeholder(text: str) -> str | None:
    """Why a literal value is a placeholder, or None."""
    if text and PLACEHOLDER.fullmatch(text):
        flat = " ".join(text.split())
        return f"`{flat if len(flat) <= 40 else flat[:37] + '...'}` {PLACEHOLDER_NOTE}"
    return None


def is_placeholder(reason: str | None) -> bool:
    """Whether an unresolved reason says the word is a placeholder (a value, not flags)."""
    return reason is not None and reason.endswith(PLACEHOLDER_NOTE)


def too_long(name: str, chars: int, spans: int) -> str | None:
    """Why a value of this size is not kept, or None when it is within the caps."""
    if spans > MAX_VALUE_SPANS or chars > MAX_VALUE_CHARS:
        cap = f"{MAX_VALUE_CHARS >> 10} KiB or {MAX_VALUE_SPANS} pieces"
        return f"${name} grows past {cap}: its value is not expanded"
    return None


@dataclass(eq=False)
class _Buffer:
    """Spans shared by a variable's successive values (`A=x; A+=y; A+=z`): each value is a
    prefix of the buffer, so appending to the newest one extends it in place."""

    spans: list[Span] = field(default_factory=list)


class Var:
    """A variable the script set: its value, where the value is written, and whether
    child processes see it. `reason` is set when its value depends on the run."""

    __slots__ = (
        "_buffer",
        "_count",
        "_value",
        "chars",
        "col",
        "exported",
        "items",
        "line",
        "name",
        "reason",
    )

    def __init__(
        self,
        name: str,
        value: Field,
        line: int,
        col: int,
        exported: bool = False,
        reason: str | None = None,
    ) -> None:
        self.name, self.line, self.col = name, line, col
        self.exported, self.reason = exported, reason
        self._value: Field | None = value
        self._buffer: _Buffer | None = None
        self._count = len(value.spans)
        self.chars = sum(len(s.text) for s in value.spans)
        self.items: tuple[Field, ...] | None = None
        """An array's elements (`NAME=(a b c)`); None for a plain variable."""

    @property
    def value(self) -> Field:
        """The value (built once from the shared buffer after appends)."""
        if self._value is None:
            assert self._buffer is not None
            self._value = Field(tuple(self._buffer.spans[: self._count]))
        return self._value

    @property
    def empty(self) -> bool:
        """No text (bash's `${X:-...}` test), without building the value."""
        return self.chars == 0

    def appended(
        self, more: Field, line: int, col: int, reason: str | None, exported: bool = False
    ) -> Var:
        """This variable after `NAME+=more` (at line:col), in time proportional to more."""
        exported = exported or self.exported
        if self.reason is not None or reason is not None:
            return Var(self.name, Field(), line, col, exported, self.reason or reason)
        chars = self.chars + sum(len(s.text) for s in more.spans)
        count = self._count + len(more.spans)
        if (why := too_long(self.name, chars, count)) is not None:
            return Var(self.name, Field(), line, col, exported, why)
        buffer = self._buffer
        if buffer is None or len(buffer.spans) != self._count:  # not the newest value: copy
            buffer = _Buffer(list(self.value.spans))
        buffer.spans.extend(more.spans)
        out = Var(self.name, Field(), line, col, exported)
        out._value, out._buffer, out._count, out.chars = None, buffer, count, chars
        return out

    def exporting(self) -> Var:
        """The same variable, marked for child processes."""
        out = Var(self.name, Field(), self.line, self.col, True, self.reason)
        out._value, out._buffer = self._value, self._buffer
        out._count, out.chars, out.items = self._count, self.chars, self.items
        return out

    def elements(self) -> tuple[Field, ...]:
        """An array's elements, or a plain variable's value as the only one (bash:
        `${SCALAR[@]}` is the scalar)."""
        return self.items if self.items is not None else (self.value,)

    def __repr__(self) -> str:
        return f"Var({self.name!r}, {self.value!r}, {self.line}, {self.col}, {self.reason!r})"


def new_var(
    name: str, value: Field, line: int, col: int, exported: bool = False, reason: str | None = None
) -> Var:
    """A variable assigned value: unresolved when past the caps; a placeholder value is
    kept as one unknown piece, so `$MASTER_ADDR` stays one word that says why."""
    if reason is None:
        reason = too_long(name, sum(len(s.text) for s in value.spans), len(value.spans))
        if reason is not None:
            value = Field()
    return Var(name, unfilled(value), line, col, exported, reason)


def unfilled(value: Field) -> Field:
    """value, or one unknown span when its text is a placeholder."""
    if value.unresolved is None and (why := placeholder(value.text)) is not None:
        line, col = value.at()
        return Field((Span("", line, col, why),))
    return value


def new_array(
    name: str,
    items: tuple[Field, ...],
    line: int,
    col: int,
    exported: bool = False,
    reason: str | None = None,
) -> Var:
    """An array variable (`NAME=(...)`); `$NAME` alone is its first element."""
    chars = sum(len(s.text) for f in items for s in f.spans)
    reason = reason or too_long(name, chars, sum(len(f.spans) for f in items))
    if reason is not None:
        return Var(name, Field(), line, col, exported, reason)
    items = tuple(unfilled(item) for item in items)
    var = Var(name, items[0] if items else Field(), line, col, exported)
    var.items = items
    return var


class Lookup(Protocol):
    """Variables by name: the script's now, or as they were when a command ran."""

    def get(self, name: str, /) -> Var | None: ...


class Env:
    """The script's variables as they change, and what they were at any earlier moment.

    A launch command keeps a `Snapshot` (a clock reading), not a copy: copying every
    variable at every command made a script of many variables and commands quadratic
    in time and memory (issue 10: 24 GB for a 3.9 MB script).
    """

    def __init__(self) -> None:
        self._now: dict[str, Var] = {}
        self._history: dict[str, tuple[list[int], list[Var | None]]] = {}
        self._clock = 0

    def get(self, name: str, /) -> Var | None:
        """The variable as it is now."""
        return self._now.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._now

    def set(self, var: Var) -> None:
        """Assign (or re-assign) a variable."""
        self._now[var.name] = var
        self._record(var.name, var)

    def unset(self, name: str) -> None:
        """`unset NAME`."""
        if self._now.pop(name, None) is not None:
            self._record(name, None)

    def _record(self, name: str, var: Var | None) -> None:
        self._clock += 1
        clocks, values = self._history.setdefault(name, ([], []))
        clocks.append(self._clock)
        values.append(var)

    def snapshot(self) -> Snapshot:
        """The variables as they are now, kept as they are whatever the script does next."""
        return Snapshot(self, self._clock)

    def at(self, name: str, clock: int) -> Var | None:
        """The variable as it was at a clock reading."""
        clocks, values = self._history.get(name, ([], []))
        i = bisect_right(clocks, clock)
        return values[i - 1] if i else None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The script's variables at one moment (when a launch command ran)."""

    env: Env
    clock: int

    def get(self, name: str, /) -> Var | None:
        return self.env.at(name, self.clock)
