"""`msrunwatch estimate`: per-stage device memory from training configs."""

from __future__ import annotations

import argparse
from typing import Any

from msrunwatch.commands.common import launch_options, write
from msrunwatch.core.exit_codes import ExitCode


def cmd_estimate(args: argparse.Namespace) -> int:
    """Estimate each pipeline stage's device memory from training configs."""
    import json

    from msrunwatch.drivers.configs import read_all
    from msrunwatch.judge.config.derive import with_world, world_of
    from msrunwatch.judge.config.memory import estimate
    from msrunwatch.report import estimate as render

    configs = read_all(args.configs, args.msrun)
    estimates = [estimate(with_world(c, world_of(c, args.devices))) for c in configs]
    if args.format == "json":
        out = json.dumps([render.to_dict(e) for e in estimates], indent=2) + "\n"
    else:
        out = "\n".join(render.render_text(e) for e in estimates)
    write(out, args.output)
    over = any(s.verdict == "over" for e in estimates for s in e.stages)
    return ExitCode.FINDINGS if over else ExitCode.OK


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "estimate",
        help="estimate each pipeline stage's device memory from a training config",
        description="Model states, activations (recompute, TP/SP, flash attention, GQA, SwiGLU), "
        "in-flight micro-batches and the last stage's logits, per pipeline stage, against the "
        "usable device memory; every assumption is printed. Exit 1 when a stage will not fit.",
    )
    p.add_argument("configs", nargs="+", metavar="CONFIG", help="MindFormers YAML or launch script")
    p.add_argument("--format", choices=("text", "json"), default="text")
    launch_options(p)
    p.add_argument("--output", "-o", metavar="FILE", help="write the estimate here")
    p.set_defaults(handler=cmd_estimate)
