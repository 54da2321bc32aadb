"""Public configs that failed, each an error for the reason its source states, and the
versions that ran, each without an error (fixtures/configs/public/README.md)."""

from __future__ import annotations

import hashlib

import pytest

from tests.hostile.support import cli
from tests.support import FIXTURES

PUBLIC = FIXTURES / "configs" / "public"
MARK = b"# ---- upstream file follows ----\n"
FAILED = {
    "mf_yi_34b_pretrain_callback_typo.yaml": (
        "config-key-refused",
        118,
        "CheckpointMointor: Can't find class type CALLBACK",
    ),
    "mf_qwen1_5_1_8b_finetune_callback_typo.yaml": (
        "config-key-refused",
        130,
        "(did you mean CheckpointMonitor?)",
    ),
    "ms_deepseek2_lite_16b_no_expert_width.sh": (
        "config-memory-over-budget",
        None,
        "usable per card",
    ),
}
RAN = [
    "mf_yi_34b_pretrain_fixed.yaml",
    "mf_qwen1_5_1_8b_finetune_fixed.yaml",
    "ms_deepseek2_lite_16b_with_expert_width.sh",
]


@pytest.mark.parametrize("name", [*FAILED, *RAN])
def test_each_fixture_is_the_upstream_file_byte_for_byte(name: str) -> None:
    header, body = (PUBLIC / name).read_bytes().split(MARK, 1)
    blob = hashlib.sha1(b"blob %d\x00" % len(body) + body).hexdigest()
    assert f"(git blob {blob})".encode() in header


@pytest.mark.parametrize("name", sorted(FAILED))
def test_a_config_that_failed_is_an_error_for_its_reason(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rule, line, words = FAILED[name]
    code, out, err = cli(capsys, "check", str(PUBLIC / name))
    assert code == 1, (out, err)
    errors = [row for row in out.splitlines() if f": error {rule}:" in row]
    assert errors and words in errors[0], out
    if line is not None:
        assert errors[0].startswith(f"{PUBLIC / name}:{line}:"), errors[0]


@pytest.mark.parametrize("name", RAN)
def test_the_version_that_ran_has_no_error(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "check", str(PUBLIC / name))
    assert code == 0, (out, err)
    assert ": error " not in out
