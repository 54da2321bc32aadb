"""The variables each rule scope can use in `when`, `ranks` and `message`: one table.

The README's rule-writing section and `msrunwatch rules vars` print this table; the
loader rejects a condition that names anything else.
"""

from __future__ import annotations

LINE = {
    "level": "GLOG level of the line (DEBUG, INFO, WARNING, ERROR, CRITICAL), '' for prints",
    "text": "the whole line",
}
"""Line scope: these plus every named group of `match` (numbers become numbers)."""

RANK = {
    "rank": "the rank number",
    "status": "starting, compiling, training, finished, failed, killed, timed-out, unknown",
    "lines": "lines the rank's log(s) hold",
    "exit_code": "the worker's return code from msrun's console (negative: a signal), or None",
    "step": "the last training step seen",
    "loss": "the last loss seen",
    "step_time_ms": "the last per-step time seen (ms)",
    "compile_ms": "total graph compile time ([PROF]compile_graph, ms)",
    "compile_count": "graphs compiled",
    "compiling": "a compilation started and has not finished",
    "device_mb": "device memory (Device MOC/HBM memory size, MiB)",
    "used_mb": "memory MindSpore may use (MindSpore Used memory size, MiB)",
    "peak_used_mb": "peak memory without fragments (MiB)",
    "peak_actual_mb": "peak memory with fragments (MiB)",
    "limit_mb": "the usable limit: max_device_memory from the config if given, else used_mb",
    "stage": "pipeline stage of the rank (0 when unknown)",
    "silence_s": "seconds since the rank's last line (live view only; None in triage)",
    "age_s": "seconds since the run's first line (live view only; None in triage)",
    "cadence_s": "the rank's usual seconds between progress lines (None before two steps)",
    "ranks": "ranks in the run",
    "ranks_progressing": "ranks that got going (compiling, training or finished)",
    "ranks_finished": "ranks that finished normally",
    "median_compile_ms": "median compile_ms over ranks that compiled",
    "min_compile_ms": "smallest compile_ms over ranks that compiled",
    "max_compile_ms": "largest compile_ms over ranks that compiled",
    "median_step": "median step over ranks with progress",
    "max_step": "largest step over ranks with progress",
    "median_peak_actual_mb": "median peak_actual_mb over ranks with a memory summary",
    "stage_median_peak_actual_mb": "median peak_actual_mb over the ranks of the same stage",
    "stage_max_peak_actual_mb": "largest peak_actual_mb over the ranks of the same stage",
    "stage_min_peak_actual_mb": "smallest peak_actual_mb over the ranks of the same stage",
    "stages": "number of pipeline stages (1 when unknown)",
    "stage_medians_peak_actual_mb": "list: median peak_actual_mb of each stage",
}
"""Rank scope: one rank's state, with run and stage aggregates to compare it against."""

RUN = {
    "ranks": "ranks in the run (expected ones without a log included)",
    "expected_ranks": "ranks the job expected (scheduler, RANK_SIZE or msrun's console)",
    "registered": "ranks that registered with the scheduler",
    "missing_ranks": "list: expected ranks that never registered with the scheduler",
    "silent_ranks": "list: ranks with no fault of their own, not finished, while others timed out",
    "timed_out_ranks": "list: ranks whose only errors are timeouts",
    "killed_ranks": "list: ranks msrun stopped after another rank failed",
    "failed_ranks": "list: ranks that failed on their own",
    "root_ranks": "list: the ranks of the root cause found from log lines and rank rules",
    "has_cause": "a rank logged a fault of its own",
    "cluster_init_failed": "some process reported that the cluster could not be built",
    "stages": "number of pipeline stages (1 when unknown)",
    "median_peak_actual_mb": "median peak_actual_mb over ranks with a memory summary",
    "stage_medians_peak_actual_mb": "list: median peak_actual_mb of each stage",
    "median_compile_ms": "median compile time over ranks that compiled (ms)",
    "max_compile_ms": "largest compile time (ms)",
    "min_compile_ms": "smallest compile time (ms)",
}
"""Run scope: the run as a whole, after line and rank rules."""

CONFIG: dict[str, str] = {}
"""Config scope: filled by the config readers (see `msrunwatch.config`)."""

SCOPES = {"line": LINE, "rank": RANK, "run": RUN, "config": CONFIG}
