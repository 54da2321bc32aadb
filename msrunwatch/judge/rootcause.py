"""Which rank failed first and why: the root cause of a failed run.

In order of preference:
1. the earliest error a rank logged about itself that its rule calls a cause (an OOM,
   a crash, a bad strategy), never a timeout or a kill by msrun;
2. a rank that others name as the peer they waited on or received a wrong size from (a
   rule's `peer`), when it logged no fault of its own: it hung, or left early;
3. a run-scope cause rule (ranks that never registered, ranks silent while the others
   timed out waiting for them);
4. the rank the scheduler names the first it lost, or a launcher the first that failed;
5. the earliest error of any kind, when nothing better is known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.model import RootCause, Status
from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.sweep import TIE_SECONDS, Clocks, FirstLost, spoke_up, uncertainty
from msrunwatch.read.cluster import Group
from msrunwatch.rules.matcher import capture_value
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import rank_name, rank_ranges, ranks_phrase, render
from msrunwatch.rules.vocab import Blame, Role, Severity


def _cause(first: Sighting, ranks: Sequence[int], reason: str) -> RootCause:
    occ = first.occurrence
    return RootCause(
        ranks=tuple(sorted(set(ranks))),
        category=first.rule.category,
        rule=first.rule.id,
        log_dir=occ.log_dir,
        file=occ.file,
        line=occ.line,
        time=occ.time,
        message=first.hit.message,
        reason=reason,
        time_exact=first.hit.time_exact,
    )


def _same_fault(first: Sighting, found: Sequence[Sighting]) -> list[Sighting]:
    return [
        s
        for s in found
        if s.own
        and s.rank is not None
        and (s.hit.rule, s.hit.fingerprint) == (first.hit.rule, first.hit.fingerprint)
    ]


def _is_cause(s: Sighting) -> bool:
    """A fault of its own: a rank's about itself, or the scheduler's or msrun's about the
    job (its port was taken, it was stopped), never the scheduler's word on a rank."""
    if s.rule.role is not Role.CAUSE or s.rule.severity is not Severity.ERROR:
        return False
    return (s.own and s.rank is not None) or (not s.own and s.rank is None)


def order_unknown(a: Sighting, b: Sighting, clocks: Clocks | None) -> float | None:
    """Seconds within which the order of two sightings on different clocks is not known
    (None: one clock, or no clocks: their times compare as they are)."""
    return uncertainty(_file(a), _file(b), clocks)


def _file(s: Sighting) -> tuple[str, str]:
    return (s.occurrence.log_dir or "", s.occurrence.file or "")


def _ties(
    first: Sighting, causes: Sequence[Sighting], named: Sequence[int], clocks: Clocks | None
) -> tuple[list[int], float]:
    """Other ranks' own faults that may have come first: closer to the first in time than
    their clocks can tell apart."""
    t0, ranks, widest = first.hit.time, [], 0.0
    for s in causes:
        if s is first or s.rank is None or s.rank in named or t0 is None or s.hit.time is None:
            continue
        within = order_unknown(first, s, clocks)
        if within is not None and s.hit.time - t0 <= within:
            ranks.append(s.rank)
            widest = max(widest, within)
    return ranks, widest


def _said_by(first: Sighting) -> str:
    """Why the earliest cause decided, in words that say who said it: a rank's own line,
    msrun's console about a rank's process, a rank rule reading a rank's log as a whole (an
    absence, or lines counted), or the scheduler or msrun about the job."""
    if first.why or first.rule.why:  # the rule says why it decides, in its own words
        return first.why or _line_why(first)
    if first.rank is None:
        return "the earliest fault the scheduler or msrun logged about the job itself"
    if first.rule.scope is Scope.RANK:  # no line says it: the rule's title does
        whole = f"{rank_name(first.rank)}'s whole log" if first.rank >= 0 else "the whole log"
        return f"{_lowered(first.rule.title)}, read from {whole}"
    if first.by_msrun:
        return "the earliest fault msrun reported about a rank's process"
    return "the earliest fault a rank logged about itself"


def _line_why(s: Sighting) -> str:
    """A line rule's `why`, filled from the line's captures."""
    return render(s.rule.why, {name: capture_value(text) for name, text in s.hit.captures})


