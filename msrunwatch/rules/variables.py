"""The variables each rule scope can use in `when`, `ranks` and `message`.

Rank and run variables are fields of the dataclasses below, which the judge fills in: a
value the judge computes is therefore always a variable rules can use, with its doc.
`msrunwatch rules vars` and the README print these tables; the loader rejects a condition
that names anything else.
"""

from __future__ import annotations

from dataclasses import field, fields
from typing import Any, Union

from msrunwatch.core.compat import dataclass
from msrunwatch.rules import rulecache
from msrunwatch.rules.template import rank_name
from msrunwatch.schemas import files

Number = Union[int, float]


def var(doc: str, default: Any = None) -> Any:
    """A variable: its doc is what `rules vars` prints."""
    return field(default=default, metadata={"doc": doc})


def table(*kinds: type) -> dict[str, str]:
    """Name -> doc for every field of the dataclasses, in order; a name is declared once."""
    out: dict[str, str] = {}
    for kind in kinds:
        for f in fields(kind):
            if f.name in out:
                raise TypeError(f"variable {f.name!r} is declared twice")
            out[f.name] = f.metadata["doc"]
    return out


LINE = {
    "level": "GLOG level of the line (DEBUG, INFO, WARNING, ERROR, CRITICAL), '' for prints",
    "text": "the whole line",
    "kind": "glog (a GLOG line), exception (the line that ends a Python traceback: its "
    "exception, whatever the class; a bare `RuntimeError:` is read with the first line of its "
    "body that says something), or text",
    "frame": "on an exception line: the last frame of the traceback outside installed "
    "packages (`train.py:81 in on_train_step_end`), else None",
}
"""Line scope: these plus every named group of `match` (numbers become numbers)."""


STALL_CADENCES = 10
"""The rules that judge silence compare it with this many step cadences (`stall_cadences`);
the live view judges an ended run again until every file was quiet as long (live.run)."""


@dataclass(slots=True)
class RankState:
    """One rank's own state (slotted: the judge holds one per rank, 100,000 of them in a
    large check)."""

    rank: int = var("the rank number", 0)
    status: str = var(
        "starting, compiling, training, finished, failed, killed, timed-out, stalled, "
        "stopped, unknown",
        "unknown",
    )
    lines: int = var("lines the rank's log(s) hold", 0)
    exit_code: int | None = var(
        "the worker's return code from msrun's console (negative: a signal), or None"
    )
    step: int | None = var("the last training step seen")
    loss: float | None = var("the last loss seen")
    step_time_ms: Number | None = var("the last per-step time seen (ms)")
    cadence_s: Number | None = var(
        "the rank's usual seconds between progress lines (None before two steps)"
    )
    compile_ms: Number | None = var("total graph compile time ([PROF]compile_graph, ms)")
    compile_count: int = var("graphs compiled", 0)
    compiling: bool = var("a compilation started and has not finished", False)
    device_mb: Number | None = var("device memory (Device MOC/HBM memory size, MiB)")
    used_mb: Number | None = var("memory MindSpore may use (MindSpore Used memory size, MiB)")
    peak_used_mb: Number | None = var("peak memory without fragments (MiB)")
    peak_actual_mb: Number | None = var("peak memory with fragments (MiB)")
    limit_mb: Number | None = var(
        "the usable limit: max_device_memory from the config if given, else used_mb"
    )
    stage: int = var("pipeline stage of the rank (0 when unknown)", 0)
    estimate_used_mb: Number | None = var(
        "given a config: the estimated peak (without fragments) of the rank's stage, MiB"
    )
    estimate_actual_mb: Number | None = var(
        "given a config: the estimated peak with fragments of the rank's stage, MiB"
    )
    estimate_from: str | None = var("given a config: the config file the estimate comes from")
    silence_s: Number | None = var(
        "seconds since the rank's log last grew (live view only; None in triage)"
    )
    joined: bool = var(
        "the rank's log says the cluster was built (`This node <n> rank id: <r>`)", False
    )
    registered: bool = var("the scheduler's log shows this rank registering", False)
    left_cluster: bool = var(
        "the scheduler's log shows this rank unregistering (`Node <n> has unregistered`): its "
        "process left the cluster, at the job's end or before it",
        False,
    )
    ended_normally: bool = var("the rank's log shows its normal end (an end marker)", False)
    last_line_at: str | None = var("HH:MM:SS of the rank's last dated line, else None")
    meta_connect_failures: int = var(
        "failed attempts to reach the scheduler (`Failed to connect to the meta server`); a "
        "few are normal while it starts",
        0,
    )
    meta_server_url: str | None = var("the scheduler address the rank tried to reach")
    fired: list[str] = var("list: ids of the line rules that fired on the rank's own log", ())
    last_fault_line: int | None = var(
        "the line of the fault the rank's log ends in (a traceback's exception, a fatal signal "
        "or an ERROR line, with no progress and no normal end after it), else None"
    )
    last_fault_text: str | None = var("that line's text, else None")
    age_s: Number | None = var(
        "seconds since the run's first line (live view only; None in triage)"
    )
    ranks: int = var("ranks in the run", 0)
    ranks_writing_after: int = var(
        "for a rank at work silent past stall_after_s (live view, else 0): the ranks still at "
        "work, not at an earlier step than this one, whose log grew within stall_after_s and "
        "that were seen alive after this rank went quiet: their "
        "log grew more than quiet_gap_s later, or logged a peer going after this rank's last "
        "dated line. A rank that stopped with the others in one collective is not outlived "
        "by them, however their last writes fall",
        0,
    )


