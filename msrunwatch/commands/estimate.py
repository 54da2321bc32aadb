"""`msrunwatch estimate`: per-stage device memory from training configs."""

from __future__ import annotations

import argparse
from typing import Any

from msrunwatch.commands.common import FILE, add_command, launch_options, verbose, write
from msrunwatch.core.exit_codes import ExitCode


def cmd_estimate(args: argparse.Namespace) -> int:
    """Estimate each pipeline stage's device memory from training configs."""
    import json

    from msrunwatch.drivers.configs import read_all
    from msrunwatch.judge.config.derive import with_world, world_of
    from msrunwatch.judge.config.memory import estimate
    from msrunwatch.report import estimate as render

    verbose(args, "settings: none read, rules: none run (estimate applies no rules)")
    configs = read_all(args.configs, args.msrun, args.sets)
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
    p = add_command(
        sub,
        "estimate",
        "estimate each pipeline stage's device memory from a training config",
        "Model states, activations (recompute, TP/SP, flash attention, GQA, SwiGLU), "
        "in-flight micro-batches and the last stage's logits, per pipeline stage, against the "
        "usable device memory; every assumption is printed. Sizes are MiB.",
        (
            "msrunwatch estimate pretrain_qwen25_7b.sh",
            "msrunwatch estimate train.yaml --devices 8 --format json",
        ),
        "exit codes:\n  0  every stage fits\n  1  a stage will not fit\n"
        "  2  bad usage or an unreadable config",
    )
    configs = p.add_argument(
        "configs", nargs="+", metavar="CONFIG", help="MindFormers YAML or launch script"
    )
    configs.complete = FILE  # type: ignore[attr-defined]
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: a table per stage and the assumptions; json: the same figures",
    )
    launch_options(p)
    p.add_argument("--output", "-o", metavar="FILE", help="write the estimate here (- stdout)")
    p.set_defaults(handler=cmd_estimate)
