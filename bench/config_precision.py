#!/usr/bin/env python3
"""How far config lint can be trusted: every public config of the corpus, linted as
`msrunwatch check FILE` would, against the reviewed verdict of every error finding.

    python bench/config_precision.py                       # the table
    python bench/config_precision.py --strict              # exit 1 unless the targets hold
    python bench/config_precision.py --corpus DIR          # corpus files elsewhere
    python bench/config_precision.py --findings out.csv    # every finding, one row each
    python bench/config_precision.py --no-versions         # as a user who gives no version

The corpus files are not in this repository (they are upstream files; only facts about
them are): `corpus/trees.csv` names each tree's repository, ref and commit, and
`corpus/manifest.csv` each file's path and git blob id. The files are read from `--corpus
DIR` (default: $MSRUNWATCH_CONFIG_CORPUS, else bench/out/corpus, git-ignored), laid out as
`<tree>/<path>`, and each file's blob id is checked against the manifest: a file that
changed is not the file that was reviewed.

Each tree's framework version (`corpus/trees.csv`, column framework_version) is given to
the linter as `--framework-version` would give it, because version-dependent checks are
errors only when the version is known; `--no-versions` shows what a user who gives none
gets (those checks become warnings).

`corpus/verdicts.csv` holds the reviewed verdict of every error finding (file, rule, line,
message, verdict true/false, reason). `--strict` fails when an error finding has no
verdict, when the false error findings exceed the target (at most 1 per 100 corpus files),
when a reviewed true problem is no longer an error, or when a corpus file is missing or
differs from the manifest. A missing corpus directory is an error (exit 2), never a pass.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
DEFAULT_CORPUS = str(ROOT / "bench" / "out" / "corpus")
TARGET_FALSE_PER_100 = 1.0
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Entry:
    """One corpus file, as the manifest records it."""

    tree: str
    path: str
    blob: str
    kind: str

    @property
    def name(self) -> str:
        return f"{self.tree}/{self.path}"


@dataclass(frozen=True)
class Found:
    """One finding on one corpus file."""

    file: str
    rule: str
    severity: str
    line: int | None
    message: str


@dataclass
class Outcome:
    """What linting one file gave: its findings, or why it was not linted."""

    file: str
    findings: list[Found] = field(default_factory=list)
    skipped: str | None = None
    problem: str | None = None
    """The file is missing or is not the file the manifest names."""


def _checkouts() -> list[Path]:
    """This checkout, the one its worktree belongs to, and a local clone's origin: the corpus
    sits beside one of them (CI may run in a clone of /work/main made elsewhere)."""
    found = [ROOT]
    for args in (["rev-parse", "--git-common-dir"], ["config", "--get", "remote.origin.url"]):
        try:
            out = subprocess.run(
                ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            continue
        path = Path(out.removeprefix("file://")) if out else None
        if path is not None and path.is_absolute():
            found.append(path.parent if path.name == ".git" else path)
    return found


def corpus_candidates(given: str) -> list[Path]:
    """Where a relative --corpus may be: the working directory, then beside each checkout (the
    repository root's parent is where `../shared/corpus/configs` lives)."""
    path = Path(given)
    if path.is_absolute():
        return [path]
    out = [Path.cwd() / path]
    out += [root / path for root in _checkouts()]
    return list(dict.fromkeys(p.resolve() for p in out))


def corpus_dir(given: str) -> Path | None:
    """The first candidate that is a directory, or None."""
    return next((p for p in corpus_candidates(given) if p.is_dir()), None)


def blob_id(data: bytes) -> str:
    """The git blob id of data (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def manifest(index: Path) -> tuple[list[Entry], dict[str, str]]:
    """The corpus files and each tree's framework version."""
    versions = {t["tree"]: t.get("framework_version", "") for t in read_csv(index / "trees.csv")}
    entries = [
        Entry(r["tree"], r["path"], r["blob_sha1"], r["kind"])
        for r in read_csv(index / "manifest.csv")
    ]
    return entries, versions


# --- linting (one worker process per CPU) ---------------------------------------------------

_RULES: list[object] = []


def _rules() -> list[object]:
    if not _RULES:
        from msrunwatch.drivers.settings import Settings, rule_set

        _RULES.extend(rule_set(Settings()))
    return _RULES


def lint_one(job: tuple[str, Entry, str]) -> Outcome:
    """Lint one corpus file as `msrunwatch check FILE --framework-version V` would."""
    from msrunwatch.core.errors import MsrunwatchError
    from msrunwatch.drivers.configs import lint_configs
    from msrunwatch.drivers.options import Launch

    corpus, entry, version = job
    path = Path(corpus) / entry.tree / entry.path
    out = Outcome(entry.name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.problem = f"cannot read: {exc.strerror or exc}"
        return out
    if blob_id(data) != entry.blob:
        out.problem = f"blob {blob_id(data)} differs from the manifest's {entry.blob}"
        return out
    launch = Launch(framework_version=version or None)
    try:
        report = lint_configs([str(path)], _rules(), launch)  # type: ignore[arg-type]
    except MsrunwatchError as exc:
        out.skipped = str(exc).removeprefix(str(path)).lstrip(":0123456789 ")
        return out
    not_linted = [f for f in report.findings if f.rule == "config-not-linted"]
    if not_linted:
        out.skipped = not_linted[0].message.removeprefix("not linted: ")
        return out
    for f in report.findings:
        occ = f.first
        out.findings.append(
            Found(entry.name, f.rule, f.severity.value, occ.line if occ else None, f.message)
        )
    return out


def lint_all(
    corpus: str, entries: Sequence[Entry], versions: dict[str, str], jobs: int
) -> list[Outcome]:
    work = [(corpus, e, versions.get(e.tree, "")) for e in entries]
    if jobs <= 1:
        return [lint_one(w) for w in work]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(lint_one, work, chunksize=16))


# --- verdicts and the table -------------------------------------------------------------------


def verdicts(index: Path) -> dict[tuple[str, str], dict[str, str]]:
    """Reviewed verdicts by (file, rule): a rule fires at most once per config."""
    path = index / "verdicts.csv"
    if not path.exists():
        return {}
    return {(r["file"], r["rule"]): r for r in read_csv(path)}


@dataclass
class Tally:
    """The precision figures."""

    files: int
    linted: int
    skipped: Counter[str]
    problems: list[str]
    severities: Counter[str]
    errors: Counter[str]
    true: Counter[str]
    false: Counter[str]
    unreviewed: list[Found]
    lost: list[dict[str, str]]
    """Reviewed true problems that are no longer an error finding."""

    @property
    def false_per_100(self) -> float:
        return 100.0 * sum(self.false.values()) / max(self.files, 1)


def tally(
    outcomes: Sequence[Outcome], reviewed: dict[tuple[str, str], dict[str, str]], versions: bool
) -> Tally:
    errors = [f for o in outcomes for f in o.findings if f.severity == "error"]
    seen = {(f.file, f.rule) for f in errors}
    t = Tally(
        files=len(outcomes),
        linted=sum(1 for o in outcomes if o.skipped is None and o.problem is None),
        skipped=Counter(_reason(o.skipped) for o in outcomes if o.skipped),
        problems=[f"{o.file}: {o.problem}" for o in outcomes if o.problem],
        severities=Counter(f.severity for o in outcomes for f in o.findings),
        errors=Counter(f.rule for f in errors),
        true=Counter(),
        false=Counter(),
        unreviewed=[],
        # without versions, version-dependent true problems are warnings by design
        lost=[v for k, v in reviewed.items() if v["verdict"] == "true" and k not in seen]
        if versions
        else [],
    )
    for f in errors:
        verdict = reviewed.get((f.file, f.rule))
        if verdict is None:
            t.unreviewed.append(f)
        elif verdict["verdict"] == "true":
            t.true[f.rule] += 1
        else:
            t.false[f.rule] += 1
    return t


def _reason(text: str) -> str:
    """A skip reason without its particulars, to count files by it."""
    for cut in (" (", ": it has none of", ": the document is"):
        text = text.split(cut)[0]
    return text[:90]


def table(t: Tally, corpus: str, versions: bool) -> str:
    out = [
        f"Config lint precision over {t.files} public configs ({corpus}; framework versions "
        f"{'given per tree' if versions else 'not given'})",
        "",
        "| files | linted | not linted | error | warning | info | false errors / 100 files |",
        "|---|---|---|---|---|---|---|",
        f"| {t.files} | {t.linted} | {sum(t.skipped.values())} | "
        + " | ".join(str(t.severities[s]) for s in SEVERITIES)
        + f" | {t.false_per_100:.2f} (target <= {TARGET_FALSE_PER_100:g}) |",
        "",
        "| error rule | findings | reviewed true | reviewed false | not reviewed |",
        "|---|---|---|---|---|",
    ]
    unreviewed = Counter(f.rule for f in t.unreviewed)
    for rule, n in sorted(t.errors.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"| {rule} | {n} | {t.true[rule]} | {t.false[rule]} | {unreviewed[rule]} |")
    total = sum(t.errors.values())
    out.append(
        f"| **all** | {total} | {sum(t.true.values())} | {sum(t.false.values())} "
        f"| {len(t.unreviewed)} |"
    )
    if t.skipped:
        out += ["", "| not linted because | files |", "|---|---|"]
        out += [f"| {why} | {n} |" for why, n in t.skipped.most_common()]
    return "\n".join(out) + "\n"


def failures(t: Tally) -> list[str]:
    """What makes --strict fail."""
    out = [f"corpus file {p}" for p in t.problems]
    out += [f"no reviewed verdict: {f.file}:{f.line}: {f.rule}: {f.message}" for f in t.unreviewed]
    if t.false_per_100 > TARGET_FALSE_PER_100:
        out.append(
            f"{sum(t.false.values())} false error findings = {t.false_per_100:.2f} per 100 files, "
            f"above the target of {TARGET_FALSE_PER_100:g}"
        )
    out += [f"true problem no longer an error: {v['file']}: {v['rule']}" for v in t.lost]
    return out


def write_findings(path: str, outcomes: Iterable[Outcome]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["file", "rule", "severity", "line", "message"])
        for o in outcomes:
            if o.skipped:
                w.writerow([o.file, "", "not-linted", "", o.skipped])
            for f in o.findings:
                w.writerow([f.file, f.rule, f.severity, f.line or "", f.message])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--corpus",
        default=os.environ.get("MSRUNWATCH_CONFIG_CORPUS") or DEFAULT_CORPUS,
        help="directory holding <tree>/<path> (default: $MSRUNWATCH_CONFIG_CORPUS, else "
        f"{DEFAULT_CORPUS})",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 unless the targets hold")
    p.add_argument("--findings", metavar="CSV", help="write every finding here")
    p.add_argument("--no-versions", action="store_true", help="give no framework version")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument(
        "--index", default=str(CORPUS), help="where trees.csv, manifest.csv, verdicts.csv are"
    )
    args = p.parse_args(argv)
    found = corpus_dir(args.corpus)
    if found is None:
        tried = ", ".join(str(p) for p in corpus_candidates(args.corpus))
        print(
            f"config_precision: corpus directory {args.corpus} not found (tried {tried}): "
            "nothing was checked (set --corpus or MSRUNWATCH_CONFIG_CORPUS)",
            file=sys.stderr,
        )
        return 2
    args.corpus = str(found)
    index = Path(args.index)
    entries, versions = manifest(index)
    if args.no_versions:
        versions = {}
    start = time.monotonic()
    outcomes = lint_all(args.corpus, entries, versions, args.jobs)
    t = tally(outcomes, verdicts(index), not args.no_versions)
    print(table(t, args.corpus, not args.no_versions), end="")
    print(f"\n{len(outcomes)} files in {time.monotonic() - start:.0f} s")
    if args.findings:
        write_findings(args.findings, outcomes)
    if not args.strict:
        return 0
    fails = failures(t)
    for line in fails[:50]:
        print(f"FAIL {line}", file=sys.stderr)
    if len(fails) > 50:
        print(f"FAIL ... and {len(fails) - 50} more", file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
