"""msrun (and torchrun) command lines → world, local_worker_num, nnodes, node_rank...

Options are matched as argparse does (`--x=y` or `--x y`, and unambiguous prefixes),
which is how msrun reads `--rank $NODE_RANK` as `--rank_table_file` and leaves
node_rank at -1 (mindspore-logs.md, section 2.1). Defaults are msrun's own
(`--worker_num 8 --local_worker_num 8 --master_port 8118 --join False`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from msrunwatch.core.errors import ConfigError
from msrunwatch.read.config.common import Doc, TracedValue, parse_int
from msrunwatch.read.config.flagnames import checked_entry, unrecognized
from msrunwatch.read.config.megatron import is_option, read_args
from msrunwatch.read.config.mflaunch import ENTRY, mindformers_options
from msrunwatch.read.config.model import Source, TrainingConfig, Value
from msrunwatch.read.config.shellexpand import Field
from msrunwatch.read.config.shellvars import is_placeholder
from msrunwatch.read.config.shellwalk import Launch, Walker
from msrunwatch.read.config.shellwords import Command, ShellSyntaxError, lex

INT, STR, BOOL, FLAG = "int", "str", "bool", "flag"

MSRUN_OPTIONS: dict[str, str] = {
    "worker_num": INT,
    "local_worker_num": INT,
    "master_addr": STR,
    "master_port": INT,
    "node_rank": INT,
    "log_dir": STR,
    "join": BOOL,
    "cluster_time_out": INT,
    "bind_core": STR,
    "bind_numa": STR,
    "sim_level": INT,
    "sim_rank_id": INT,
    "rank_table_file": STR,
    "worker_log_name": STR,
    "tail_worker_log": STR,
}
"""msrun's options (MindSpore 2.10 `mindspore/parallel/cluster/run.py`); all take a value."""

MSRUN_NAMES = {
    "worker_num": "world",
    "local_worker_num": "local_worker_num",
    "master_addr": "master_addr",
    "master_port": "master_port",
    "node_rank": "node_rank",
    "log_dir": "log_dir",
    "join": "join",
    "sim_level": "sim_level",
    "sim_rank_id": "sim_rank_id",
}
MSRUN_DEFAULTS: dict[str, object] = {
    "world": 8,
    "local_worker_num": 8,
    "master_port": 8118,
    "join": False,
}

TORCHRUN_OPTIONS: dict[str, str] = {
    "nnodes": STR,
    "nproc_per_node": STR,
    "node_rank": INT,
    "master_addr": STR,
    "master_port": INT,
    "rdzv_backend": STR,
    "rdzv_endpoint": STR,
    "rdzv_id": STR,
    "rdzv_conf": STR,
    "max_restarts": INT,
    "monitor_interval": STR,
    "start_method": STR,
    "role": STR,
    "log_dir": STR,
    "redirects": STR,
    "tee": STR,
    "local_addr": STR,
    "logs_specs": STR,
    "local_ranks_filter": STR,
    "standalone": FLAG,
    "module": FLAG,
    "no_python": FLAG,
    "run_path": FLAG,
}
TORCHRUN_NAMES = {
    "nproc_per_node": "local_worker_num",
    "nnodes": "nnodes",
    "node_rank": "node_rank",
    "master_addr": "master_addr",
    "master_port": "master_port",
    "log_dir": "log_dir",
}
TORCHRUN_DEFAULTS: dict[str, object] = {"local_worker_num": 1, "nnodes": 1, "master_port": 29500}

DEEPSPEED_OPTIONS: dict[str, str] = {
    "num_gpus": INT,
    "num_nodes": INT,
    "node_rank": INT,
    "master_addr": STR,
    "master_port": INT,
    "hostfile": STR,
    "include": STR,
    "exclude": STR,
    "launcher": STR,
    "launcher_args": STR,
    "min_elastic_nodes": INT,
    "max_elastic_nodes": INT,
    "no_python": FLAG,
    "module": FLAG,
    "no_local_rank": FLAG,
    "force_multi": FLAG,
    "autotuning": STR,
    "elastic_training": FLAG,
    "bind_cores_to_rank": FLAG,
    "bind_core_list": STR,
    "ssh_port": INT,
}
"""The deepspeed launcher's options (deepspeed/launcher/runner.py); without --num_gpus it takes
every card it sees, and without a hostfile one node."""
DEEPSPEED_NAMES = {
    "num_gpus": "local_worker_num",
    "num_nodes": "nnodes",
    "node_rank": "node_rank",
    "master_addr": "master_addr",
    "master_port": "master_port",
    "hostfile": "hostfile",
}
DEEPSPEED_DEFAULTS: dict[str, object] = {"master_port": 29500}
LAUNCHER_OPTIONS = {
    "torchrun": (TORCHRUN_OPTIONS, TORCHRUN_NAMES),
    "deepspeed": (DEEPSPEED_OPTIONS, DEEPSPEED_NAMES),
}
"""Launcher -> (its options, the normalised names of those it records); msrun otherwise."""