@dataclass
class RunFigures:
    """Figures over every rank with a log: rank rules compare a rank with them, run rules
    read them directly."""

    ranks_progressing: int = var("ranks that got going (compiling, training or finished)", 0)
    ranks_finished: int = var("ranks that finished normally", 0)
    median_compile_ms: Number | None = var("median compile_ms over ranks that compiled")
    min_compile_ms: Number | None = var("smallest compile_ms over ranks that compiled")
    max_compile_ms: Number | None = var("largest compile_ms over ranks that compiled")
    median_step: Number | None = var("median step over ranks with progress")
    max_step: Number | None = var("largest step over ranks with progress")
    median_peak_actual_mb: Number | None = var(
        "median peak_actual_mb over ranks with a memory summary"
    )
    stages: int = var("number of pipeline stages (1 when unknown)", 1)
    stage_medians_peak_actual_mb: list[Number | None] = var(
        "list: median peak_actual_mb of each stage", ()
    )
    stall_after_s: Number = var(
        "the stall threshold (msrunwatch --stall-after, 120 s by default)", 120.0
    )
    stall_cadences: int = var(
        "a rank is silent only after this many of its steps' time too (silence_s over "
        "stall_cadences * cadence_s): a slow but regular rank is not stalled",
        STALL_CADENCES,
    )
    caught_up: bool = var(
        "every log was read to its end (always true in triage; false while the live view "
        "catches up)",
        True,
    )
    median_silence_s: Number | None = var("median silence_s over ranks (live view)")
    median_cadence_s: Number | None = var("median cadence_s over ranks with progress")
    ranks_recent: int = var("ranks whose log grew within stall_after_s (live view)", 0)
    ranks_writing: int = var(
        "ranks still at work (starting, compiling, training) whose log grew within "
        "stall_after_s (live view): a rank that timed out or failed is not writing on",
        0,
    )
    quiet_gap_s: Number = var(
        "how far apart two ranks' logs must stop growing for their order to say which went "
        "quiet first (live view): the larger of 5 s (a print's flush, a file system's mtime "
        "granularity) and two of the run's steps (ranks in lock step stop in one collective, "
        "the waiting one writing at most the rest of its step after the hung one stopped). "
        "A step is the median over the ranks of each one's cadence, else the step time it "
        "logs, else its dated lines' span over its steps",
        5.0,
    )
    silent_first_ranks: list[int] = var(
        "list: when every running rank is silent, the ones that went quiet first: those at "
        "the lowest step, less any seen alive after another went quiet (ranks_writing_after); "
        "ranks that stopped together are named together",
        (),
    )
    categories: list[str] = var(
        "list: the categories of every finding from log lines (run rules: and rank rules)", ()
    )
    behind_ranks: list[int] = var(
        "list: when ranks' last training steps differ, those whose progress stopped at the "
        "lowest step (a hang stops its rank first)",
        (),
    )


@dataclass
class StageFigures:
    """Figures over the ranks of one pipeline stage."""

    stage_median_peak_actual_mb: Number | None = var(
        "median peak_actual_mb over the ranks of the same stage"
    )
    stage_max_peak_actual_mb: Number | None = var(
        "largest peak_actual_mb over the ranks of the same stage"
    )
    stage_min_peak_actual_mb: Number | None = var(
        "smallest peak_actual_mb over the ranks of the same stage"
    )


