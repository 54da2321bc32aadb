"""An expanded shell word: runs of text, each remembering where it is written."""

from __future__ import annotations

from msrunwatch.core.compat import dataclass
from msrunwatch.read.config.shellparts import advance


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


BREAK = Span("", 0, 0)
"""Between the elements of `"${ARRAY[@]}"`: a word break even inside double quotes."""