@dataclass
class Launcher:
    """What a launcher's options say, and the training script and its arguments."""

    kind: str
    values: dict[str, TracedValue] = field(default_factory=dict)
    """Options written on the command line."""
    defaults: dict[str, TracedValue] = field(default_factory=dict)
    """The launcher's defaults for options left out (Source None)."""
    script: Field | None = None
    args: list[Field] = field(default_factory=list)
    opaque: list[Field] = field(default_factory=list)
    """Unresolved words among the options: they may hold more options."""
    unknown: list[str] = field(default_factory=list)
    """Options the launcher does not know, or that are ambiguous prefixes."""


def _match(given: str, options: dict[str, str]) -> str | None:
    if given in options:
        return given
    hits = [name for name in options if name.startswith(given)]
    return hits[0] if len(hits) == 1 else None


def parse_launcher(kind: str, fields: Sequence[Field], doc: Doc) -> Launcher:
    """Read msrun or torchrun options up to the training script."""
    torch = kind in ("torchrun", "deepspeed")
    options, names = LAUNCHER_OPTIONS.get(kind, (MSRUN_OPTIONS, MSRUN_NAMES))
    out = Launcher(kind)
    rank_prefix: TracedValue | None = None
    i = 0
    while i < len(fields):
        f = fields[i]
        text = f.text
        if not text and f.unresolved is not None:
            if not is_placeholder(f.unresolved):
                out.opaque.append(f)
            i += 1
            continue
        if not text.startswith("-"):
            out.script, out.args = f, list(fields[i + 1 :])
            break
        i += 1
        written, eq, _ = text.partition("=")
        given = written.lstrip("-")
        if torch:
            given = "module" if written == "-m" else given.replace("-", "_")
        option = _match(given, options) if written.startswith("--") or torch else None
        if option is None:
            out.unknown.append(written)
            continue
        if options[option] == FLAG:
            continue
        if eq:
            value: Field | None = f.tail(len(written) + 1)
        elif i < len(fields) and not is_option(fields[i]):
            value, i = fields[i], i + 1
        else:
            value = None
        flag_src = doc.source(*f.at())
        if option == "rank_table_file" and given != option and not torch:
            shown = f"{written} {value.text}" if value is not None else written
            why = (
                f"msrun reads `{shown}` as --rank_table_file (argparse prefix matching), "
                "so node_rank stays -1 and the scheduler assigns the ranks"
            )
            rank_prefix = TracedValue(None, flag_src, why)
            continue
        name = names.get(option)
        if name is not None:
            out.values[name] = _convert(value, options[option], written, flag_src, doc)
    if rank_prefix is not None and "node_rank" not in out.values:
        out.values["node_rank"] = rank_prefix
    _finish(out)
    return out


def _convert(
    value: Field | None, kind: str, option: str, flag_src: Source, doc: Doc
) -> TracedValue:
    if value is None:
        return TracedValue(None, flag_src, f"{option} has no value")
    line, col = value.at()
    source = doc.source(line, col)
    via = flag_src if flag_src.line != line else None
    if value.unresolved is not None:
        return TracedValue(None, source, value.unresolved, via)
    text = value.text
    if kind == INT:
        number = parse_int(text)
        if number is None:
            return TracedValue(None, source, f"{option} {text!r} is not an integer", via)
        return TracedValue(number, source, None, via)
    if kind == BOOL:
        try:
            flag = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            flag = None
        if not isinstance(flag, bool):
            return TracedValue(None, source, f"{option} {text!r} is not True or False", via)
        return TracedValue(flag, source, None, via)
    return TracedValue(text, source, None, via)


