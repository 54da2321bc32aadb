"""`msrunwatch watch` (and `msrunwatch DIR`): follow a run live, in the TUI or headless."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from msrunwatch.commands.common import paths, rule_options, rules_of
from msrunwatch.core.errors import UsageError


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a run live: the terminal UI, or JSON events and metrics with --headless."""
    from msrunwatch.live import observer
    from msrunwatch.live.run import LiveRun

    dirs, consoles = paths(args.dirs, "log directory"), paths(args.console, "--console")
    for target in dirs:
        if not Path(target).exists():
            raise UsageError(f"{target}: no such file or directory")
    live = LiveRun(dirs, rules_of(args), consoles, stall_after_s=args.stall_after)
    watcher = observer.start(dirs, live.dirty, poll=args.poll)
    try:
        if args.headless:
            from msrunwatch.live.headless import Headless, HeadlessOptions

            options = HeadlessOptions(
                events=args.events,
                metrics_port=args.metrics_port,
                metrics_addr=args.metrics_addr,
                on_finding=args.on_finding,
                exit_when_done=args.exit_when_done,
                poll=args.poll,
            )
            return int(Headless(live, options).run())
        from msrunwatch.tui.app import run_tui  # type: ignore[import-not-found,unused-ignore]

        return int(run_tui(live))
    finally:
        watcher.stop()
        live.close()


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "watch",
        help="follow a run live (also: `msrunwatch DIR`); --headless for clusters",
        description="Follow msrun logs as they grow: a live view of every rank, or with "
        "--headless JSON events and Prometheus metrics. Never writes into the log directory.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="msrun log directory or log file")
    p.add_argument("--console", action="append", metavar="FILE", help="msrun's console output")
    p.add_argument(
        "--poll",
        action="store_true",
        help="poll for changes (NFS, Lustre, GPFS: where inotify misses other hosts)",
    )
    p.add_argument(
        "--stall-after",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="a rank silent this long (and for 10 of its steps) while others write "
        "is stalled (default 120)",
    )
    p.add_argument("--headless", action="store_true", help="no terminal UI: JSON lines events")
    p.add_argument("--events", metavar="FILE", help="headless: write events here (default stdout)")
    p.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="headless: serve Prometheus metrics on this port",
    )
    p.add_argument(
        "--metrics-addr",
        default="127.0.0.1",
        metavar="ADDR",
        help="headless: address for the metrics server (default 127.0.0.1: this host only; "
        "0.0.0.0 or :: for Prometheus on other hosts)",
    )
    p.add_argument(
        "--on-finding",
        metavar="CMD",
        help="headless: run CMD (via the shell) for each new error finding, with its JSON on stdin",
    )
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="headless: exit with triage's exit code once every rank ended",
    )
    rule_options(p)
    p.set_defaults(handler=cmd_watch)
