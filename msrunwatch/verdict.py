"""From a run's facts to its verdict: statuses, root cause, grouped findings, outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from msrunwatch import rootcause as rc
from msrunwatch.findings import Sighting, group, sightings
from msrunwatch.model import Role, Severity, Status
from msrunwatch.report.types import Finding, FirstError, Occurrence, RankReport, Report, RootCause
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import render
from msrunwatch.runstate import RankFacts, RunFacts
from msrunwatch.status import rank_status

RANKS_NEVER_REGISTERED = "ranks-never-registered"
SILENT_RANK = "silent-rank"
KILLED_BY_MSRUN = "killed-by-msrun"

ENDED = (Status.FAILED, Status.KILLED, Status.TIMED_OUT)


@dataclass(frozen=True)
class Synthetic:
    """A run-level finding no single line states."""

    rule: Rule
    ranks: tuple[int, ...]
    message: str
    occurrences: tuple[Occurrence, ...]


def _own(found: Sequence[Sighting]) -> dict[int, list[Sighting]]:
    own: dict[int, list[Sighting]] = {}
    for s in found:
        if s.own and s.rank is not None:
            own.setdefault(s.rank, []).append(s)
    return own


def _failed(own: Mapping[int, list[Sighting]], run: RunFacts) -> bool:
    """Did some rank fail on its own (so msrun killed the others)?"""
    for sights in own.values():
        if any(s.rule.role is Role.CAUSE and s.rule.severity is Severity.ERROR for s in sights):
            return True
    return any(r.exit_code not in (None, 0) for r in run.ranks)


def _statuses(run: RunFacts, own: Mapping[int, list[Sighting]]) -> dict[int, tuple[Status, str]]:
    failed = _failed(own, run)
    result = {r.rank: rank_status(r, own.get(r.rank, []), run, failed) for r in run.ranks}
    for missing in _missing(run):
        gone = missing in run.unregistered
        result[missing] = (
            (Status.FINISHED, "the scheduler saw it leave normally")
            if gone
            else (Status.UNKNOWN, "no log for this rank")
        )
    return result


def _missing(run: RunFacts) -> list[int]:
    present = {r.rank for r in run.ranks}
    return [r for r in range(run.expected_ranks or 0) if r not in present]


def _rank_occurrence(rank: RankFacts | None, number: int) -> Occurrence:
    if rank is None:
        return Occurrence(number, None, None, None, None, False, "")
    f = rank.primary
    return Occurrence(number, f.log_dir, f.path, f.lines or None, f.last_time, True, "")


def _synthetic(
    rule: Rule | None, run: RunFacts, ranks: Sequence[int], values: dict[str, object]
) -> Synthetic | None:
    if rule is None or not ranks:
        return None
    values = {"ranks": rc.rank_ranges(ranks), "count": len(ranks), **values}
    occurrences = tuple(_rank_occurrence(run.rank(r), r) for r in ranks)
    return Synthetic(rule, tuple(ranks), render(rule.message, values), occurrences)


def _root_cause(
    run: RunFacts,
    found: Sequence[Sighting],
    statuses: dict[int, tuple[Status, str]],
    rules: Mapping[str, Rule],
) -> tuple[RootCause | None, list[Synthetic]]:
    """Pick the root cause by the preferences in `rootcause`, with any run-level finding."""
    cause = rc.from_causes(found)
    if cause is not None:
        return cause, []
    plain = {r: s for r, (s, _) in statuses.items()}
    registered = len(run.registrations)
    missing = rc.missing_ranks(run)
    if missing and any(s.rule.category == "cluster-init-timeout" for s in found):
        syn = _synthetic(
            rules.get(RANKS_NEVER_REGISTERED),
            run,
            missing,
            {"registered": registered, "expected": run.expected_ranks},
        )
        if syn is not None:
            return _from_synthetic(syn, "ranks the scheduler waited for never registered"), [syn]
    silent = rc.silent_ranks(plain)
    if silent:
        waiting = [r for r, s in plain.items() if s is Status.TIMED_OUT]
        syn = _synthetic(rules.get(SILENT_RANK), run, silent, {"waiting": rc.rank_ranges(waiting)})
        if syn is not None:
            return _from_synthetic(syn, "the only rank(s) without a timeout of their own"), [syn]
    named = rc.from_scheduler(found)
    if named is not None:
        sight, rank = named
        return rc._cause(sight, [rank], "the scheduler names it the first to time out"), []
    errors = [s for s in found if s.rule.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        ranks = [s.rank for s in rc._same_fault(first, errors) if s.rank is not None]
        return rc._cause(first, ranks, "the earliest error (no rank logged a fault of its own)"), []
    return None, []


def _from_synthetic(syn: Synthetic, reason: str) -> RootCause:
    return rc.run_level(syn.rule, syn.ranks, syn.message, reason)


def _killed(
    run: RunFacts,
    statuses: dict[int, tuple[Status, str]],
    rules: Mapping[str, Rule],
    cause: RootCause | None,
) -> Synthetic | None:
    """Ranks msrun killed because another rank failed: victims, listed once."""
    victims = [
        r.rank
        for r in run.ranks
        if statuses[r.rank][0] is Status.KILLED
        and r.exit_code is None
        and (cause is None or r.rank not in cause.ranks)
    ]
    first = ", ".join(str(r) for r in cause.ranks) if cause else "another rank"
    return _synthetic(rules.get(KILLED_BY_MSRUN), run, victims, {"failed": first})


def _finding(
    rule: Rule, sights: Sequence[Sighting] | None, syn: Synthetic | None, role: str
) -> Finding:
    if syn is not None:
        return Finding(
            rule.id,
            rule.title,
            rule.category,
            rule.severity,
            role,
            syn.message,
            syn.ranks,
            syn.occurrences,
            len(syn.ranks),
            rule.hint,
            rule.id,
        )
    assert sights
    seen: set[tuple[int | None, str | None]] = set()
    occurrences = []
    for s in sights:
        key = (s.rank, s.occurrence.file)
        if key not in seen:
            seen.add(key)
            occurrences.append(s.occurrence)
    ranks = tuple(sorted({s.rank for s in sights if s.rank is not None}))
    first = sights[0]
    return Finding(
        rule.id,
        rule.title,
        rule.category,
        rule.severity,
        role,
        first.hit.message,
        ranks,
        tuple(occurrences),
        sum(s.hit.count for s in sights),
        rule.hint,
        first.hit.fingerprint,
    )


def _role(
    rule: Rule,
    key: tuple[str, str],
    ranks: Sequence[int],
    cause: RootCause | None,
    root_key: object,
) -> str:
    """root-cause for the root's group; victim for faults of other ranks; else symptom."""
    if key == root_key:
        return "root-cause"
    if rule.role is Role.VICTIM:
        return "victim"
    if rule.role is Role.CAUSE and rule.severity is Severity.ERROR and cause is not None:
        # A consequence on the root's own ranks is a symptom of it; elsewhere, a victim.
        return "symptom" if set(ranks) <= set(cause.ranks) else "victim"
    return "symptom"