def _finish(out: Launcher) -> None:
    if out.kind == "torchrun":
        _torchrun(out)
        return
    if out.kind == "deepspeed":
        _deepspeed(out)
        return
    for name, default in MSRUN_DEFAULTS.items():
        if name not in out.values:
            out.defaults[name] = TracedValue(default)
    world = out.values.get("world") or out.defaults["world"]
    local = out.values.get("local_worker_num") or out.defaults["local_worker_num"]
    if isinstance(world.value, int) and isinstance(local.value, int) and local.value > 0:
        if world.value % local.value:
            why = (
                f"--worker_num {world.value} is not a multiple of --local_worker_num {local.value}"
            )
            out.defaults["nnodes"] = TracedValue(None, world.source, why)
        else:
            out.defaults["nnodes"] = TracedValue(world.value // local.value, world.source)


def _torchrun(out: Launcher) -> None:
    for name in ("local_worker_num", "nnodes"):
        v = out.values.get(name)
        if v is None or v.value is None:
            continue
        number = parse_int(str(v.value))
        why = f"{v.value!r} is not a fixed count (elastic range or device kind)"
        out.values[name] = TracedValue(number, v.source, None if number is not None else why, v.via)
    for name, default in TORCHRUN_DEFAULTS.items():
        if name not in out.values:
            out.defaults[name] = TracedValue(default)
    nproc = out.values.get("local_worker_num") or out.defaults["local_worker_num"]
    nodes = out.values.get("nnodes") or out.defaults["nnodes"]
    if isinstance(nproc.value, int) and isinstance(nodes.value, int):
        src = nproc.source or nodes.source
        out.defaults["world"] = TracedValue(nproc.value * nodes.value, src)


def _deepspeed(out: Launcher) -> None:
    for name, default in DEEPSPEED_DEFAULTS.items():
        if name not in out.values:
            out.defaults[name] = TracedValue(default)
    gpus, nodes = out.values.get("local_worker_num"), out.values.get("nnodes")
    if nodes is None and "hostfile" not in out.values:
        nodes = out.defaults["nnodes"] = TracedValue(1)
    if gpus is None or nodes is None:
        return
    if isinstance(gpus.value, int) and isinstance(nodes.value, int):
        out.defaults["world"] = TracedValue(gpus.value * nodes.value, gpus.source)


def launcher_values(launcher: Launcher) -> dict[str, TracedValue]:
    """The launcher's values: written options, then defaults and derived counts."""
    return {**launcher.defaults, **launcher.values}


def read_msrun(cmdline: str, origin: str = "<msrun>") -> TrainingConfig:
    """Read an msrun (or torchrun) command line, as given to `--msrun`."""
    doc = Doc(origin, cmdline)
    try:
        commands = lex(cmdline)
    except ShellSyntaxError as exc:
        raise doc.error(exc.line, str(exc)) from None
    except RecursionError:
        raise doc.error(None, "nested too deeply to read") from None
    walker = Walker(missing="is not set on the command line")
    try:
        walker.run(commands)
    except RecursionError:
        raise doc.error(None, "nested too deeply to read") from None
    launch = walker.launches[0] if walker.launches else _bare_options(walker, commands, doc)
    if launch.kind == "python":
        raise doc.error(launch.line, "expected msrun or torchrun, got a plain python command")
    launcher = parse_launcher(launch.kind, launch.fields, doc)
    values: dict[str, Value] = dict(launcher_values(launcher))
    values["launcher"] = TracedValue(launch.kind)
    sim = launch.prefix.get("MS_SIMULATION_LEVEL")
    if "sim_level" not in launcher.values and sim is not None:
        level = parse_int(sim.value.text)
        why = sim.reason or sim.value.unresolved
        if level is None and why is None:
            why = f"MS_SIMULATION_LEVEL {sim.value.text!r} is not an integer"
        values["sim_level"] = TracedValue(level, doc.source(sim.line, sim.col), why)
    if launcher.script is not None and launcher.script.text.endswith(ENTRY):
        # MindFormers: run_mindformer.py's options (--run_mode) go over the YAML's
        words = [f.text for f in launcher.args]
        values.update(mindformers_options(words, doc.source(launch.line)))
        return TrainingConfig(origin, "msrun", values)
    args = read_args(launcher.args, doc, defaults=False)
    if args.flags:
        values.update(args.values)
        values["framework"] = Value("megatron")
        if args.stray:
            values["stray_args"] = stray_value(args.stray, doc)
        script = launcher.script.text.rsplit("/", 1)[-1] if launcher.script else None
        if checked_entry(script, "deepspeed" in args.values):
            values.update(unrecognized(args.unknown, doc))
    return TrainingConfig(origin, "msrun", values)


def _bare_options(walker: Walker, commands: Sequence[Command], doc: Doc) -> Launch:
    """`--worker_num=8 ...` without the program name: msrun options."""
    words = [w for cmd in commands for w in cmd.words]
    fields = [f for w in words for f in walker.expander.fields(w)]
    if not fields:
        raise ConfigError(f"{doc.path}: empty msrun command line")
    if not fields[0].text.startswith("--"):
        got = fields[0].text or fields[0].unresolved or ""
        expected = "expected an msrun command line (msrun --worker_num=8 ...)"
        raise doc.error(fields[0].at()[0], f"{expected}, got {got!r}")
    return Launch("msrun", fields, 1, walker.env.snapshot())


def stray_value(stray: Sequence[Field], doc: Doc) -> TracedValue:
    """The words no flag takes, located at the first one; a blank word (a `\\ ` at the end of a
    line, which ends the command there) is shown as the script wrote it."""
    words = [f.text if f.text.strip() else "\\" + f.text for f in stray]
    return TracedValue(words, doc.source(*stray[0].at()))