def from_causes(found: Sequence[Sighting], clocks: Clocks | None = None) -> RootCause | None:
    """Preference 1: the earliest own cause (with the ones its clock cannot tell apart)."""
    causes = [s for s in found if _is_cause(s)]
    if not causes:
        return None
    first = causes[0]
    same = _same_fault(first, causes)
    reason = _said_by(first)
    if first.rule.blame is Blame.ALL:
        ranks = sorted({s.rank for s in same if s.rank is not None})
        if len(ranks) > 1:  # a fault every rank meets alike (its rule blames all): all named
            reason += f", reported alike by {ranks_phrase(ranks)}"
        return _cause(first, ranks, reason)
    t0 = first.hit.time
    ranks = [
        s.rank
        for s in same
        if s.rank is not None
        and (
            s is first
            or (t0 is not None and s.hit.time is not None and abs(s.hit.time - t0) < TIE_SECONDS)
        )
    ]
    tied, within = _ties(first, causes, ranks, clocks)
    others = sorted({s.rank for s in same if s.rank is not None} - set(ranks) - set(tied))
    if others:
        reason += f"; rank(s) {rank_ranges(others)} hit the same fault later"
    if tied:
        reason += (
            f"; rank(s) {rank_ranges(tied)} logged a fault of their own within the clock "
            f"uncertainty (±{within * 1000:,.0f} ms): their order is not known"
        )
    return _cause(first, [*ranks, *tied], reason)


Groups = Mapping[int, Mapping[str, Group]]
"""Each rank's communicator groups, by name, as its log created them."""


def _named_peer(s: Sighting, world: int, groups: Groups | None = None) -> int | None:
    """The rank a sighting's rule says its rank waited on, if it names a valid other rank
    (a group-local rank through the group's members, when its group is known)."""
    peer = s.rule.peer
    if peer is None or s.rank is None or s.rank < 0:
        return None
    env = {key: capture_value(value) for key, value in s.hit.captures}
    named = peer.rank({**env, "rank": s.rank, "world": world})
    if isinstance(named, bool) or not isinstance(named, int):
        return None
    if peer.group is not None:
        name = s.hit.capture(peer.group)
        group = (groups or {}).get(s.rank, {}).get(name) if name else None
        found = group.global_rank(named) if group is not None else None
        if found is None:
            return None  # a group-local rank of a group not known: evidence, not a peer
        named = found
    return named if 0 <= named < world and named != s.rank else None


def from_peers(
    found: Sequence[Sighting],
    plain: Mapping[int, Status],
    world: int,
    blind: frozenset[int] = frozenset(),
    groups: Groups | None = None,
) -> RootCause | None:
    """Preference 2: a rank others waited on (or received a wrong size from) that logged no
    fault of its own; the earliest such naming decides. A rank whose node sent no facts
    (`blind`) is not known to have logged nothing: it is not named."""
    spoke = spoke_up(found)
    for s in found:
        named = _named_peer(s, world, groups)
        if named is None or named in spoke or named in blind:
            continue
        peer = s.rule.peer
        assert peer is not None
        ended = plain.get(named) is Status.FINISHED
        category = (peer.if_ended or peer.suspect) if ended else peer.suspect
        how = "ended normally while the others still needed it" if ended else "logged no fault"
        reason = f"rank {s.rank} named rank {named} ({s.occurrence.file}:{s.hit.line}), which {how}"
        return replace(_cause(s, [named], reason), category=category)
    return None


def run_level(rule: Rule, ranks: Sequence[int], message: str, reason: str) -> RootCause:
    """A root cause no single log line states, found from the run as a whole."""
    return RootCause(
        ranks=tuple(sorted(ranks)),
        category=rule.category,
        rule=rule.id,
        log_dir=None,
        file=None,
        line=None,
        time=None,
        message=message,
        reason=reason,
    )


def _unprompted(rule: Rule) -> str:
    """Why a cause no rank logged of itself was chosen: the rule's title says who named it
    and as what (the scheduler, a launcher, the run as a whole)."""
    return f"{_lowered(rule.title)} (no rank logged a fault of its own)"


def _lowered(title: str) -> str:
    """A rule's title as the middle of a sentence."""
    return f"{title[:1].lower()}{title[1:]}"


def fallback(
    found: Sequence[Sighting], extra: Sequence[Synthetic], lost: FirstLost | None
) -> RootCause | None:
    """No rank logged a fault of its own: a run-level cause, the scheduler's word (`lost`:
    sweep.first_lost, the rank it lost first, or of several lost in one sweep the one whose
    log stopped first), unless the rank it names logged its own timeouts (then it waited
    too, and is no cause), the earliest error."""
    for syn in extra:
        if syn.rule.role is Role.CAUSE and syn.rule.severity is Severity.ERROR:
            return run_level(syn.rule, syn.ranks, syn.message, syn.why or _unprompted(syn.rule))
    if lost is not None and not set(lost.ranks) & spoke_up(found):
        reason = (
            _said_by(lost.sighting) if lost.sighting.rule.why else _unprompted(lost.sighting.rule)
        )
        return _cause(lost.sighting, lost.ranks, f"{reason}; {lost.why}" if lost.why else reason)
    errors = [s for s in found if s.rule.severity is Severity.ERROR]
    if not errors:
        return None
    first = errors[0]
    ranks = [s.rank for s in _same_fault(first, errors) if s.rank is not None]
    return _cause(first, ranks, "the earliest error (no rank logged a fault of its own)")