def _findings(
    found: Sequence[Sighting], cause: RootCause | None, extra: Sequence[Synthetic]
) -> list[Finding]:
    root_key: object = None
    if cause is not None:
        root_key = next(
            (
                (s.hit.rule, s.hit.fingerprint)
                for s in found
                if s.hit.rule == cause.rule
                and s.occurrence.line == cause.line
                and s.occurrence.file == cause.file
            ),
            (cause.rule, cause.rule),
        )
    out = []
    for key, sights in group(list(found)).items():
        ranks = [s.rank for s in sights if s.rank is not None]
        out.append(
            _finding(
                sights[0].rule, sights, None, _role(sights[0].rule, key, ranks, cause, root_key)
            )
        )
    for syn in extra:
        key = (syn.rule.id, syn.rule.id)
        out.append(_finding(syn.rule, None, syn, _role(syn.rule, key, syn.ranks, cause, root_key)))
    order = {"root-cause": 0, "victim": 1, "symptom": 2}
    out.sort(key=lambda f: (-f.severity.rank, order[f.role], _first_time(f)))
    return out


def _first_time(f: Finding) -> float:
    first = f.first
    return first.time if first is not None and first.time is not None else float("inf")


def _first_error(own: Sequence[Sighting]) -> FirstError | None:
    for s in own:
        if s.rule.severity is Severity.ERROR:
            occ = s.occurrence
            return FirstError(s.rule.category, s.rule.id, occ.file or "", s.hit.line, s.hit.time)
    return None


def _rank_report(
    number: int,
    rank: RankFacts | None,
    status: tuple[Status, str],
    own: Sequence[Sighting],
    host: str | None,
) -> RankReport:
    if rank is None:
        return RankReport(number, None, None, status[0], status[1], host=host)
    f = rank.primary
    return RankReport(
        rank=number,
        log_dir=f.log_dir,
        file=f.path,
        status=status[0],
        status_reason=status[1],
        pid=rank.pid,
        host=host,
        memory=next((x.memory for x in rank.files if x.memory), None),
        compile=f.compile if f.compile.count or f.compile.started or f.compile.stages else None,
        progress=next((x.progress for x in rank.files if x.progress), None),
        first_error=_first_error(own),
        first_time=rank.first_time,
        last_time=rank.last_time,
        lines=rank.lines,
        exit_code=rank.exit_code,
    )


def _outcome(statuses: Mapping[int, tuple[Status, str]], findings: Sequence[Finding]) -> str:
    if any(f.severity is Severity.ERROR for f in findings):
        return "failed"
    plain = [s for s, _ in statuses.values()]
    if any(s in ENDED for s in plain):
        return "failed"
    if plain and all(s is Status.FINISHED for s in plain):
        return "ok"
    if any(s in (Status.STARTING, Status.COMPILING, Status.TRAINING) for s in plain):
        return "running"
    return "unknown"


def judge(run: RunFacts, rules: Sequence[Rule], warnings: Sequence[str] = ()) -> Report:
    """The verdict on a run."""
    by_id = {r.id: r for r in rules}
    found = sightings(run, by_id)
    own = _own(found)
    statuses = _statuses(run, own)
    cause, extra = _root_cause(run, found, statuses, by_id)
    killed = _killed(run, statuses, by_id, cause)
    if killed is not None:
        extra = [*extra, killed]
    findings = _findings(found, cause, extra)
    hosts = {g.rank: g.host for g in run.registrations}
    ranks = tuple(
        _rank_report(n, run.rank(n), statuses[n], own.get(n, []), hosts.get(n))
        for n in sorted(statuses)
    )
    return Report(
        log_dirs=run.log_dirs,
        outcome=_outcome(statuses, findings),
        root_cause=cause,
        ranks=ranks,
        findings=tuple(findings),
        warnings=tuple(warnings),
        files=sum(len(r.files) for r in run.ranks) + len(run.schedulers) + len(run.consoles),
        bytes=sum(f.size for r in run.ranks for f in r.files)
        + sum(f.size for f in (*run.schedulers, *run.consoles)),
    )
