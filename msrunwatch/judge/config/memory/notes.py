"""What the memory estimate had to assume, could not know, or found inconsistent."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Notes:
    """Assumptions, gaps and problems, each kept once and in the order first met."""

    assumptions: list[str] = field(default_factory=list)
    lacking: dict[str, list[str]] = field(default_factory=dict)
    """Unknown input -> the terms it leaves unestimated."""
    why: dict[str, str] = field(default_factory=dict)
    """Unknown input -> why it is unknown (the first reason given)."""
    problems: list[str] = field(default_factory=list)

    def assume(self, text: str) -> None:
        """Record an assumption the numbers rest on."""
        if text not in self.assumptions:
            self.assumptions.append(text)

    def lack(self, name: str, *terms: str, why: str = "unknown") -> None:
        """Record that input `name` leaves `terms` unestimated."""
        known = self.lacking.setdefault(name, [])
        known += [t for t in terms if t not in known]
        self.why.setdefault(name, why)

    @property
    def missing(self) -> list[str]:
        """One line per unknown input: why, and which terms it leaves open."""
        return [f"{n} {self.why[n]}: no {', '.join(t)}" for n, t in self.lacking.items()]

    def problem(self, text: str) -> None:
        """Record an inconsistency in the config."""
        if text not in self.problems:
            self.problems.append(text)

    def merge(self, more: Notes) -> None:
        """Append another set's assumptions and problems (not its gaps)."""
        for text in more.assumptions:
            self.assume(text)
        for text in more.problems:
            self.problem(text)
