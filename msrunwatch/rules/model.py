"""A rule as the engine uses it, after loading and validation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import regex

from msrunwatch.rules.expr import Expr
from msrunwatch.rules.vocab import Blame, Effect, Refers, Role, Severity


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
class Rule:
    """One diagnosis, loaded from one YAML file."""

    id: str
    title: str
    category: str
    severity: Severity
    scope: Scope
    message: str
    role: Role = Role.CAUSE
    blame: Blame = Blame.FIRST
    effect: Effect = Effect.NONE
    """What a finding does to its rank's status (the loader fills in the default)."""
    subject: Subject | None = None
    """Line scope: which capture names the rank the line is about."""
    aliases: tuple[str, ...] = ()
    """Former ids that settings and options may still use."""
    match: regex.Pattern[str] | None = None
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
    hint: str = ""
    doc: str = ""
    references: tuple[str, ...] = ()
    versions: str | None = None
    tags: tuple[str, ...] = ()
    path: str = ""
    line: int = 0
