"""A rule as the engine uses it, after loading and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import regex

from msrunwatch.model import Blame, Role, Severity


class Scope(StrEnum):
    """What a rule's condition reads."""

    LINE = "line"
    RANK = "rank"
    RUN = "run"
    CONFIG = "config"


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
    match: regex.Pattern[str] | None = None
    when: Any = None
    """The compiled `when` condition, or None."""
    when_source: str | None = None
    fallback: bool = False
    """Fires only when no other rule fired on the same log record."""
    sources: tuple[str, ...] = ("worker", "scheduler")
    """Which kinds of file the rule reads: worker, scheduler, console."""
    hint: str = ""
    doc: str = ""
    references: tuple[str, ...] = ()
    versions: str | None = None
    tags: tuple[str, ...] = ()
    path: str = ""
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