@dataclass
class RunState:
    """The run as a whole, after line and rank rules."""

    ranks: int = var("ranks in the run (expected ones without a log included)", 0)
    expected_ranks: int | None = var(
        "ranks the job expected (scheduler, RANK_SIZE or msrun's console)"
    )
    registered: int = var("ranks that registered with the scheduler", 0)
    missing_ranks: list[int] = var(
        "list: expected ranks that never registered with the scheduler", ()
    )
    ranks_without_log: list[int] = var("list: expected ranks of which no log was found", ())
    silent_ranks: list[int] = var(
        "list: ranks with no fault of their own, not finished, while others timed out "
        "(live: only those whose log has not grown for 10 s)",
        (),
    )
    timed_out_ranks: list[int] = var("list: ranks whose only errors are timeouts", ())
    killed_ranks: list[int] = var("list: ranks msrun stopped after another rank failed", ())
    failed_ranks: list[int] = var("list: ranks that failed on their own", ())
    root_ranks: list[int] = var(
        "list: the ranks of the root cause found from log lines and rank rules", ()
    )
    root_who: str = var(
        "text: who the root cause is, for messages: 'rank(s) 2-3', or 'the job' when the "
        "cause names no rank (the scheduler's or msrun's own fault)",
        "the job",
    )
    has_cause: bool = var("a rank logged a fault of its own", False)
    lost_ranks: list[int] = var(
        "list: ranks the scheduler timed out (it lost their heartbeat): its word on who went "
        "first is stronger evidence than a silence",
        (),
    )
    stopped_ranks: list[int] = var(
        "list: post mortem, ranks whose log stops without an end marker or a fault in a run "
        "that is over (quiet longer than --stall-after, or --finished)",
        (),
    )
    quiet_for_s: Number | None = var(
        "post mortem: seconds since the run's files were last written, when the run is over "
        "by the clock (else None)"
    )


def values(state: Any) -> dict[str, Any]:
    """A variables dataclass as the mapping conditions read (shallow: lists stay lists)."""
    return {f.name: getattr(state, f.name) for f in fields(state)}


RANK_NAMES = {
    "rank_name": "the rank as a message names it: `rank 3`, or `the log` for a log whose rank "
    "is not known (standard input, one file that names no rank; its `rank` is negative)",
    "Rank_name": "rank_name at the start of a sentence: `Rank 3`, `The log`",
}
"""Rank scope: names for messages, so that no message says `rank -1`."""

RANK = {**table(RankState, RunFigures, StageFigures), **RANK_NAMES}
"""Rank scope: one rank's state, with run and stage figures to compare it against."""


def rank_names(rank: int) -> dict[str, str]:
    """RANK_NAMES' values for one rank."""
    name = rank_name(rank)
    return {"rank_name": name, "Rank_name": name[:1].upper() + name[1:]}


RUN = table(RunState, RunFigures)
"""Run scope: the run as a whole, after line and rank rules."""


def _aliases() -> dict[str, dict[str, str]]:
    """The aliases file, through the rule cache (parsed once, not on every start)."""
    data = rulecache.package_document(files.HERE / "variable_aliases.yaml")
    aliases: dict[str, dict[str, str]] = data["run"]
    return aliases


RUN_ALIASES = _aliases()
"""Run variables kept for rules written before they were replaced: name -> {expr, doc}.
The judge evaluates each expression over the run's variables (data, not Python)."""
RUN.update({name: alias["doc"] for name, alias in RUN_ALIASES.items()})

