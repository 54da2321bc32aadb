"""Lines that can change nothing, told apart in bulk: most of what a log prints.

A line without a GLOG header that holds none of the literals the extractor looks for in
such a line (PLAIN_FACTS, a traceback's start, a chained exception's header, the line
before a traceback the program survives, the INFO
markers the scanner picks lines out by), none of the
rules' literals or gates, and no non-ASCII byte, changes nothing when it is read outside a
multi-line record (a traceback's frames, a bare exception waiting for its body): it only
counts, for line numbers and for whether the next line follows it directly. Such a line is
recognised on its bytes, by one regex, and the answer is remembered per line; the scanner
then passes over runs of them without decoding or parsing them (see FileScanner).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from msrunwatch.core.memo import LineMemo
from msrunwatch.read import patterns as P
from msrunwatch.read.traceback import CHAINED, START, SURVIVED
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.prefilter import required_literals, trie_pattern
from msrunwatch.rules.programs import compiled

GLOG_START = rb"^\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL|V[0-9]+)\] "
"""Every line GLOG_HEADER can match starts so: it is read as a GLOG line, never skipped.
A line that starts with a date of its own (a suite's logger) dates a print-only log: it
is read too (ISO_PREFIX)."""
UNSURE = rb"[\x80-\xff\x1c-\x1f]"
"""A non-ASCII byte (the line may not be UTF-8, and Unicode case folding and character
classes differ from bytes'), or an ASCII separator Python counts as white space in text but
not in bytes: such a line is always read."""


def _digits(ch: str) -> str:
    """A digit of a literal may be one of a GLOG time's, masked by the rules' memo."""
    return "[0-9]" if "0" <= ch <= "9" else re.escape(ch)


def literal_parts(
    literals: Iterable[tuple[str, bool]], gates: Iterable[re.Pattern[str]]
) -> list[bytes] | None:
    """Bytes patterns that find, in an ASCII line, any of the literals (with whether case is
    ignored; a digit of one stands for any digit) or a match of any of the gates: a line
    none of them is in holds none (None: one that is not ASCII may match ASCII text)."""
    literals, gates = set(literals), list(gates)
    if any(fold and not word.isascii() for word, fold in literals):
        return None  # Unicode case folding can match ASCII text with it
    if any(not gate.pattern.isascii() for gate in gates):
        return None
    exact = {w for w, fold in literals if not fold and w.isascii()}
    folded = {w.lower() for w, fold in literals if fold}
    parts: list[bytes] = []
    if exact:
        parts.append(trie_pattern(exact, _digits).encode())
    if folded:
        parts.append(b"(?i:" + trie_pattern(folded, _digits).encode() + b")")
    parts.extend(gate.pattern.encode() for gate in gates)
    return parts


class QuietLines:
    """Tells, from a line's bytes, whether reading it outside a record changes nothing."""

    def __init__(self, matcher: LineMatcher) -> None:
        self._memo: LineMemo[bytes, bool] = LineMemo()
        self.pattern = self._build(matcher)
        """None when a rule's needs cannot be told: then no line is quiet. Multi-line, so
        that one search looks at many lines (none_in); on one line (quiet) `^` is its
        start either way, and no other part anchors (a gate is a run of characters)."""

    @staticmethod
    def _build(matcher: LineMatcher) -> re.Pattern[bytes] | None:
        needs = matcher.text_needs()
        if needs is None:
            return None
        rule_literals, gates = needs
        literals = set(rule_literals) | P.PLAIN_FACTS.literals()
        literals |= {(line, False) for line in (START, *CHAINED, *SURVIVED)}
        for marker in P.INFO_MARKERS:  # a line the scanner picks out for its marker is read
            found = required_literals(marker.pattern.decode())
            if found is None:
                return None
            literals |= {(word, found[1]) for word in found[0]}
        guards = literal_parts(literals, gates)
        if guards is None:
            return None
        parts = [GLOG_START, b"^" + P.ISO_PREFIX.pattern.encode(), UNSURE, *guards]
        return compiled(b"|".join(parts), re.M)  # its program kept between runs

    def none_in(self, buf: bytes, start: int, stop: int) -> bool:
        """Whether every line of buf[start:stop] is quiet (start follows a newline, stop is
        one): the pattern run once over them, `^` at each line's start (a literal or gate
        it finds across a newline only makes the lines read)."""
        assert self.pattern is not None
        return self.pattern.search(buf, start, stop) is None

    def quiet(self, line: bytes) -> bool:
        """Whether the line (without its newline) changes nothing read outside a record."""
        return self._memo.answer(line, self._reads_nothing)

    def _reads_nothing(self, line: bytes) -> bool:
        assert self.pattern is not None
        return self.pattern.search(line) is None


T = TypeVar("T")


class PerMatcher(Generic[T]):
    """What is built from a matcher's rules, built once per matcher (a process has one)."""

    def __init__(self, build: Callable[[LineMatcher], T]) -> None:
        self._build = build
        self._known: dict[int, tuple[LineMatcher, T]] = {}

    def __call__(self, matcher: LineMatcher) -> T:
        known = self._known.get(id(matcher))
        if known is None or known[0] is not matcher:
            if len(self._known) >= 4:
                self._known.clear()
            known = self._known[id(matcher)] = (matcher, self._build(matcher))
        return known[1]


quiet_lines = PerMatcher(QuietLines)
"""The QuietLines of a matcher's rules."""
