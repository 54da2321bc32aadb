"""A reader that goes away (`| head`) before the output is whole (issue 21, found in its
rerun). Before, every command then exited 0, `triage` of a failed run and `facts` cut
short included: with `set -o pipefail` a failed run passed for healthy and a facts stream
cut short for a whole one. Now the command ends quietly (nothing on stderr) with 141,
128 + SIGPIPE, what a shell reports for `cat` or `grep` stopped the same way; and the
facts read from a cut stream name their node partial, as a stream without its `end`."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.hostile.support import cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"


class ClosedPipe(io.StringIO):
    """Standard output whose reader left: writing fails as a pipe's write does (EPIPE)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


class ClosedOnFlush(io.StringIO):
    """The reader left while the output sat in the buffer: only the flush finds out."""

    def flush(self) -> None:
        if self.getvalue():
            raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize(
    "args",
    [
        ["triage", str(OOM)],  # a failed run: was 0, "healthy"
        ["triage", str(OOM), "--format", "json"],
        ["check", str(OOM), "--format", "sarif"],
        ["facts", str(OOM), "--host", "n0"],
        ["rules", "list"],
    ],
    ids=lambda args: " ".join(a for a in args if a != str(OOM)),
)
@pytest.mark.parametrize("stdout", [ClosedPipe, ClosedOnFlush], ids=["write", "flush"])
def test_a_closed_pipe_is_141_never_0(
    args: list[str],
    stdout: type[io.StringIO],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "stdout", stdout())
    assert main([*args, "-q"]) == 141
    assert capsys.readouterr().err == ""


def test_the_whole_output_written_keeps_the_verdicts_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(capsys, "triage", str(OOM))
    assert code == 1 and "rank 1 failed first: oom" in out


def test_facts_cut_short_name_their_node_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `facts | head -n 3` let through: the reader sees no `end` record and never
    takes it for the node's whole facts."""
    code, out, _ = cli(capsys, "facts", str(OOM), "--host", "n0")
    assert code == 0 and out.splitlines()[-1].startswith('{"kind":"end"')
    cut = tmp_path / "n0.facts.jsonl"
    cut.write_text("".join(out.splitlines(keepends=True)[:3]))
    code, out, err = cli(capsys, "triage", str(cut), "--format", "json")
    report = strict_json(out)
    assert code in (0, 1) and err == ""
    assert report["outcome"] != "ok"
    assert {n["host"]: n["state"] for n in report["nodes"]}["n0"] == "partial"
    assert any("node n0" in w and "no end record" in w for w in report["warnings"])
