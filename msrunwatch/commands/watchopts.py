"""Options `watch` shares between following one node and the cluster view."""

from __future__ import annotations

import argparse
from typing import Any

from msrunwatch.core.errors import UsageError


def headless_options(args: argparse.Namespace, **more: Any) -> Any:
    """The HeadlessOptions the command line gives (`more`: what only some modes set)."""
    from msrunwatch.live.headless import HeadlessOptions

    refuse_alone(args)
    return HeadlessOptions(
        events=args.events,
        metrics_port=args.metrics_port,
        metrics_addr=args.metrics_addr,
        on_finding=args.on_finding,
        on_every_finding=args.on_every_finding,
        exit_when_done=args.exit_when_done,
        **more,
    )


def outputs_asked(args: argparse.Namespace) -> list[str]:
    """The headless outputs the command line asks for, by option name."""
    given = (
        ("--events", args.events),
        ("--metrics-port", args.metrics_port),
        ("--publish", getattr(args, "publish", None)),
        ("--on-finding", args.on_finding),
    )
    return [name for name, value in given if value is not None]


def refuse_alone(args: argparse.Namespace) -> None:
    """--on-every-finding changes what --on-finding runs for: alone it would do nothing."""
    if args.on_every_finding and not args.on_finding:
        raise UsageError(
            "--on-every-finding says when --on-finding CMD runs: give --on-finding too"
        )


def view_options(args: argparse.Namespace, **more: Any) -> Any:
    """The outputs the live view drives as headless does (None when none is asked for);
    events to stdout cannot be: the view is there."""
    refuse_alone(args)
    if not outputs_asked(args):
        return None
    if args.events == "-":
        raise UsageError(
            "--events -: standard output is the live view; give a FILE, "
            "or --headless to write the events to standard output"
        )
    return headless_options(args, **more)


def refuse_outputs(args: argparse.Namespace) -> None:
    """Without a terminal the run is not followed (triage's report is printed instead):
    an output asked for would never be written, so it is refused rather than ignored."""
    refuse_alone(args)
    asked = outputs_asked(args)
    if asked:
        raise UsageError(
            f"{asked[0]} needs the run followed, but standard output is not a terminal (the "
            "triage report would be printed instead): add --headless"
        )


def cluster_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("cluster (a job on many nodes)")
    group.add_argument(
        "--cluster",
        action="store_true",
        help="the DIR arguments are the nodes' watchers (host:port, URLs, a file listing "
        "them) or a directory of their --publish snapshots: one view of the whole job",
    )
    group.add_argument(
        "--interval",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="with --cluster: fetch every node's snapshot this often (default 2)",
    )
    group.add_argument(
        "--expect-hosts",
        metavar="FILE",
        help="with --cluster: the job's hosts, one per line; each is named when nothing "
        "comes from it, even before the scheduler's table lists it",
    )
    group.add_argument(
        "--clock-tolerance",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="with --cluster: how far two nodes' clocks may differ where the logs cannot "
        "measure it (default 1)",
    )
