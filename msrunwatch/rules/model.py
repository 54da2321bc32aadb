"""A rule as the engine uses it, after loading and validation."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from msrunwatch.core.compat import StrEnum
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.programs import VERSION1, regex_compiled
from msrunwatch.rules.tables import Lookup
from msrunwatch.rules.vocab import Blame, Effect, Refers, Role, Severity, Witness

if TYPE_CHECKING:
    import regex


class Scope(StrEnum):
    """What a rule's condition reads."""

    LINE = "line"
    RANK = "rank"
    RUN = "run"
    CONFIG = "config"


@dataclass(frozen=True)
class Subject:
    """The capture that names the rank a line is about, when another process logged it."""

    capture: str
    refers: Refers


@dataclass(frozen=True)
class Peer:
    """The rank a line says its logging rank waited on or received from."""

    rank: Expr
    """Over the line's captures, `rank` (the logging rank) and `world` (ranks in the run)."""
    suspect: str
    """The category the named rank gets as the root cause."""
    if_ended: str | None = None
    """Its category when its log ended normally: it left while others still needed it."""
    effect: Effect = Effect.NONE
    """What being named does to its status (stall: it hangs; fail: it sent a bad chunk)."""
    group: str | None = None
    """The capture naming the communicator group `rank` counts in (HCCL names peers by their
    rank in the group): the group's members, as the logging rank's log created it, turn it
    into a global rank; a line that names no group, or one its log never created, names no
    peer."""


@dataclass(frozen=True)
class Rule:
    """One diagnosis, loaded from one YAML file."""

    id: str
    title: str
    category: str
    severity: Severity
    """The rule's own severity, as its YAML gives it: what the judgement reads (which fault
    is the root cause, a rank's first error, who failed). Settings do not change it."""
    scope: Scope
    message: str
    role: Role = Role.CAUSE
    blame: Blame = Blame.FIRST
    effect: Effect = Effect.NONE
    """What a finding does to its rank's status (the loader fills in the default)."""
    subject: Subject | None = None
    """Line scope: which capture names the rank the line is about."""
    peer: Peer | None = None
    """Line scope: the rank this line blames when no rank logged a fault of its own."""
    witness: Witness | None = None
    """Line scope: what the line is its rank's word on about another (a peer went away)."""
    restates: tuple[str, ...] = ()
    """Rules whose finding this one's lines repeat: folded into it when it exists."""
    lookup: Lookup | None = None
    """Line scope: a catalogue whose rows refine each finding (category, role, title, hint)."""
    aliases: tuple[str, ...] = ()
    """Former ids that settings and options may still use."""
    pattern: str | None = None
    """Line scope: the `match` pattern's source; compiled on first use (`match`)."""
    under: str | None = None
    """Line scope: the pattern of a heading the line must come under: the rule holds only
    on lines after one that matches it, in the same log record (one section of a summary
    whose sections list lines of the same shape, as torchrun's failure table does)."""
    when: Expr | None = None
    """The compiled `when` condition, or None (always)."""
    ranks: Expr | None = None
    """Run scope: which ranks a finding is about."""
    evidence: str = "last-line"
    """Rank scope: the line of the rank's log a finding points at."""
    at: tuple[str, ...] = ()
    """Config scope: the settings whose place in the config a finding points at."""
    fallback: int = 0
    """0: always fires; 1: only when no non-fallback rule fired on the same log record;
    2 (`last`): only when no other rule at all fired on it."""
    fallback_when: Expr | None = None
    """Line scope: a match for which this holds (over its captures) is a fallback one, as
    with `fallback: true`: one rule reads a code's bare header and its detail line, and the
    header's finding yields to the detail's on the same record, under the same rule id."""
    hint: str = ""
    why: str = ""
    """Why its finding decides the verdict, when it does (a template, as `message` is): the
    verdict's `why:` line says it instead of a stock phrase; empty: the stock phrase."""
    doc: str = ""
    references: tuple[str, ...] = ()
    versions: str | None = None
    tags: tuple[str, ...] = ()
    path: str = ""
    line: int = 0
    reported: Severity | None = None
    """The severity settings gave it (--severity, msrunwatch.yaml), if any: what its findings
    count as (the outcome, the exit code, the counts, SARIF levels), never which fault is
    the root cause: demoting an OOM to info must not make its victims' timeouts the cause."""

    @property
    def counts_as(self) -> Severity:
        """The severity its findings are reported with: the settings', else its own."""
        return self.reported or self.severity

    @cached_property
    def match(self) -> regex.Pattern[str] | None:
        """The compiled pattern: most rules are never tried on a run (their literal never
        appears), so the built-in pack compiles a pattern only when a line needs it."""
        return None if self.pattern is None else compile_pattern(self.pattern)


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """A rule pattern as the engine runs it (the `regex` module's version 1 syntax),
    compiled through rules.programs (remembered between runs)."""
    return regex_compiled(pattern, VERSION1)  # type: ignore[no-any-return]