CONFIG = {
    # where the numbers come from
    "framework": "mindformers, or megatron for MindSpeed-LLM / Megatron launch scripts",
    "world": "cards in the job: --devices, msrun --worker_num, or the script's WORLD_SIZE",
    "config_world": "cards the config itself states: MindFormers parallel.device_num, or the "
    "script's WORLD_SIZE (whether or not the launcher uses it)",
    "nnodes": "nodes (servers) in the job",
    "local_worker_num": "cards (workers) per node: msrun --local_worker_num / NPUS_PER_NODE",
    "node_rank": "this node's index (msrun --node_rank)",
    "master_port": "msrun --master_port",
    "sim_level": "DryRun level (msrun --sim_level / MS_SIMULATION_LEVEL), None when not simulating",
    "parallel_mode": "MindFormers parallel.parallel_mode (0 data, 1 semi-auto, 2 auto, 3 hybrid)",
    # parallel degrees
    "dp": "data parallel (MindFormers data_parallel; Megatron: world / (tp*pp*cp), derived)",
    "tp": "tensor (model) parallel: model_parallel / --tensor-model-parallel-size",
    "pp": "pipeline stages: pipeline_stage / --pipeline-model-parallel-size",
    "cp": "context parallel: context_parallel / --context-parallel-size",
    "ep": "expert parallel: expert_parallel / --expert-model-parallel-size",
    "vpp": "virtual pipeline chunks per stage (pp_interleave_num / virtual stages), 1 when off",
    "sp": "sequence parallel on (use_seq_parallel / --sequence-parallel)",
    "cp_algo": "context-parallel algorithm (colossalai_cp, ulysses_cp, hybrid_cp, ...)",
    "ulysses_degree": "Ulysses degree within context parallel (ulysses_degree_in_cp)",
    "micro_batch_num": "micro-batches per step (micro_batch_num; Megatron: gbs / (mbs*dp))",
    "micro_batch_interleave_num": "MindFormers micro_batch_interleave_num",
    "gradient_accumulation_steps": "MindFormers runner_config.gradient_accumulation_steps",
    "full_batch": "MindFormers parallel.full_batch",
    # batch and sequence
    "mbs": "micro batch size (runner_config.batch_size / --micro-batch-size)",
    "gbs": "global batch size (--global-batch-size; MindFormers: derived)",
    "seq_length": "sequence length (seq_length / --seq-length)",
    "max_position_embeddings": "--max-position-embeddings / max_position_embedding",
    "dataset_seq_length": "the dataset's sequence length when the config names one",
    # model
    "num_layers": "transformer layers (num_layers / num_hidden_layers / --num-layers)",
    "hidden_size": "hidden size",
    "ffn_hidden_size": "FFN width (intermediate_size / --ffn-hidden-size)",
    "num_heads": "attention heads",
    "num_kv_heads": "KV heads / query groups (n_kv_heads / --num-query-groups), else num_heads",
    "head_dim": "head dimension (kv_channels / head_dim); hidden_size / num_heads when unset",
    "vocab_size": "vocabulary size (vocab_size / --padded-vocab-size)",
    "num_experts": "MoE experts (expert_num / --num-experts), None for dense models",
    "offset": "MindFormers per-stage layer offset (int or list)",
    "num_layer_list": "MindSpeed-LLM --num-layer-list (layers per stage)",
    "swiglu": "SwiGLU MLP (--swiglu; MindFormers llama-style models)",
    "untie_embeddings": "separate output layer (--untie-embeddings-and-output-weights)",
    "use_flash_attention": "flash attention on (use_flash_attention / --use-flash-attn)",
    "vocab_emb_dp": "MindFormers parallel_config.vocab_emb_dp",
    # memory and optimizer
    "recompute": "full recompute: True, or a per-stage list of layer counts (MindFormers; "
    "layer indices with swap on)",
    "select_recompute": "MindFormers select_recompute (bool, list or op patterns)",
    "swap": "MindFormers swap_config.swap: activation swap to host on (then recompute and "
    "select_recompute name layer indices, not per-stage counts)",
    "layer_swap": "MindFormers swap_config.layer_swap: True (every layer) or the list of layer "
    "indices whose activations are swapped whole",
    "op_swap": "MindFormers swap_config.op_swap: mapping of op pattern to True or layer indices; "
    "with swap on and no layer_swap/op_swap, '.*\\.flash_attention' in every layer",
    "recompute_granularity": "--recompute-granularity: full, selective or None",
    "recompute_method": "--recompute-method: uniform, block or None",
    "recompute_num_layers": "--recompute-num-layers",
    "use_distributed_optimizer": "sharded optimizer states (--use-distributed-optimizer / "
    "enable_parallel_optimizer)",
    "optimizer_shard_size": "MindFormers optimizer_weight_shard_size",
    "overlap_param_gather": "--overlap-param-gather",
    "overlap_grad_reduce": "--overlap-grad-reduce",
    "params_dtype": "parameter dtype (bf16, fp16, fp32)",
    "max_device_memory_mb": "usable device memory: context max_device_memory (MiB)",
    "device_memory_mb": "the card's memory (MiB; 65536 for a 64 GB Ascend card unless told)",
    # derived (msrunwatch.judge.config.derive)
    "model_size": "tp * pp * cp: the cards one model replica spans",
    "product": "dp * tp * cp * pp",
    "suggested_dp": "world / (tp * pp * cp) when that divides, else None",
    "stage_layers": "list: layers on each pipeline stage (offset / num_layer_list / even split)",
    "limit_mb": "usable memory per card (MiB): max_device_memory_mb (else MindSpore's default "
    "pool, 15/16 of the free memory, for a MindSpore job), no more than card_room_mb",
    "card_room_mb": "what the card has free for the framework's pool once HCCL holds its buffers "
    "(MiB; 62069 free on a 64 GB card, data/cards.yaml)",
    "hccl_reserved_mb": "HCCL's buffers outside the pool: 2 x HCCL_BUFFSIZE per communicator (MiB)",
    "communicators": "list: the communicators every rank certainly opens (world, tensor, data, "
    "context, expert parallel)",
    "hccl_buffsize_mb": "HCCL_BUFFSIZE exported by the launch script (MB; 200 when not set)",
    "swap_recompute_conflicts": "list: what MindFormers both swaps and recomputes, where swap "
    "does not take effect (`layers 2-3 (layer_swap and recompute)`); [] with swap off, None "
    "when unknown",
    "estimated_used_mb": "the memory estimate's largest per-stage peak, without fragments (MiB)",
    "estimated_actual_mb": "the same with fragmentation (MiB)",
    "estimated_stage": "the pipeline stage with the largest estimated peak",
    "estimate_complete": "the estimate had every input it needs for every stage (false with "
    "MindFormers swap on: swap is not modelled, and the memory figures are None)",
    "estimate_covers": "the estimate is complete and models every memory feature the config uses "
    "(a training job, no swap, FSDP, offload, FP8, MoE...): only then is there a memory verdict",
    "estimate_is_floor": "the estimate is complete and leaves out only features that add memory "
    "(multi-token prediction layers): its figures are a floor, so over the budget is still over",
    "estimate_gaps": "list: what the config uses that the estimate does not model (`predict job "
    "(the estimate models training)`, `FSDP (...)`)",
    "estimated_states_actual_mb": "the largest stage's model states alone (weights, gradients, "
    "optimizer) x fragmentation, MiB: over the budget, no activation model can make it fit",
    "estimate_unvalidated": "list: what in the config the estimate was never checked against, "
    "neither measured runs nor outcomes (MindFormers graph mode, virtual pipeline, MoE "
    "activations, CP other than ring attention): no memory error there but the model states'",
    "estimate_band": "how far over the usable memory the estimate must be for an error: 1.1 where "
    "checked against measured runs, 1.8 with ring-attention context parallel (outcomes only); "
    "None when estimate_unvalidated is not empty (data/estimate_bands.yaml)",
    "estimate_band_why": "that band, in words, for a message",
    "seq_varies": "batches are padded to their longest sample (--variable-seq-lengths, "
    "--no-pad-to-seq-lengths): the estimate is an upper bound",
    "estimated_floor_actual_mb": "with varying sequence lengths, the least the peak stage needs: "
    "its model states x fragmentation (MiB)",
    "unresolved": "list: `name: why` for each setting the config writes but msrunwatch could not "
    "resolve (an unset variable, a command substitution)",
    "unresolved_names": "list: the names of those settings",
    # read but not normalised further
    "mode": "MindFormers context.mode (0 graph, 1 PyNative)",
    "compute_dtype": "MindFormers model_config.compute_dtype (bf16, fp16, fp32)",
    "pipeline_stages": "MindFormers parallel.pipeline_stages, when written by hand",
    "master_addr": "msrun --master_addr / torchrun --master_addr",
    "log_dir": "msrun --log_dir (where worker_<N>.log files go)",
    "join": "msrun --join (False: msrun returns at once, the logs must be tailed)",
    "sim_rank_id": "msrun --sim_rank_id (DryRun of one rank)",
    "stray_args": "list: words in the training arguments that no flag takes",
    "unrecognized_args": "list: flags no Megatron-LM / MindSpeed / MindSpeed-LLM commit defined, "
    "each close to one that is ('--num-query-group (did you mean --num-query-groups?)')",
    "unknown_args": "list: flags no Megatron-LM / MindSpeed / MindSpeed-LLM commit defined, "
    "like none that is",
    "qkv_bias": "bias on the QKV projection (--add-qkv-bias / qkv_has_bias)",
    "use_legacy": "MindFormers use_legacy (False: the mcore path)",
    "recompute_slice_activation": "MindFormers recompute_config.recompute_slice_activation",
    # what the job is, and which framework version runs it
    "entry": "the script a launch starts (pretrain_gpt.py, train_fsdp2.py, ...), None for YAML",
    "job": "train, predict, eval or unknown: from the entry script's name or MindFormers run_mode",
    "run_mode": "MindFormers run_mode (train, finetune, predict, eval, ...)",
    "use_past": "MindFormers model_config.use_past: inference keeps a KV cache",
    "kv_groups_fused": "the KV heads are GLM's multi_query_group_num, in a fused query_key_value "
    "sharded over its output in training",
    "llm_backend": "MindFormers model_config.llm_backend (an inference backend such as LLMBoost)",
    "block_size": "MindFormers model_config.block_size: tokens per paged-attention KV block",
    "num_blocks": "MindFormers model_config.num_blocks: paged-attention KV blocks per layer",
    "predict_batch": "MindFormers model_config.batch_size (the inference batch)",
    "quantization": "MindFormers quantization_config / quant_config (quantized weights)",
    "run_layout": "a YAML laid out as run_mindformer.py reads it (run_mode, runner_config, "
    "parallel_config, context, trainer, or model.model_config), not another tool's YAML",
    "config_file": "a YAML the entry script takes as its first positional argument (FSDP2, "
    "MindSpeed-MM)",
    "crlf_line": "the first line ending in CRLF (Windows line endings), None when there is none",
    "mindformers_version": "MindFormers version as a number (1.6.0 -> 10600; master 990000): "
    "--framework-version / settings, else the lowest the file's keys imply; None when unknown",
    "mindformers_version_given": "the MindFormers version as given (--framework-version or "
    "settings), None when not given: mindformers_version may be a lower bound the file implies",
    "megatron_version": "Megatron core version (0.8.0 -> 800, 0.12.1 -> 1201, main 990000): "
    "given, or implied by the MindSpeed-LLM / MindSpeed version; None when unknown",
    "mindspeed_llm_version": "MindSpeed-LLM version (2.1.0 -> 20100), None when unknown",
    "stack": "the Megatron-family stack named by --framework-version (mindspeed-llm, mindspeed, "
    "mindspeed-mm, megatron), None when not given",
    # more Megatron / MindSpeed flags
    "etp": "--expert-tensor-parallel-size (Megatron core 0.12+: defaults to TP)",
    "unaligned_linear": "MindSpeed --unaligned-linear (heads and groups need not divide TP)",
    "pp_layout": "--pipeline-model-parallel-layout (an uneven split of layers over stages)",
    "first_stage_layers": "--decoder-first-pipeline-num-layers",
    "last_stage_layers": "--decoder-last-pipeline-num-layers",
    "noop_layers": "MindSpeed-LLM --noop-layers",
    "pp_split_embedding": "--account-for-embedding-in-pipeline-split (Megatron main)",
    "pp_split_loss": "--account-for-loss-in-pipeline-split (Megatron main)",
    "hybrid_layer_pattern": "--hybrid-layer-pattern (Mamba hybrids: no layers-vs-PP check)",
    "launcher": "what starts the processes: msrun, torchrun, python (one process) or unknown",
    "mm_model": "MindSpeed-MM --mm-model (the model JSON, which sets num_experts)",
    "use_checkpoint_args": "--use-checkpoint-args (model sizes come from the checkpoint)",
    "hidden_dropout": "--hidden-dropout (Megatron default 0.1)",
    "attention_dropout": "--attention-dropout (Megatron default 0.1)",
    "stage": "MindSpeed-LLM --stage (sft, dpo, ...)",
    "moe_config_experts": "MindFormers top-level moe_config.expert_num (what check_rules reads)",
    "mtp_depth": "MindFormers model_config.mtp_depth (multi-token prediction layers)",
    "mtp_mem_efficient_logits": "MindSpeed-LLM --mtp-mem-efficient-logits (the cross-entropy "
    "frees the bf16 logits once it has their fp32 copy)",
    "mtp_num_layers": "MindFormers model_config.num_nextn_predict_layers / mtp_num_layers (the "
    "mcore names of mtp_depth; legacy models ignore them)",
    "pet_type": "MindFormers pet_config.pet_type (lora, ...): parameter-efficient fine-tuning",
    "arch": "MindFormers model.arch.type (LlamaForCausalLM, DeepseekV3ForCausalLM, ...)",
    "offset_layers": "the layer count MindFormers' offset must add up to: num_layers, plus "
    "mtp_depth for the legacy research DeepSeek models (not on the mcore path)",
    "gradient_accumulation_shard": "MindFormers parallel_optimizer_config."
    "gradient_accumulation_shard (accu_grads sliced by the parallel optimizer too)",
    "lora_r": "--lora-r (LoRA rank); MindFormers pet_config.lora_rank",
    "lora_target_modules": "--lora-target-modules; MindFormers pet_config.target_modules",
    "qlora": "--qlora (a 4-bit quantised frozen base)",
    "instruction_dataset": "--is-instruction-dataset (SFT samples)",
    "variable_seq_lengths": "--variable-seq-lengths (batches padded to the longest sample)",
    "no_pad_to_seq_lengths": "--no-pad-to-seq-lengths (MindSpeed-LLM 2.3.0+: dynamic padding)",
    "reuse_fp32_param": "MindSpeed --reuse-fp32-param",
    "seq_split_num": "MindFormers parallel_config.seq_split_num (sequence pipelining when > 1)",
    "attn_mask_compression": "MindFormers use_attn_mask_compression (a 2048 x 2048 mask instead of "
    "s x s)",
    "o2_gradient": "MindSpeed-LLM --o2-gradient (bf16 gradients)",
    "o2_optimizer": "MindSpeed-LLM --o2-optimizer (bf16 Adam states)",
    "fused_swiglu": "--use-fused-swiglu",
    "recompute_activation_function": "MindSpeed --recompute-activation-function",
    "swap_attention": "MindSpeed --swap-attention",
    "tp_2d": "MindSpeed --tp-2d (2D tensor parallel: the TP domain split as tp_x x tp_y)",
    "tp_x": "MindSpeed --tp-x (2D tensor parallel: the first dimension's split)",
    "tp_y": "MindSpeed --tp-y (2D tensor parallel: the last dimension's split)",
    "swap_optimizer": "MindSpeed --swap-optimizer",
    "swap_optimizer_times": "MindSpeed --swap-optimizer-times (rounds of the step's swap, 16 by "
    "default)",
    "moe_zero_memory": "MindSpeed --moe-zero-memory level",
    "fsdp": "an FSDP data-parallel mode (--use-torch-fsdp2, --use-custom-fsdp, ...)",
    "optimizer_offload": "--optimizer-cpu-offload",
    "mtp_layers": "--mtp-num-layers",
    "tokenizer_type": "--tokenizer-type (the tokenizer class Megatron or MindSpeed-LLM builds)",
    "refused_choices": "list: `--arg value (did you mean ...?)` for each argument whose value is "
    "outside the fixed choices every known parser version accepts (data/megatron_choices.yaml)",
    "schedules_method": "--schedules-method (MindSpeed dualpipev: 2 x PP chunks in a V, the head "
    "and MindSpeed-LLM's MTP layers on the first stage)",
    "dualpipev_dw_detach": "MindSpeed --dualpipev-dw-detach (weight gradients deferred in the "
    "dualpipev cooldown)",
    "fp8": "--fp8-format",
    # the frameworks' own sizing (issue 20)
    "vocab_divisible_by": "--make-vocab-size-divisible-by (Megatron pads the tokenizer's "
    "vocabulary to a multiple of it x TP; default 128)",
    "tokenizer": "the tokenizer path or type (--tokenizer-name-or-path; MindFormers "
    "processor.tokenizer): names the model family when no vocab_size is written",
    "tokenizer_model": "--tokenizer-model",
    "tokenizer_vocab_file": "--vocab-file",
    "ffn_dim_multiplier": "MindFormers model_config.ffn_dim_multiplier (LLaMA FFN sizing)",
    "multiple_of": "MindFormers model_config.multiple_of (LLaMA FFN sizing, default 256)",
    "model_type": "MindFormers model_config.type / model_type (LlamaConfig, ...)",
    # documented limits (issue 20)
    "documented_max_device_memory_mb": "the max_device_memory MindFormers' documentation states "
    "for the card (61440 MiB, 60GB, on the 64 GB Atlas 800T A2), None for a card it is silent on",
    "documented_card": "the card that limit is stated for",
    "documented_limit_source": "where it is stated (repository, commit, file:line)",
    # DeepSpeed behind Megatron-DeepSpeed (issue 20)
    "deepspeed": "--deepspeed (Megatron-DeepSpeed runs on DeepSpeed's engine)",
    "deepspeed_config": "--deepspeed_config (the DeepSpeed JSON)",
    "zero_stage": "ZeRO stage: --zero-stage, else the DeepSpeed JSON's zero_optimization.stage",
    "no_pipeline_parallel": "--no-pipeline-parallel (Megatron-DeepSpeed without the pipeline "
    "engine)",
    "hostfile": "deepspeed --hostfile",
    # MindFormers' config schema (issue 20)
    "refused_keys": "list: what MindFormers refuses at start-up in the config's schema'd "
    "sections (an unknown key of parallel_config or recompute_config, a value its validator "
    "refuses, a scalar where a mapping belongs), with 'did you mean'",
    "unknown_keys": "list: keys that look like a misspelling of a known one in sections whose "
    "other keys MindFormers passes on (runner_config, parallel, model_config)",
    "newer_keys": "list: [key, version] for keys only newer MindFormers releases take",
    "older_keys": "list: [class, version] for `type:` names only MindFormers releases up to that "
    "version register (CheckpointMointor, renamed CheckpointMonitor in 1.2.0)",
    "older_keys_unknown": "list: the older_keys, while the MindFormers version is not known",
    # MoE and MLA (issue 20)
    "moe_topk": "experts per token (--moe-router-topk, default 2; MindFormers num_experts_chosen, "
    "default 1)",
    "moe_ffn_hidden_size": "one expert's FFN width (--moe-ffn-hidden-size; MindFormers "
    "moe_intermediate_size)",
    "shared_expert_ffn": "shared experts' total FFN width (--moe-shared-expert-intermediate-size)",
    "shared_experts": "shared experts (--n-shared-experts; MindFormers shared_expert_num)",
    "first_k_dense": "dense layers before the MoE ones (--first-k-dense-replace; MindFormers "
    "first_k_dense_replace)",
    "moe_layer_freq": "--moe-layer-freq: every N-th layer is MoE",
    "moe_capacity_factor": "expert capacity factor (--moe-expert-capacity-factor; MindFormers "
    "capacity_factor, default 1.1); None: dropless",
    "moe_pad_to_capacity": "--moe-pad-expert-input-to-capacity",
    "moe_dispatcher": "--moe-token-dispatcher-type (allgather, alltoall, ...)",
    "moe_tp_extend_ep": "MindSpeed --moe-tp-extend-ep (experts sharded over TP x EP, ETP 1)",
    "moe_grouped_gemm": "--moe-grouped-gemm",
    "moe_drop": "MindFormers moe_config.enable_sdrop",
    "moe_gmm": "MindFormers moe_config.use_gmm (dropless grouped matmul)",
    "moe_allgather": "MindFormers moe_config.use_allgather_dispatcher",
    "mla": "multi-head latent attention (--multi-latent-attention; DeepSeek-V2/V3)",
    "q_lora_rank": "MLA query compression rank (--q-lora-rank)",
    "kv_lora_rank": "MLA key/value compression rank (--kv-lora-rank)",
    "qk_nope_head_dim": "MLA per-head query/key width without RoPE (--qk-head-dim)",
    "qk_rope_head_dim": "MLA per-head RoPE width (--qk-pos-emb-head-dim)",
    "v_head_dim": "MLA per-head value width (--v-head-dim)",
    # with logs, or over a directory
    "run_world": "the ranks the run's logs show (check LOGS CONFIG, triage --config), else None",
    "stated_world": "the card count the config or its launcher states (not --devices), or None",
    "skipped_for_world": "list: with no card count, the rules for this framework that need one",
    "not_linted": "list: `reason (count)` for the files under a checked directory not linted",
    "not_linted_count": "how many files under a checked directory were not linted",
    "not_linted_files": "list: those files",
}
"""Config scope: normalised training settings; see `msrunwatch.read.config`. Derived values
(world-dependent dp, micro-batches, layers per stage) are added by
`msrunwatch.judge.config.derive`."""

SCOPES = {"line": LINE, "rank": RANK, "run": RUN, "config": CONFIG}
