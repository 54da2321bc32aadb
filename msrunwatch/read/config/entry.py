"""What a launch runs: the training entry point a script starts, and the kind of job.

The kind decides which checks apply: Megatron's start-up checks run for training and
inference alike, the MoE forward check and the memory estimate only for training, and a
checkpoint converter or a data preprocessor starts no job to check at all.
"""

from __future__ import annotations

import re

JOBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("convert", re.compile(r"convert|ckpt|export|quantiz|prune|merge|hf2|2hf|mg2|2mg")),
    ("preprocess", re.compile(r"preprocess|data_?conv|tokeniz")),
    ("eval", re.compile(r"evaluat|eval\b|eval_|mmlu|validate|benchmark")),
    ("predict", re.compile(r"inference|infer|generat|chat|server|predict|serve")),
    ("train", re.compile(r"train|tune|sft|rlhf|dpo|grpo|ppo|distill|reward|rm\b")),
)
"""Entry script name (lower case, without `.py`) -> job; the first that matches wins."""

RUN_MODES = {
    "train": "train",
    "finetune": "train",
    "predict": "predict",
    "predict_with_train_model": "predict",
    "eval": "eval",
}
"""MindFormers run_mode -> job."""

NOT_JOBS = {
    "convert": "a checkpoint conversion script",
    "preprocess": "a data preprocessing script",
}
"""Jobs that start no training or inference: there is nothing to check."""


def job_of_entry(entry: str) -> str:
    """train, predict, eval, convert, preprocess or unknown, from the script's name."""
    name = entry.rsplit("/", 1)[-1].lower().removesuffix(".py")
    return next((job for job, pattern in JOBS if pattern.search(name)), "unknown")


def job_of_run_mode(run_mode: object) -> str:
    """The job a MindFormers run_mode starts."""
    return RUN_MODES.get(str(run_mode).strip().lower(), "unknown") if run_mode else "unknown"
