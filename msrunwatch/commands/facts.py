"""`msrunwatch facts`: one node's logs as facts, for `triage` to merge with the others'."""

from __future__ import annotations

import argparse
from typing import Any

from msrunwatch.commands.common import DIRECTORY, add_command, note, paths, rule_options, rules_of
from msrunwatch.core.exit_codes import ExitCode

EXITS = """exit codes:
  0  the facts were written
  2  bad usage, or no log could be read (the facts still say so, for the merge)"""


def cmd_facts(args: argparse.Namespace) -> int:
    """Read this node's logs and write their facts."""
    from msrunwatch.drivers import facts

    paths(args.dirs, "log directory"), paths(args.console, "--console")
    shard = facts.parse_shard(args.shard) if args.shard else None
    written = facts.write(
        args.dirs, rules_of(args), args.output, args.host, shard, args.console or (),
        with_evidence=args.evidence,
    )  # fmt: skip
    for warning in written.warnings:
        note(args, f"warning: {warning}")
    where = "standard output" if written.path == "-" else written.path
    note(
        args,
        f"{written.files} files, {written.records} records, {written.bytes:,} bytes to {where}",
    )
    if written.files > written.unreadable:
        return ExitCode.OK
    note(args, f"error: no log could be read in {', '.join(args.dirs)} (the facts written say so)")
    return ExitCode.USAGE


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = add_command(
        sub,
        "facts",
        "write this node's facts, for a verdict over many nodes",
        "Read the msrun logs of this node as triage does and write what they say (ranks, "
        "faults, times, memory, the scheduler's table, the registration handshake that "
        "measures this node's clock) as JSON lines, a few KB per rank. Run it on every node "
        "of the job (srun, pdsh, kubectl exec), then `msrunwatch triage` over all the facts "
        "gives one verdict. It judges nothing itself.",
        (
            "msrunwatch facts msrun_log -o -                       # to standard output",
            "msrunwatch facts msrun_log -o /shared/facts/          # DIR/<host>.facts.jsonl",
            'srun --ntasks-per-node=1 msrunwatch facts "$LOG_DIR" -o - > facts.jsonl || true',
            "msrunwatch facts /shared/msrun_log --shard 3/8 -o /shared/facts/",
            "msrunwatch triage facts.jsonl                         # the verdict",
        ),
        EXITS,
    )
    target = p.add_argument(
        "dirs", nargs="+", metavar="LOG_DIR", help="msrun log directory or log file"
    )
    target.complete = DIRECTORY  # type: ignore[attr-defined]
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE|DIR/|-",
        default="-",
        help="where to write: - (standard output, the default), a file ({host} is replaced "
        "by this node's name), or a directory (ending in /): DIR/<host>.facts.jsonl, named here",
    )
    p.add_argument(
        "--host",
        metavar="NAME",
        help="this node's name (default: $MSRUNWATCH_HOST, else its hostname)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="read only every N-th file from the K-th (0-based): N nodes share the reading "
        "of one directory on shared storage",
    )
    p.add_argument(
        "--console",
        action="append",
        metavar="FILE",
        help="msrun's saved console output on this node (exit codes, signals); repeatable",
    )
    p.add_argument(
        "--evidence",
        action="store_true",
        help="also write, per file, the lines around its first faults and its last lines "
        "(at most 8 KB), for views that show text without the node's disk",
    )
    rule_options(p)
    p.set_defaults(handler=cmd_facts)
