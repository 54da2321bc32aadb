"""Training progress as the MindSpore suites print it: a rank that prints these is training
(and its loss, NaN included, is read), even with no GLOG line in its log."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from msrunwatch.rules.matcher import LineMatcher
from tests.support import ScanText

LINES = [
    # (suite, line, global step, loss)
    ("MindSpore LossMonitor", "epoch: 3 step: 18, loss is 869.990478515625", 18, 869.990478515625),
    (
        "MindYOLO",
        "2024-09-16 17:20:40,329 [INFO] Epoch 146/500, Step 52/422, imgsize (640, 640), "
        "loss: 3.8198, lbox: 0.7182, lcls: 1.4714, dfl: 1.6302, cur_lr: 0.0071",
        145 * 422 + 52,
        3.8198,
    ),
    (
        "MindCV",
        "[2025-07-24 18:02:24] mindcv.train INFO - Epoch: [1/90], batch: [100/1251], "
        "loss: 6.853127, lr: 0.001000, time: 45.123456s",
        100,
        6.853127,
    ),
    (
        "MindOCR",
        "[2025-03-20 16:21:45] mindocr.train INFO - epoch: [2/1200] step: [100/125], "
        "loss: 2.345678, lr: 0.000100, per step time: 372.740 ms",
        225,
        2.345678,
    ),
    (
        "MindFormers (1.0)",
        "[INFO] 2023-07-11 10:48:37,162 [callback.py:269] print_output_info: Epoch:[  1/  1], "
        "step:[  116/  125], loss:[2.220/2.220], time:1951.612 ms",
        116,
        2.22,
    ),
    (
        "MindOne",
        "epoch 1, step 100, lr 0.0000100, loss 0.123456, loss scale 65536, global_step 100",
        100,
        0.123456,
    ),
]


@pytest.mark.parametrize(
    ("line", "step", "loss"), [x[1:] for x in LINES], ids=[x[0] for x in LINES]
)
def test_a_suites_progress_line_is_read(
    scan_text: ScanText, line: str, step: int, loss: float
) -> None:
    facts = scan_text(line + "\n")
    assert facts.progress is not None
    assert facts.progress.step == step
    assert facts.progress.loss == pytest.approx(loss)


def test_a_nan_loss_is_read_as_not_a_number(scan_text: ScanText) -> None:
    line = "Epoch 1/200, Step 100/3995, imgsize (640, 640), loss: nan, lbox: 3.6\n"
    facts = scan_text(line)
    assert facts.progress is not None and facts.progress.step == 100
    assert facts.progress.loss is None or math.isnan(facts.progress.loss)


HF_STEP = "{'loss': %s, 'grad_norm': 2.5, 'learning_rate': 4.55e-06, 'epoch': 0.%02d}\n"
"""Hugging Face Trainer's step log as LLaMA-Factory prints it (hiyouga/LlamaFactory#5627)."""


def test_a_hugging_face_step_log_counts_as_the_next_step(scan_text: ScanText) -> None:
    lines = [HF_STEP % ("1.4596", 1), "Saving model checkpoint to out/checkpoint-10\n"]
    lines += [HF_STEP % ("nan", 2), HF_STEP % ("0.0", 3)]
    facts = scan_text("".join(lines))
    assert facts.progress is not None
    assert (facts.progress.step, facts.progress.lines, facts.progress.loss) == (3, 3, 0.0)


@pytest.mark.parametrize(
    "line",
    [
        "{'eval_loss': 0.61, 'eval_runtime': 12.3, 'epoch': 1.0}",
        "{'train_runtime': 812.5, 'train_samples_per_second': 9.1, 'train_loss': 0.7, "
        "'epoch': 3.0}",
        "{'loss': 1.2}",
    ],
    ids=["eval", "summary", "no-epoch"],
)
def test_a_dict_that_is_not_a_training_step_is_not_progress(scan_text: ScanText, line: str) -> None:
    assert scan_text(line + "\n").progress is None


def test_hugging_face_steps_read_in_pieces_count_as_read_whole(
    matcher: LineMatcher, tmp_path: Path
) -> None:
    """The step is a count of lines: a reader of a later piece (each GLOG line may start
    one) adds the lines before it."""
    from tests.unit.test_pieces import assert_same, in_pieces, random_edges, whole

    rng = random.Random(5627)
    path = tmp_path / "worker_0.log"
    glog = "[INFO] ME(7,python):2024-10-08-10:00:%02d.000.000 [trainer.cc:1] Step] ok\n"
    text = "".join(HF_STEP % (rng.choice(["0.9", "nan"]), i) + glog % i for i in range(60))
    path.write_text(text)
    expected = whole(path, matcher)
    assert expected.progress is not None and expected.progress.step == 60
    for _ in range(6):
        edges = random_edges(rng, len(text), 5)
        assert_same(expected, in_pieces(path, matcher, edges), edges)
