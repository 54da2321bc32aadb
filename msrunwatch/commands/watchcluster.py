"""`msrunwatch watch --cluster SOURCE...`: one live view over every node's snapshot.

The sources are the per-node watchers (`host:port` of their metrics port, URLs, a file
listing them) or a directory they `--publish` to. The view is the TUI, or with --headless
events, metrics and --on-finding (once per cause) for the whole job; without a terminal, one
poll's verdict is printed, as `triage` prints it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from msrunwatch.commands.common import rules_of, write
from msrunwatch.commands.watchopts import refuse_outputs, view_options
from msrunwatch.core.errors import UsageError
from msrunwatch.core.exit_codes import ExitCode


def cmd_watch_cluster(args: argparse.Namespace, terminal: bool) -> int:
    from msrunwatch.drivers.cluster import expected_hosts
    from msrunwatch.live.cluster.run import ClusterRun
    from msrunwatch.live.cluster.sources import Sources
    from msrunwatch.live.cluster.view import Options

    if args.publish:
        raise UsageError(
            "--publish writes one node's facts for watch --cluster to read; "
            "the cluster view has none of its own"
        )
    sources = Sources(args.dirs)
    for warning in sources.warnings:
        print(f"msrunwatch: warning: {warning}", file=sys.stderr)
    options = Options(
        rules_of(args), args.clock_tolerance, args.stall_after, expected_hosts(args.expect_hosts)
    )
    run = ClusterRun(sources, options, interval_s=args.interval)
    try:
        if args.headless:
            return _headless(args, run)
        if not terminal:
            refuse_outputs(args)
            return _once(args, run)
        return _view(args, run)
    finally:
        run.close()


def _view(args: argparse.Namespace, run: Any) -> int:
    """The TUI over the cluster, with the outputs asked for, as headless drives them."""
    from msrunwatch.live.cluster.metrics import ClusterCollector
    from msrunwatch.tui.launch import run_tui  # type: ignore[import-not-found,unused-ignore]

    shown = [f"--cluster {' '.join(run.cluster)}"]
    outputs = view_options(args, hook_on_cause=True)
    collector = ClusterCollector(run.clock) if outputs is not None else None
    return int(run_tui(run, 0.25, None, args.exit_when_done, shown, outputs=outputs,
                       collector=collector))  # fmt: skip


def _once(args: argparse.Namespace, run: Any) -> int:
    """One poll's verdict, printed as triage prints it."""
    from msrunwatch.commands.triage import render

    report = run.tick().report
    shown = argparse.Namespace(format="text", output=None, all_ranks=False, color=args.color)
    write(render(report, shown), None)
    return int(ExitCode.FINDINGS if report.has_errors else ExitCode.OK)


def _headless(args: argparse.Namespace, run: Any) -> int:
    from msrunwatch.commands.watchopts import headless_options
    from msrunwatch.live.cluster.metrics import ClusterCollector
    from msrunwatch.live.headless import Headless

    options = headless_options(args, hook_on_cause=True)
    return int(Headless(run, options, collector=ClusterCollector(run.clock)).run())
