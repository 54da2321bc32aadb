"""bench/bench_cold.py's table is not interleaved with what the commands it times say on
stderr (trial A4: msrun's console note, once per timed `check` and `triage`, in the middle
of the table); their exit code is still recorded."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.support import ROOT


def test_the_timed_commands_stderr_stays_out_of_the_bench_output(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("bench_cold", ROOT / "bench/bench_cold.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_cold", bench)  # its dataclasses look it up
    spec.loader.exec_module(bench)
    said = "import sys; sys.stderr.write('msrunwatch: note: console beside\\n'); sys.exit(3)"
    noisy = bench.Command("noisy", [sys.executable, "-c", said], "", {})
    runs = bench.rounds([noisy], 2, {"PATH": "/usr/bin:/bin"})
    out, err = capfd.readouterr()
    assert "console beside" not in out + err
    assert [r.returncode for r in runs["noisy"]] == [3, 3]
