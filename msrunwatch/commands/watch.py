"""`msrunwatch watch` (and `msrunwatch DIR`): follow a run live, in the TUI or headless.

A target that does not exist yet is waited for (`--wait`), so a job script can start the
watcher before msrun. When standard output is not a terminal, the live view would write
escape codes into a file or a pipe: the triage report is printed instead.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from msrunwatch.commands.common import (
    DIRECTORY,
    add_command,
    near_name,
    note,
    paths,
    rule_options,
    rules_of,
    use_color,
)
from msrunwatch.commands.watchopts import (
    cluster_options,
    headless_options,
    refuse_outputs,
    view_options,
)
from msrunwatch.core.errors import UsageError

FOREVER = math.inf
"""`--wait` without a value."""


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a run live: the terminal UI, or JSON events and metrics with --headless."""
    if args.cluster:
        from msrunwatch.commands.watchcluster import cmd_watch_cluster

        return cmd_watch_cluster(args, _terminal())
    paths(args.dirs, "log directory"), paths(args.console, "--console")
    if not args.headless and not _terminal():
        refuse_outputs(args)
        note(args, "standard output is not a terminal: printing the triage report instead "
             "(watch --headless follows a run without one)")  # fmt: skip
        from msrunwatch.commands.triage import cmd_triage
        from msrunwatch.core.stopping import sigterm_raises

        with sigterm_raises():  # as `triage`: its readers killed, one line, exit 143
            return cmd_triage(_triage_args(args))
    if "-" in args.dirs:
        raise UsageError("- (standard input) is read by triage and check, not followed live")
    outputs = None if args.headless else view_options(args, poll=args.poll, publish=args.publish)
    _refuse_typos(args.dirs, args.wait)
    from msrunwatch.commands.consolehint import say_beside

    say_beside(args, args.dirs)  # on stderr, above the view: there when it closes
    from msrunwatch.live.observer import Arrival
    from msrunwatch.live.run import LiveRun

    live = LiveRun(args.dirs, rules_of(args), args.console or (), stall_after_s=args.stall_after)
    arrival = Arrival(args.dirs, live.dirty, poll=args.poll, wait_s=args.wait)
    try:
        if args.headless:
            return _headless(args, live, arrival)
        from msrunwatch.tui.launch import run_tui  # type: ignore[import-not-found,unused-ignore]

        if args.color == "never":
            os.environ["NO_COLOR"] = "1"
        color = use_color(args.color, sys.stdout)
        code = run_tui(
            live, arrival=arrival, exit_when_done=args.exit_when_done, color=color, outputs=outputs
        )
        return int(code)
    finally:
        arrival.stop()
        live.close()


def _refuse_typos(targets: list[str], wait: float | None) -> None:
    """A missing target whose name is close to one that exists is a typo, not a directory
    msrun will create: say which one was meant, and wait only when --wait asks for it."""
    if wait is not None:
        return
    for target in targets:
        if not os.path.lexists(target):
            near = near_name(target)
            if near is not None:
                raise UsageError(
                    f"{target}: no such file or directory; did you mean {near!r}? "
                    f"(--wait to wait for {target} to appear)"
                )


def _terminal() -> bool:
    return sys.stdout.isatty() and sys.stdin.isatty()


def _headless(args: argparse.Namespace, live: Any, arrival: Any) -> int:
    from msrunwatch.live.headless import Headless

    missing = arrival.missing()
    if missing:
        limit = f" (at most {args.wait:g}s)" if args.wait not in (None, FOREVER) else ""
        note(args, f"waiting for {', '.join(missing)} to appear{limit}")
        if not arrival.wait():
            raise UsageError(f"{missing[0]}: did not appear within {args.wait:g}s")
    options = headless_options(args, poll=args.poll, publish=args.publish)
    return int(Headless(live, options).run())


def _triage_args(args: argparse.Namespace) -> argparse.Namespace:
    """What `triage` needs, from a watch command line."""
    return argparse.Namespace(
        **vars(args),
        format="text",
        output=None,
        all_ranks=False,
        config=None,
        devices=None,
        msrun=None,
    )


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = add_command(
        sub,
        "watch",
        "follow a run live (also: `msrunwatch DIR`); --headless for clusters",
        "Follow msrun logs as they grow: a live view of every rank, or with --headless JSON "
        "events and Prometheus metrics. A directory that does not exist yet is waited for. "
        "Never writes into the log directory. When standard output is not a terminal "
        "(`msrunwatch DIR | cat`, a CI step), the triage report is printed instead.",
        (
            "msrunwatch msrun_log/",
            "msrunwatch node0/msrun_log node1/msrun_log --console msrun_console.txt",
            "msrunwatch msrun_log/ --poll                       # NFS, Lustre, GPFS",
            "msrunwatch watch msrun_log --headless --exit-when-done --events run.jsonl &",
            "msrunwatch watch msrun_log --headless --metrics-port 9464",
        ),
        "exit codes:\n  0  the run looks healthy (or is still running without faults)\n"
        "  1  faults found\n  2  bad usage, or a target that did not appear within --wait\n"
        "  130, 143  stopped by Ctrl+C, SIGTERM (the live view: 143, or 129 on SIGHUP)\n"
        "  141  standard output closed before all was written (`| head`)",
    )
    target = p.add_argument(
        "dirs", nargs="+", metavar="DIR", help="msrun log directory or log file"
    )
    target.complete = DIRECTORY  # type: ignore[attr-defined]
    p.add_argument(
        "--console", action="append", metavar="FILE", help="msrun's console output (repeatable)"
    )
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
    p.add_argument(
        "--wait",
        type=float,
        nargs="?",
        const=FOREVER,
        metavar="SECONDS",
        help="wait at most this long for a DIR that does not exist yet (without SECONDS: for "
        "ever); a DIR whose name is close to one that exists is refused as a typo without it",
    )
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="exit with triage's exit code once every rank ended (in the view too)",
    )
    _headless_options(p)
    cluster_options(p)
    rule_options(p)
    p.set_defaults(handler=cmd_watch)


def _headless_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "headless (events, metrics, --publish and --on-finding work in the view too)"
    )
    group.add_argument("--headless", action="store_true", help="no terminal UI: JSON lines events")
    group.add_argument(
        "--events",
        metavar="FILE",
        help="write events here (default: stdout with --headless, none in the view)",
    )
    group.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics on this port (0: any free port)",
    )
    group.add_argument(
        "--metrics-addr",
        default="127.0.0.1",
        metavar="ADDR",
        help="address for the metrics server (default 127.0.0.1: this host only; 0.0.0.0 "
        "or :: for Prometheus on other hosts)",
    )
    group.add_argument(
        "--publish",
        metavar="DIR",
        help="write this node's facts snapshot to DIR/<host>.facts.jsonl as it changes (for "
        "watch --cluster DIR on shared storage); the last one is its post-mortem facts",
    )
    group.add_argument(
        "--on-finding",
        metavar="CMD",
        help="run CMD (via the shell) once for each error cause (the root cause, another "
        "rank's own fault), with its finding's JSON on stdin",
    )
    group.add_argument(
        "--on-every-finding",
        action="store_true",
        help="run --on-finding for every new error finding, the symptoms (timeouts of the "
        "ranks that waited) and victims too",
    )
