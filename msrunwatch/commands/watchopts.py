"""Options `watch` shares between following one node and the cluster view."""

from __future__ import annotations

import argparse
from typing import Any


def headless_options(args: argparse.Namespace, **more: Any) -> Any:
    """The HeadlessOptions the command line gives (`more`: what only some modes set)."""
    from msrunwatch.live.headless import HeadlessOptions

    return HeadlessOptions(
        events=args.events,
        metrics_port=args.metrics_port,
        metrics_addr=args.metrics_addr,
        on_finding=args.on_finding,
        on_every_finding=args.on_every_finding,
        exit_when_done=args.exit_when_done,
        **more,
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
