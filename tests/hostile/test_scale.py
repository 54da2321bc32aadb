"""`check` on 100,000 tiny logs stays within the README's promise, well under 200 MiB
(issue 21, defect 14): it had taken 532 MB (520 MB here at 41023f6). The peak resident set
of the msrunwatch process is what the kernel reports for it (wait4), not an estimate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FILES = 100_000
LINE = b"[WARNING] ME(100,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] hello\n"
PROMISE_MIB = 200

LAUNCHER = """
import os, sys
directory, out, err = sys.argv[1:]
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execv(sys.executable, [sys.executable, "-m", "msrunwatch", "check", directory])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, usage.ru_utime)
"""
"""Runs msrunwatch from a small process and reports its peak as wait4 gives it. Not from
pytest's own process: Linux counts the image a child had before exec in its ru_maxrss, so a
child of a pytest grown to 354 MiB by earlier tests 'peaked' at 354 MiB (183 MiB alone)."""


@pytest.mark.slow
@pytest.mark.hang_after(900)  # 30 s of CPU, more on a busy machine
def test_check_on_100000_tiny_logs_stays_under_the_promise(tmp_path: Path) -> None:
    directory = tmp_path / "msrun_log"
    directory.mkdir()
    try:
        for n in range(FILES):
            (directory / f"worker_{n}.log").write_bytes(LINE)
        env = {**os.environ, "NO_COLOR": "1"}
        done = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(directory), str(tmp_path / "out"),
             str(tmp_path / "err")],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        code, maxrss_kib, user_s = done.stdout.split()
    finally:
        shutil.rmtree(directory)
    peak_mib = int(maxrss_kib) >> 10
    print(f"check of {FILES:,} tiny logs: peak RSS {peak_mib} MiB, {float(user_s):.1f} s user")
    # read post mortem (as check does since it judges a run's end): logs that stop mid-line,
    # written long after their lines, are a job stopped from outside
    assert int(code) == 1, (tmp_path / "err").read_text()
    summary = (tmp_path / "out").read_text().splitlines()[-1]
    assert summary.startswith("1 error, 0 warnings") and "job-stopped" in summary
    assert peak_mib < PROMISE_MIB


# In-process: what the 100,000-file run relies on, shown on a few files.


def test_a_directory_with_one_log_among_configs_is_a_log_directory(tmp_path: Path) -> None:
    from msrunwatch.drivers.check import is_config_dir
    from msrunwatch.read.discover import has_log

    (tmp_path / "train.yaml").write_text("parallel:\n  pipeline_stage: 2\n")
    assert not has_log(str(tmp_path))
    assert is_config_dir(str(tmp_path))  # configs and no log: every config is linted
    (tmp_path / "worker_0.log").write_bytes(LINE)
    assert has_log(str(tmp_path))
    assert not is_config_dir(str(tmp_path))


def test_no_directory_is_no_config_directory(tmp_path: Path) -> None:
    from msrunwatch.drivers.check import is_config_dir

    assert not is_config_dir(str(tmp_path / "absent"))
    (tmp_path / "unreadable").mkdir()
    (tmp_path / "unreadable" / "worker_0.log").write_bytes(b"")  # empty: not a log yet
    assert not is_config_dir(str(tmp_path / "unreadable"))  # and no config either


def test_a_file_read_to_its_end_leaves_no_budget_behind(tmp_path: Path) -> None:
    from msrunwatch.drivers.reading import scan_file
    from msrunwatch.read.discover import discover_target
    from msrunwatch.rules.loader import load_rules
    from msrunwatch.rules.matcher import LineMatcher

    for n in range(3):
        (tmp_path / f"worker_{n}.log").write_bytes(LINE)
    matcher = LineMatcher(load_rules())
    facts = [scan_file(log, matcher) for log in discover_target(str(tmp_path))]
    assert [f.error for f in facts] == [None, None, None]
    assert [f.warnings for f in facts] == [(), (), ()]
    assert matcher.budget.abandoned(str(tmp_path / "worker_0.log")) == []
    assert not matcher.budget._files  # one record per file read would be 100,000 records


def _has_log_by_discovery(target: str) -> bool:
    """The slow answer: every file classified, the fullest glog copies kept."""
    from msrunwatch.core.errors import MsrunwatchError
    from msrunwatch.read.discover import discover_target

    try:
        return bool(discover_target(target))
    except MsrunwatchError:
        return False


def _mixed_directories(tmp_path: Path) -> list[Path]:
    """Directories where stopping at the first log could go wrong: configs only, a symlink
    out of the directory (not read) before a log, glog's level copies, a log in a rank
    subdirectory after files that are not logs, a file no rule can read."""
    outside = tmp_path / "elsewhere.log"
    outside.write_bytes(LINE)
    made = {name: tmp_path / name for name in ("configs", "escape", "glog", "nested", "noise")}
    for d in made.values():
        d.mkdir()
    (made["configs"] / "a.yaml").write_text("model: {}\n")
    (made["escape"] / "a_link.log").symlink_to(outside)
    (made["glog"] / "mindspore.host.root.log.WARNING.20261128-101010.4242").write_bytes(LINE)
    (made["glog"] / "mindspore.host.root.log.INFO.20261128-101010.4242").write_bytes(LINE)
    (made["nested"] / "a.txt").write_text("nothing here\n")
    (made["nested"] / "rank_3").mkdir()
    (made["nested"] / "rank_3" / "worker.log").write_bytes(LINE)
    (made["noise"] / "notes.txt").write_bytes(b"\x00\x01 binary\n")
    return [*made.values(), made["escape"] / "a_link.log", tmp_path / "absent"]


def test_has_log_stops_early_but_answers_as_discovery_does(tmp_path: Path) -> None:
    """has_log walks lazily and stops at the first log (a directory of 100,000 logs was
    walked whole, twice, before `check` read it): on every fixture and on the directories
    where stopping early could differ, it answers as full discovery does."""
    from msrunwatch.read.discover import has_log

    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    targets = [*sorted(p for p in fixtures.iterdir() if p.is_dir()), *_mixed_directories(tmp_path)]
    answers = {str(t): has_log(str(t)) if t.exists() else False for t in targets}
    assert answers == {str(t): _has_log_by_discovery(str(t)) for t in targets}
    assert sum(answers.values()) >= 60 and not all(answers.values())
    from msrunwatch.read.discover import discover_target

    glog = [f.path.name for f in discover_target(str(tmp_path / "glog"))]
    assert glog == ["mindspore.host.root.log.INFO.20261128-101010.4242"]  # the fullest copy


def test_has_log_looks_at_one_file_of_a_directory_of_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from msrunwatch.read import discover

    for rank in range(200):
        (tmp_path / f"worker_{rank}.log").write_bytes(LINE)
    looked: list[str] = []
    real_inside = discover._inside

    def counted(path: Path, root: Path, warnings: list[str]) -> bool:
        looked.append(path.name)
        return real_inside(path, root, warnings)

    monkeypatch.setattr(discover, "_inside", counted)
    assert discover.has_log(str(tmp_path))
    assert looked == ["worker_0.log"]
