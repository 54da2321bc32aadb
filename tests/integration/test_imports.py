"""What each entry point loads: the headless ones never Textual, and a bare `--version`
nothing heavy (a cold start is paid on every CI step)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.rules import rulecache
from msrunwatch.rules.loader import builtin_rules_dir, check_files
from tests.support import FIXTURES, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")

HEADLESS = [
    "msrunwatch.commands.check",
    "msrunwatch.commands.triage",
    "msrunwatch.commands.rules",
    "msrunwatch.commands.estimate",
    "msrunwatch.drivers.check",
    "msrunwatch.drivers.triage",
    "msrunwatch.drivers.rulecases",
    "msrunwatch.live.headless",
    "msrunwatch.live.run",
]
PROBE = """
import sys
{body}
loaded = sorted(m for m in sys.modules if m.split('.')[0] in {watch!r})
sys.stderr.write('LOADED:' + ','.join(loaded) + chr(10))
"""


def loaded_after(body: str, watch: tuple[str, ...]) -> list[str]:
    code = PROBE.format(body=body, watch=watch)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(x for x in out.stderr.splitlines() if x.startswith("LOADED:"))
    return [m for m in line[len("LOADED:") :].split(",") if m]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_entry_points_never_load_textual(module: str) -> None:
    assert loaded_after(f"import {module}", ("textual", "rich")) == []


def test_a_whole_check_run_loads_no_textual() -> None:
    run = f"""
from msrunwatch.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main(['check', {str(FIXTURES / "cpu_dp2_oom_alloc_failed")!r}])
"""
    assert loaded_after(run, ("textual", "rich", "jsonschema")) == []


@pytest.mark.parametrize("command", ["check", "triage"])
def test_reading_log_directories_loads_no_facts_reader(command: str) -> None:
    """The facts reader (JSON, gzip, the record schema) is for facts targets only, and
    text output needs neither the JSON nor the Markdown report."""
    run = f"""
from msrunwatch.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main([{command!r}, {str(FIXTURES / "cpu_dp2_oom_alloc_failed")!r}])
"""
    loaded = set(loaded_after(run, ("msrunwatch", "json", "gzip")))
    assert "msrunwatch.drivers.triage" in loaded  # the logs were read and judged
    facts = {"msrunwatch.read.nodefacts.reader", "msrunwatch.read.nodefacts.write", "gzip"}
    reports = {"msrunwatch.report.jsonout", "msrunwatch.report.markdown"}
    assert not (facts | reports) & loaded


def test_version_loads_nothing_heavy() -> None:
    run = """
from msrunwatch.cli import main
try:
    main(['--version'])
except SystemExit:
    pass
"""
    heavy = ("yaml", "regex", "jsonschema", "textual", "watchdog", "prometheus_client")
    assert loaded_after(run, heavy) == []
    assert loaded_after(run, ("msrunwatch", "argparse")) == [
        "msrunwatch",
        "msrunwatch.cli",
        "msrunwatch.core",
        "msrunwatch.core.errors",
    ]


@pytest.mark.parametrize("command", ["check", "triage"])
def test_a_command_imports_no_other_commands_module(command: str) -> None:
    run = f"""
from msrunwatch.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main([{command!r}, {str(FIXTURES / "cpu_dp2_oom_alloc_failed")!r}])
"""
    loaded = loaded_after(run, ("msrunwatch",))
    others = {"watch", "facts", "estimate", "rules", "completion", "fish"} - {command}
    assert not {f"msrunwatch.commands.{name}" for name in others} & set(loaded)
    assert f"msrunwatch.commands.{command}" in loaded


def test_the_built_in_pack_passes_full_validation() -> None:
    """Commands load the built-in pack without the schema checks (a cold start is short);
    this is where the shipped rules must pass them."""
    rules, errors = check_files([builtin_rules_dir()])
    assert not errors and len(rules) > 100


COLD_CHECK = """
import atexit, sys
def report():
    sys.stderr.write('LOADED:' + ','.join(sorted(sys.modules)) + chr(10))
atexit.register(report)
sys.argv = ['msrunwatch', 'check', {target!r}]
from msrunwatch.cli import main
sys.exit(main())
"""


def test_a_cold_check_with_the_cache_warm_loads_what_the_readme_says(tmp_path: Path) -> None:
    """As the console script runs it (the report is an atexit function: the program ends
    itself once they have run): neither PyYAML nor the `regex` package's Python half, and
    the count of msrunwatch's modules the README gives."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop(rulecache.OFF, None)
    code = COLD_CHECK.format(target=str(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"))
    for _ in range(2):  # the first run fills the cache
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED:"))
    loaded = line[len("LOADED:") :].split(",")
    assert done.returncode == 1
    assert not [m for m in loaded if m.split(".")[0] in ("yaml", "jsonschema")]
    assert [m for m in loaded if m.startswith("regex")] == ["regex._regex"]
    own = sum(m.split(".")[0] == "msrunwatch" for m in loaded)
    said = re.search(r"A\s+cold `check` imports \d+ modules, (\d+) of them msrunwatch's", README)
    assert said is not None and int(said[1]) == own
