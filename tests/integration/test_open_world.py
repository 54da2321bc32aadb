"""Unknown is not healthy: an ERROR line or an uncaught exception no rule knows, injected
anywhere into a healthy real run, is a finding that points at that line."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msrunwatch.drivers.triage import triage
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES

HEALTHY = [
    "cpu_dp2_success_glog1",
    "cpu_dp2_success_glog2",
    "cpu_2nodes_noderank_ok",
    "cpu_healthy_glog3",
    "dryrun_sim1_8p_nojoin_glog2",
]
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)
MESSAGE = st.lists(WORDS, min_size=2, max_size=8).map(" ".join)
GLOG_ERROR = st.builds(
    lambda level, module, message: (
        f"[{level}] {module}(4242,7f00deadbeef,python):2026-11-21-05:30:00.123.456 "
        f"[mindspore/ccsrc/foo/bar.cc:77] Frobnicate] {message}"
    ),
    st.sampled_from(["ERROR", "CRITICAL"]),
    st.sampled_from(["ME", "DEVICE", "RUNTIME_FRAMEWORK", "HCCL_ADPT", "PIPELINE"]),
    MESSAGE,
)
CLASS_NAME = st.builds(
    lambda module, name: f"{module}.{name}" if module else name,
    st.sampled_from(["", "mypkg", "my_pkg._internal", "numpy._core._exceptions"]),
    st.from_regex(r"_?[A-Z][a-z]{2,8}(?:Error|Failure|Problem|Exception)?", fullmatch=True),
)
TRACEBACK = st.builds(
    lambda name, message: (
        "Traceback (most recent call last):\n"
        '  File "/home/user/job/train.py", line 81, in on_train_step_end\n'
        "    self.frobnicate()\n"
        f"{name}: {message}"
    ),
    CLASS_NAME,
    MESSAGE,
)


def worker_logs(run: Path) -> list[Path]:
    return sorted(p for p in run.rglob("worker_*.log") if p.stat().st_size > 0)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    scenario=st.sampled_from(HEALTHY),
    text=st.one_of(GLOG_ERROR, TRACEBACK),
    which=st.integers(min_value=0, max_value=10_000),
    where=st.floats(min_value=0.0, max_value=1.0),
)
def test_an_unknown_fault_injected_anywhere_is_a_finding_at_its_line(
    tmp_path_factory: object, rules: list[Rule], scenario: str, text: str, which: int, where: float
) -> None:
    run = Path(tmp_path_factory.mktemp("run"))  # type: ignore[attr-defined]
    shutil.copytree(FIXTURES / scenario, run / scenario)
    logs = worker_logs(run / scenario)
    target = logs[which % len(logs)]
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    at = int(where * len(lines))
    injected = [line + "\n" for line in text.split("\n")]
    target.write_text("".join([*lines[:at], *injected, *lines[at:]]), encoding="utf-8")
    fault_line = at + len(injected)  # the ERROR line, or the exception line ending the traceback
    report = triage([str(run / scenario)], rules)
    places = {
        (o.file, o.line) for f in report.findings for o in f.occurrences if o.file is not None
    }
    relative = target.relative_to(run / scenario).as_posix()
    assert (relative, fault_line) in places, (relative, fault_line, text)
    assert report.outcome != "ok" or any(f.severity.value != "info" for f in report.findings)
