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

from msrunwatch.core.errors import ArithError
from msrunwatch.read.config.arith import evaluate
from msrunwatch.read.config.shellfield import BREAK, Field, Span
from msrunwatch.read.config.shellvars import Env, Lookup, Var, new_var
from msrunwatch.read.config.shellwords import Arith, ArrayLit, Lit, Opaque, Param, Part, Word, lex

__all__ = ["Budget", "Env", "Expander", "Field", "Lookup", "Span", "Var"]

BLANKS = " \t\n"
MAX_DEPTH = 20
MAX_SCRIPT_CHARS = 32 * 1024 * 1024
"""All expansions of one script together: past this, the rest are unresolved."""


class Budget:
    """What a whole script may expand to: past it, expansions are unresolved, not made.

    Each variable's value is capped too (`shellvars`), so a script that doubles a
    variable 39 times (642 bytes) cannot grow it to 2^39 characters; this cap bounds what
    many uses of capped variables add up to.
    """

    def __init__(self, chars: int = MAX_SCRIPT_CHARS) -> None:
        self.left = chars
        self.spent = False

    def take(self, spans: Sequence[Span]) -> bool:
        """Charge an expansion's output; False once the script's budget is spent."""
        if self.spent:
            return False
        self.left -= sum(len(s.text) for s in spans) + len(spans)
        if self.left < 0:
            self.spent = True
        return not self.spent


class Expander:
    """Expands words against env; `missing` completes `$X ...` for unset variables."""

    def __init__(
        self, env: Env, missing: str = "is not set in the script", budget: Budget | None = None
    ) -> None:
        self.env = env
        self.missing = missing
        self.budget = budget or Budget()

    # -- words -----------------------------------------------------------------------------

    def fields(self, word: Word) -> list[Field]:
        """The fields a command word expands to (unquoted expansions are split)."""
        out = _Fields()
        for part in word.parts:
            kept = isinstance(part, Lit) or part.quoted
            for span in self.part(part):
                if span is BREAK:
                    out.brk(part.quoted)
                elif kept:
                    out.keep(span)
                else:
                    out.split(span)
            if kept:
                out.content = out.content or part.quoted or bool(out.current)
        return out.done()

    def value(self, parts: Sequence[Part]) -> Field:
        """The expansion of parts without word splitting (an assignment's value)."""
        spans: list[Span] = []
        for part in parts:
            for s in self.part(part):
                if s is BREAK:
                    spans.append(Span(" ", s.line, s.col))
                elif s.text or s.unresolved is not None:
                    spans.append(s)
        return Field(tuple(spans))

    def elements(self, word_parts: Sequence[Part], line: int, col: int) -> list[Field]:
        """The elements an array assignment's `(...)` expands to, in order."""
        fields: list[Field] = []
        for part in word_parts:
            if not isinstance(part, ArrayLit):
                fields.append(self.value([part]))
                continue
            for cmd in lex(part.inner, part.inner_line, part.inner_col):
                for word in cmd.words:
                    fields.extend(self.fields(word))
        return fields

    # -- parts -----------------------------------------------------------------------------

    def part(self, part: Part, depth: int = 0) -> list[Span]:
        """The spans one part expands to."""
        if isinstance(part, Lit):
            return [Span(part.text, part.line, part.col)]
        if isinstance(part, Opaque):
            return [Span("", part.line, part.col, part.reason)]
        if isinstance(part, Arith):
            return [self._arith(part)]
        if isinstance(part, ArrayLit):
            return [Span("", part.line, part.col, f"`{part.raw[:40]}` is an array here")]
        return self._param(part)

    def _unknown(self, name: str, line: int, col: int) -> Span:
        return Span("", line, col, f"${name} {self.missing}")

    def _var_spans(self, var: Var, line: int, col: int) -> list[Span]:
        if var.reason is not None:
            return [Span("", var.line, var.col, var.reason)]
        if not self.budget.take(var.value.spans):
            why = f"the script expands to more than {MAX_SCRIPT_CHARS >> 20} MiB: ${var.name} "
            return [Span("", line, col, why + "is not expanded")]
        return list(var.value.spans)

    def _param(self, p: Param) -> list[Span]:
        var = self.env.get(p.name)
        if p.op == "":
            return (
                self._var_spans(var, p.line, p.col)
                if var
                else [self._unknown(p.name, p.line, p.col)]
            )
        if var is not None and var.reason is not None:
            return [Span("", var.line, var.col, var.reason)]
        if p.op == "#[@]":
            if var is None:
                return [self._unknown(p.name, p.line, p.col)]
            return [Span(str(len(var.elements())), p.line, p.col)]
        if p.op.startswith("["):
            return self._index(var, p) if var else [self._unknown(p.name, p.line, p.col)]
        if p.op == "#":
            if var is None:
                return [self._unknown(p.name, p.line, p.col)]
            return [Span(str(var.chars), p.line, p.col)]
        is_set = var is not None and (not var.empty or ":" not in p.op)
        if p.op in (":-", "-", ":=", "="):
            if is_set and var is not None:
                return self._var_spans(var, p.line, p.col)
            default = self.value(p.arg)
            if p.op in (":=", "="):
                at = default.at() if default.spans else (p.line, p.col)
                self.env.set(new_var(p.name, default, *at))
            return list(default.spans) or [Span("", p.line, p.col)]
        if p.op in (":+", "+"):
            return list(self.value(p.arg).spans) if is_set else []
        # :? and ?
        if is_set and var is not None:
            return self._var_spans(var, p.line, p.col)
        return [Span("", p.line, p.col, f"`{p.raw}` stops the script: {p.name} is not set")]

    def _index(self, var: Var, p: Param) -> list[Span]:
        """`${NAME[@]}` (every element, one word each), `${NAME[*]}`, `${NAME[N]}`."""
        items = var.elements()
        if p.op not in ("[@]", "[*]"):
            n = int(p.op[1:-1])
            items = items[n : n + 1]
        spans: list[Span] = []
        for i, item in enumerate(items):
            if i:
                spans.append(BREAK)
            if not self.budget.take(item.spans):
                why = f"the script expands to more than {MAX_SCRIPT_CHARS >> 20} MiB: "
                return [Span("", p.line, p.col, why + f"${{{p.name}{p.op}}} is not expanded")]
            spans.extend(item.spans)
        return spans

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


class _Fields:
    """Fields being built from spans: kept whole (quoted), split on blanks, or broken
    between array elements."""

    def __init__(self) -> None:
        self.fields: list[Field] = []
        self.current: list[Span] = []
        self.content = False

    def keep(self, span: Span) -> None:
        if span.text or span.unresolved is not None:
            self.current.append(span)

    def brk(self, quoted: bool) -> None:
        if self.content or self.current or quoted:
            self.fields.append(Field(tuple(self.current)))
        self.current, self.content = [], quoted

    def split(self, span: Span) -> None:
        if span.unresolved is not None:
            self.current.append(span)
            self.content = True
            return
        for piece, offset in _split(span.text):
            if piece is None:
                if self.content:
                    self.fields.append(Field(tuple(self.current)))
                self.current, self.content = [], False
            else:
                self.current.append(Span(piece, span.line, span.col + offset))
                self.content = True

    def done(self) -> list[Field]:
        if self.content:
            self.fields.append(Field(tuple(self.current)))
        return self.fields


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
