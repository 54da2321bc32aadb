"""Expand lexed shell words against the variables a script set, keeping positions.

An expanded word is a `Field`: runs of text (`Span`s), each remembering the line and
column where that text is written, so `--tensor-model-parallel-size ${TP}` yields the
field `2` located on the `TP=2` line. What cannot be known before the script runs (an
unset variable, `$(cmd)`, `$1`, arrays) becomes an empty span that says why; it is
never guessed. Word splitting follows bash: unquoted expansions split on blanks,
quoted text never does, and an unquoted expansion that yields nothing disappears.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from msrunwatch.core.errors import ArithError
from msrunwatch.read.config.arith import evaluate
from msrunwatch.read.config.shellwords import Arith, Lit, Opaque, Param, Part, Word, advance

BLANKS = " \t\n"
MAX_DEPTH = 20


@dataclass(frozen=True, slots=True)
class Span:
    """Text written at (line, col); an empty span with `unresolved` stands for unknown text."""

    text: str
    line: int
    col: int
    unresolved: str | None = None


@dataclass(frozen=True, slots=True)
class Field:
    """One word after expansion."""

    spans: tuple[Span, ...] = ()

    @property
    def text(self) -> str:
        return "".join(span.text for span in self.spans)

    @property
    def unresolved(self) -> str | None:
        """Why (part of) this word is unknown, or None when all of it is known."""
        return next((s.unresolved for s in self.spans if s.unresolved is not None), None)

    def at(self, offset: int = 0) -> tuple[int, int]:
        """Where the character at offset is written (an unknown part wins at offset 0)."""
        if offset == 0:
            for span in self.spans:
                if span.unresolved is not None or span.text:
                    return span.line, span.col
        seen = 0
        for span in self.spans:
            if offset < seen + len(span.text):
                return advance(span.line, span.col, span.text[: offset - seen])
            seen += len(span.text)
        last = self.spans[-1] if self.spans else Span("", 1, 1)
        return advance(last.line, last.col, last.text)

    def tail(self, offset: int) -> Field:
        """The field from character offset on (`--x=VALUE` → `VALUE`)."""
        out: list[Span] = []
        seen = 0
        for span in self.spans:
            end = seen + len(span.text)
            if end <= offset and span.text:
                seen = end
                continue
            if seen < offset:
                cut = offset - seen
                line, col = advance(span.line, span.col, span.text[:cut])
                out.append(Span(span.text[cut:], line, col, span.unresolved))
            else:
                out.append(span)
            seen = end
        return Field(tuple(out))

    def __add__(self, other: Field) -> Field:
        return Field(self.spans + other.spans)


@dataclass(frozen=True, slots=True)
class Var:
    """A variable the script set: its value, where the value is written, and whether
    child processes see it. `reason` is set when its value depends on the run."""

    name: str
    value: Field
    line: int
    col: int
    exported: bool = False
    reason: str | None = None


Env = dict[str, Var]


class Expander:
    """Expands words against env; `missing` completes `$X ...` for unset variables."""

    def __init__(self, env: Env, missing: str = "is not set in the script") -> None:
        self.env = env
        self.missing = missing

    # -- words -----------------------------------------------------------------------------

    def fields(self, word: Word) -> list[Field]:
        """The fields a command word expands to (unquoted expansions are split)."""
        fields: list[Field] = []
        current: list[Span] = []
        content = False
        for part in word.parts:
            spans = self.part(part)
            if isinstance(part, Lit) or part.quoted:
                current.extend(s for s in spans if s.text or s.unresolved is not None)
                content = content or part.quoted or bool(current)
                continue
            for span in spans:
                if span.unresolved is not None:
                    current.append(span)
                    content = True
                    continue
                for piece, offset in _split(span.text):
                    if piece is None:
                        if content:
                            fields.append(Field(tuple(current)))
                        current, content = [], False
                    else:
                        current.append(Span(piece, span.line, span.col + offset))
                        content = True
        if content:
            fields.append(Field(tuple(current)))
        return fields

    def value(self, parts: Sequence[Part]) -> Field:
        """The expansion of parts without word splitting (an assignment's value)."""
        spans: list[Span] = []
        for part in parts:
            spans.extend(s for s in self.part(part) if s.text or s.unresolved is not None)
        return Field(tuple(spans))

    # -- parts -----------------------------------------------------------------------------

    def part(self, part: Part, depth: int = 0) -> list[Span]:
        """The spans one part expands to."""
        if isinstance(part, Lit):
            return [Span(part.text, part.line, part.col)]
        if isinstance(part, Opaque):
            return [Span("", part.line, part.col, part.reason)]
        if isinstance(part, Arith):
            return [self._arith(part)]
        return self._param(part)

    def _unknown(self, name: str, line: int, col: int) -> Span:
        return Span("", line, col, f"${name} {self.missing}")

    def _var_spans(self, var: Var) -> list[Span]:
        if var.reason is not None:
            return [Span("", var.line, var.col, var.reason)]
        return list(var.value.spans)

    def _param(self, p: Param) -> list[Span]:
        var = self.env.get(p.name)
        if p.op == "":
            return self._var_spans(var) if var else [self._unknown(p.name, p.line, p.col)]
        if var is not None and var.reason is not None:
            return [Span("", var.line, var.col, var.reason)]
        if p.op == "#":
            if var is None:
                return [self._unknown(p.name, p.line, p.col)]
            return [Span(str(len(var.value.text)), p.line, p.col)]
        is_set = var is not None and (bool(var.value.text) or ":" not in p.op)
        if p.op in (":-", "-", ":=", "="):
            if is_set and var is not None:
                return self._var_spans(var)
            default = self.value(p.arg)
            if p.op in (":=", "="):
                at = default.at() if default.spans else (p.line, p.col)
                self.env[p.name] = Var(p.name, default, *at)
            return list(default.spans) or [Span("", p.line, p.col)]
        if p.op in (":+", "+"):
            return list(self.value(p.arg).spans) if is_set else []
        # :? and ?
        if is_set and var is not None:
            return self._var_spans(var)
        return [Span("", p.line, p.col, f"`{p.raw}` stops the script: {p.name} is not set")]

    def _arith(self, a: Arith) -> Span:
        field = self.value(a.parts)
        if field.unresolved is not None:
            return Span("", a.line, a.col, field.unresolved)
        try:
            result = evaluate(field.text, lambda name: self._arith_name(name, 0))
        except ArithError as exc:
            return Span("", a.line, a.col, f"`{a.raw}`: {exc}")
        return Span(str(result), a.line, a.col)

    def _arith_name(self, name: str, depth: int) -> int:
        var = self.env.get(name)
        if var is None:
            raise ArithError(f"${name} {self.missing}")
        if var.reason is not None:
            raise ArithError(var.reason)
        if var.value.unresolved is not None:
            raise ArithError(var.value.unresolved)
        text = var.value.text.strip()
        if not text:
            return 0
        if depth > MAX_DEPTH:
            raise ArithError(f"expression recursion level exceeded at ${name}")
        return evaluate(text, lambda inner: self._arith_name(inner, depth + 1))


def _split(text: str) -> Iterable[tuple[str | None, int]]:
    """Pieces of text between blanks, with their offsets; None marks a blank run."""
    start = None
    for i, c in enumerate(text):
        if c in BLANKS:
            if start is not None:
                yield text[start:i], start
                start = None
            yield None, i
        elif start is None:
            start = i
    if start is not None:
        yield text[start:], start
