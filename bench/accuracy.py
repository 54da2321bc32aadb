#!/usr/bin/env python3
"""How often triage is right: every scenario with an `expected.yaml`, triaged as a user
would (`msrunwatch triage --format json`), compared with what really happened.

    python bench/accuracy.py                      # every scenario under fixtures/
    python bench/accuracy.py --corpus DIR [...]   # other scenario trees (public excerpts)
    python bench/accuracy.py --strict             # exit 1 unless every scenario is right

A scenario is a directory holding `expected.yaml` and its logs: `msrun_log/` (with
`msrun_console.txt` beside it when msrun's console was kept), `node*/msrun_log/` for
several nodes, or log files directly in the directory (excerpts: judged as a snapshot taken
at their newest line, `--now last-line`; a run's directory is judged post mortem, by this
host's clock). `expected.yaml` says:

    outcome: failed                 # ok | failed | running | unknown
    root_cause_ranks: [1]           # [] when the logs cannot tell which rank
    categories: [stalled]           # any of these is right for the root cause
    other_failed_ranks: []          # ranks with an independent fault of their own (optional)

A scenario is *fully right* when the outcome matches, the root cause names exactly the
expected ranks (when some are expected), its category is one of the expected ones (when the
run failed), and a healthy run has no error finding (no false alarm).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Verdict:
    """One scenario: what was expected, what triage said, and which facts agree."""

    name: str
    expected: dict[str, object]
    outcome: str
    ranks: list[int]
    category: str
    errors: int
    seen: tuple[str, ...] = ()
    """Categories of every finding."""
    note: str = ""

    @property
    def outcome_ok(self) -> bool:
        return self.outcome == self.expected.get("outcome")

    @property
    def ranks_ok(self) -> bool:
        want = self.expected.get("root_cause_ranks") or []
        return not want or sorted(self.ranks) == sorted(want)  # type: ignore[type-var]

    @property
    def category_ok(self) -> bool:
        """A failed run's root cause has an expected category; a run expected to go on
        (a NaN loss it survives, say) shows a finding of one when any is expected."""
        wanted = self.expected.get("categories") or []
        if self.expected.get("outcome") == "failed":
            return self.category in wanted  # type: ignore[operator]
        return not wanted or bool(set(self.seen) & set(wanted))  # type: ignore[arg-type]

    @property
    def no_false_alarm(self) -> bool:
        return self.expected.get("outcome") != "ok" or self.errors == 0

    @property
    def right(self) -> bool:
        return self.outcome_ok and self.ranks_ok and self.category_ok and self.no_false_alarm


def load_yaml(path: Path) -> dict[str, object]:
    """expected.yaml is flat `key: value` YAML; PyYAML comes with msrunwatch."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def scenarios(corpora: list[Path]) -> list[Path]:
    """Every directory under the corpora that holds an expected.yaml."""
    found = [p.parent for corpus in corpora for p in sorted(corpus.rglob("expected.yaml"))]
    return sorted(found, key=lambda p: str(p))


def logs_and_consoles(case: Path) -> tuple[list[str], list[str]]:
    """A scenario's log directories (or the directory itself, for excerpts) and msrun's
    saved consoles beside them."""
    nodes = sorted(case.glob("node*/msrun_log"))
    if nodes:
        consoles = sorted([*case.glob("node*/msrun_console.txt"), *case.glob("node*_console.txt")])
        return [str(n) for n in nodes], [str(c) for c in consoles]
    if (case / "msrun_log").is_dir():
        console = case / "msrun_console.txt"
        return [str(case / "msrun_log")], [str(console)] if console.is_file() else []
    return [str(case)], []


def targets(case: Path) -> list[str]:
    """The command-line arguments that point triage at a scenario's logs. A run's
    directory is judged post mortem, by this host's clock (its logs are days old: a run
    without an end marker was stopped); an excerpt is a moment of a run a user copied, so
    it is judged as a snapshot taken at its newest line (`--now last-line`)."""
    logs, consoles = logs_and_consoles(case)
    snapshot = ["--now", "last-line"] if is_excerpt(case) else []
    return [*logs, *(arg for c in consoles for arg in ("--console", c)), *snapshot]


def is_excerpt(case: Path) -> bool:
    """Log files directly in the scenario's directory, no msrun_log/ of a whole run."""
    return logs_and_consoles(case)[0] == [str(case)]


def triage(msrunwatch: str, case: Path) -> Verdict:
    expected = load_yaml(case / "expected.yaml")
    name = str(case.relative_to(ROOT)) if case.is_relative_to(ROOT) else str(case)
    cmd = [msrunwatch, "triage", "--format", "json", *targets(case)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode not in (0, 1):
        return Verdict(name, expected, "error", [], "", 0, note=done.stderr.strip()[:120])
    report = json.loads(done.stdout)
    cause = report.get("root_cause") or {}
    errors = sum(1 for f in report.get("findings", []) if f.get("severity") == "error")
    return Verdict(
        name,
        expected,
        report.get("outcome", ""),
        list(cause.get("ranks") or []),
        cause.get("category") or "",
        errors,
        tuple(sorted({f.get("category", "") for f in report.get("findings", [])})),
    )


def mark(ok: bool) -> str:
    return "yes" if ok else "NO"


def table(verdicts: list[Verdict]) -> str:
    rows = [
        "| scenario | expected | triage says | outcome | ranks | category | no false alarm "
        "| right |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        want = (
            f"{v.expected.get('outcome')} {v.expected.get('root_cause_ranks') or ''} "
            f"{'/'.join(v.expected.get('categories') or [])}"  # type: ignore[arg-type]
        ).strip()
        got = f"{v.outcome} {v.ranks or ''} {v.category}".strip() + (
            f" ({v.note})" if v.note else ""
        )
        rows.append(
            f"| {v.name} | {want} | {got} | {mark(v.outcome_ok)} | {mark(v.ranks_ok)} | "
            f"{mark(v.category_ok)} | {mark(v.no_false_alarm)} | {mark(v.right)} |"
        )
    return "\n".join(rows)


def totals(verdicts: list[Verdict]) -> str:
    n = len(verdicts)

    def count(attr: str) -> str:
        return f"{sum(1 for v in verdicts if getattr(v, attr))}/{n}"

    return (
        f"fully right {count('right')}; outcome {count('outcome_ok')}, root-cause ranks "
        f"{count('ranks_ok')}, category {count('category_ok')}, no false alarm "
        f"{count('no_false_alarm')}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        action="append",
        type=Path,
        help="scenario tree (default: fixtures/); repeatable",
    )
    parser.add_argument("--msrunwatch", default=None, help="the msrunwatch command to run")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless all are right")
    args = parser.parse_args()
    command = args.msrunwatch or shutil.which("msrunwatch", path=str(Path(sys.executable).parent))
    if command is None:
        parser.error("no msrunwatch next to this Python; give --msrunwatch")
    corpora = args.corpus or [ROOT / "fixtures"]
    verdicts = [triage(command, case) for case in scenarios(corpora)]
    print(table(verdicts))
    print()
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        groups.setdefault(group_of(v.name), []).append(v)
    for name, members in groups.items():
        print(f"{name}: {totals(members)}")
    return 1 if args.strict and not all(v.right for v in verdicts) else 0


def group_of(name: str) -> str:
    """Totals are kept apart for real runs, public excerpts (dev and held-out) and the rest."""
    parts = Path(name).parts
    if "public" in parts:
        return "public " + parts[parts.index("public") + 1]
    return "real runs" if parts and parts[-1].startswith(("cpu_", "dryrun_")) else "other"


if __name__ == "__main__":
    sys.exit(main())
