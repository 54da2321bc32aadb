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

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Protocol

from msrunwatch.read.config.shellfield import Field, Span

MAX_VALUE_CHARS = 256 * 1024
"""A variable's value past this many characters is unresolved (`grows past`), not kept."""
MAX_VALUE_SPANS = 4096
"""...or past this many pieces (each `$X` and each line of a quoted string is one)."""


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
        out._count, out.chars = self._count, self.chars
        return out

    def __repr__(self) -> str:
        return f"Var({self.name!r}, {self.value!r}, {self.line}, {self.col}, {self.reason!r})"


def new_var(
    name: str, value: Field, line: int, col: int, exported: bool = False, reason: str | None = None
) -> Var:
    """A variable assigned value, unresolved when the value is past the caps."""
    if reason is None:
        reason = too_long(name, sum(len(s.text) for s in value.spans), len(value.spans))
        if reason is not None:
            value = Field()
    return Var(name, value, line, col, exported, reason)


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
