"""Training progress as the MindSpore suites print it: a rank that prints these is training
(and its loss, NaN included, is read), even with no GLOG line in its log."""

from __future__ import annotations

import math

import pytest

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
