"""MindSpeed-LLM / Megatron launch scripts → TrainingConfig, without executing anything.

The script is lexed and walked in order (variables, `export`, `$((...))`, blocks); the
first msrun or torchrun command (else a `python` command with Megatron flags) is read:
its launcher options give world / local_worker_num / node_rank / master_port, and the
training flags give the parallel, batch and model settings. Where the launcher is
silent, the usual script variables (WORLD_SIZE, NPUS_PER_NODE, NNODES, NODE_RANK,
MASTER_PORT) and MS_SIMULATION_LEVEL fill in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msrunwatch.core.errors import ConfigError
from msrunwatch.read.config.common import Doc, TracedValue, parse_int
from msrunwatch.read.config.entry import NOT_JOBS, job_of_entry
from msrunwatch.read.config.flagnames import checked_entry, unrecognized
from msrunwatch.read.config.megatron import read_args
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.read.config.msrun import Launcher, parse_launcher, stray_value
from msrunwatch.read.config.shellexpand import Field, Var
from msrunwatch.read.config.shellwalk import Launch, Walker
from msrunwatch.read.config.shellwords import ShellSyntaxError, iter_commands

SCRIPT_VARIABLES = {
    "world": "WORLD_SIZE",
    "local_worker_num": "NPUS_PER_NODE",
    "node_rank": "NODE_RANK",
    "master_port": "MASTER_PORT",
}
"""Script variables used when there is no launcher command to read them from."""


def read_script(text: str, path: str) -> TrainingConfig:
    """Read a launch script."""
    doc = Doc(path, text)
    values: dict[str, Value] = {"framework": Value("megatron")}
    crlf = text.find("\r\n")
    if crlf >= 0:  # a finding (config-crlf-line-endings); the rest is read as bash would mean it
        line = text.count("\n", 0, crlf) + 1
        values["crlf_line"] = TracedValue(line, doc.source(line))
        text = text.replace("\r\n", "\n")
        doc = Doc(path, text)
    try:
        return _read_launch(text, doc, values)
    except ConfigError:
        if "crlf_line" not in values:
            raise
        # whatever it runs, bash fails on the line endings: that finding, and nothing else
        return TrainingConfig(path, "megatron", {**values, "job": TracedValue("unknown")})


def _read_launch(text: str, doc: Doc, values: dict[str, Value]) -> TrainingConfig:
    """The launch a script starts, read without running it."""
    walker = Walker()
    try:
        walker.run(iter_commands(text))
    except ShellSyntaxError as exc:
        raise doc.error(exc.line, str(exc)) from None
    launch = _pick(walker.launches, doc)
    if launch is None:
        raise doc.not_a_config(
            None, "no msrun, torchrun or python command with training flags found"
        )
    launcher = parse_launcher(launch.kind, launch.fields, doc) if _launcher(launch) else None
    entry = launcher.script if launcher else launch.fields[0]
    _refuse_non_jobs(entry, launch, doc)
    args = read_args(launcher.args if launcher else launch.fields[1:], doc, defaults=True)
    values.update(args.values)
    if "zero_stage" not in values and "deepspeed_config" in values:
        stage = _zero_stage(text, launch, doc)
        if stage is not None:
            values["zero_stage"] = stage
    values.update(_entry(entry, args.config_file, doc))
    if args.stray:
        values["stray_args"] = stray_value(args.stray, doc)
    deepspeed = launch.kind == "deepspeed" or "deepspeed" in values
    if checked_entry(entry.text.rsplit("/", 1)[-1] if entry else None, deepspeed):
        values.update(unrecognized(args.unknown, doc))
    values.update(_counts(launcher, launch, doc))
    values["launcher"] = TracedValue(launch.kind)
    sim = _sim_level(launcher, launch, doc)
    if sim is not None:
        values["sim_level"] = sim
    buffsize = _hccl_buffsize(launch, doc)
    if buffsize is not None:
        values["hccl_buffsize_mb"] = buffsize
    return TrainingConfig(doc.path, "megatron", values)


def _launcher(launch: Launch) -> bool:
    return launch.kind in ("msrun", "torchrun", "deepspeed")


def _refuse_non_jobs(entry: Field | None, launch: Launch, doc: Doc) -> None:
    """A checkpoint converter or a data preprocessor starts no job: nothing to check."""
    job = job_of_entry(entry.text) if entry is not None else "unknown"
    if job in NOT_JOBS:
        assert entry is not None
        name = entry.text.rsplit("/", 1)[-1]
        raise doc.not_a_config(
            launch.line,
            f"{NOT_JOBS[job]} ({name}), not a training or inference launch: nothing to check",
        )


def _entry(entry: Field | None, config_file: Field | None, doc: Doc) -> dict[str, Value]:
    """The entry script (`pretrain_gpt.py`), the job it runs, and a positional config."""
    out: dict[str, Value] = {}
    if entry is not None and entry.text:
        src = doc.source(*entry.at())
        out["entry"] = TracedValue(entry.text.rsplit("/", 1)[-1], src)
        out["job"] = TracedValue(job_of_entry(entry.text), src)
    else:
        out["job"] = TracedValue("unknown")
    if config_file is not None:
        out["config_file"] = TracedValue(config_file.text, doc.source(*config_file.at()))
    return out


def _pick(launches: Sequence[Launch], doc: Doc) -> Launch | None:
    """The first msrun or torchrun command, else the first other one with training flags."""
    for launch in launches:
        if _launcher(launch):
            return launch
    for launch in launches:
        if read_args(launch.fields[1:], doc, defaults=False).flags:
            return launch
    return None


ZERO_STAGE = re.compile(
    r'"zero_optimization"\s*:\s*\{[^{}]*?"stage"\s*:\s*(?:(\d+)|\$\{?([A-Za-z_]\w*)\}?)'
)
"""The ZeRO stage of a DeepSpeed JSON the script writes (a here-document), as a number or a
script variable."""


def _zero_stage(text: str, launch: Launch, doc: Doc) -> TracedValue | None:
    """The ZeRO stage the DeepSpeed config written in the script sets, when it writes one."""
    m = ZERO_STAGE.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start(1) if m.group(1) else m.start(2)) + 1
    if m.group(1) is not None:
        return TracedValue(int(m.group(1)), doc.source(line))
    return var_value(launch.env.get(m.group(2)), doc)


def var_value(var: Var | None, doc: Doc) -> TracedValue | None:
    """A script variable as an integer value, located where its value is written."""
    if var is None:
        return None
    if var.reason is not None:
        return TracedValue(None, doc.source(var.line, var.col), var.reason)
    source = doc.source(*var.value.at()) if var.value.spans else doc.source(var.line, var.col)
    if var.value.unresolved is not None:
        return TracedValue(None, source, var.value.unresolved)
    number = parse_int(var.value.text)
    if number is None:
        return TracedValue(None, source, f"{var.name} {var.value.text!r} is not an integer")
    return TracedValue(number, source)


def _counts(launcher: Launcher | None, launch: Launch, doc: Doc) -> dict[str, TracedValue]:
    if launch.kind == "unknown" and launch.launcher is not None:
        return _unknown_counts(launch.launcher, doc)
    env = launch.env
    written = launcher.values if launcher else {}
    defaults = launcher.defaults if launcher else {}
    out: dict[str, TracedValue] = {}
    for name in ("world", "local_worker_num", "node_rank", "master_port"):
        value = written.get(name)
        if value is None and launcher is None:
            value = var_value(env.get(SCRIPT_VARIABLES[name]), doc)
        value = value or defaults.get(name)
        if value is not None:
            out[name] = value
    stated = var_value(env.get("WORLD_SIZE"), doc)
    if stated is not None and stated.value is not None:  # whether or not the launcher uses it
        out["config_world"] = stated
    # torchrun's own --nnodes (written, else its default 1) is what runs: a NNODES variable
    # it is not given changes nothing; msrun has no node count, the script's NNODES says it
    torch = launcher is not None and launcher.kind == "torchrun"
    nnodes_var = None if torch else var_value(env.get("NNODES"), doc)
    candidates = [written.get("nnodes"), nnodes_var, defaults.get("nnodes")]
    nnodes = next((v for v in candidates if v is not None and v.value is not None), None)
    nnodes = nnodes or next((v for v in candidates if v is not None), None)
    if nnodes is not None:
        out["nnodes"] = nnodes
    for name in ("master_addr", "log_dir", "join", "sim_rank_id"):
        value = written.get(name) or defaults.get(name)
        if value is not None:
            out[name] = value
    return out


def _unknown_counts(word: Field, doc: Doc) -> dict[str, TracedValue]:
    """The script is started by an unknown word: the card count is unknown, and why."""
    src = doc.source(*word.at())
    why = f"the launcher is unknown ({word.unresolved})"
    return {name: TracedValue(None, src, why) for name in ("world", "local_worker_num", "nnodes")}


def _hccl_buffsize(launch: Launch, doc: Doc) -> TracedValue | None:
    """HCCL_BUFFSIZE as the launched processes see it (exported, or set on the command), when
    it is a number: it sizes HCCL's buffers outside the memory pool."""
    var = launch.prefix.get("HCCL_BUFFSIZE") or launch.env.get("HCCL_BUFFSIZE")
    if var is None or not (var.exported or var is launch.prefix.get("HCCL_BUFFSIZE")):
        return None
    value = var_value(var, doc)
    return value if value is not None and isinstance(value.value, int) else None


def _sim_level(launcher: Launcher | None, launch: Launch, doc: Doc) -> TracedValue | None:
    if launcher is not None and "sim_level" in launcher.values:
        return launcher.values["sim_level"]
    var = launch.prefix.get("MS_SIMULATION_LEVEL") or launch.env.get("MS_SIMULATION_LEVEL")
    if var is None:
        return TracedValue(None)
    if not var.exported:
        why = (
            f"MS_SIMULATION_LEVEL is set (line {var.line}) but not exported, "
            f"so {launch.kind} does not see it"
        )
        return TracedValue(None, doc.source(var.line, var.col), why)
    return var_value(var, doc)
