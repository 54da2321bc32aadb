"""Launch scripts are read in bounded memory and in time proportional to their size
(issue 10): expansion is capped by output size, not only by depth, and the readers never
copy what they accumulated once per command.

No timing assertions: memory is measured (tracemalloc, or an address-space limit in a
child process), and growth is checked by what the reader keeps.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

from msrunwatch.read.config import read_config
from msrunwatch.read.config.shellvars import MAX_VALUE_SPANS
from msrunwatch.read.config.shellwalk import Walker
from msrunwatch.read.config.shellwords import lex

DOUBLING = (
    "#!/bin/bash\nA=x\n"
    + 'A="$A$A"\n' * 39
    + (
        "msrun --worker_num=8 --local_worker_num=8 pretrain_gpt.py --tensor-model-parallel-size $A\n"
    )
)
"""Issue 10's 642-byte shape: 2^39 characters if every doubling were kept."""


def _read_in_child(path: Path, limit_mib: int) -> subprocess.CompletedProcess[str]:
    """Read a config in a child process that may not map more than limit_mib."""
    code = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({limit_mib} << 20, {limit_mib} << 20))
        from msrunwatch.read.config import read_config
        config = read_config({str(path)!r})
        print(config.values["tp"].unresolved)
        """
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_doubling_a_variable_39_times_stays_small(tmp_path: Path) -> None:
    path = tmp_path / "bomb.sh"
    path.write_text(DOUBLING, encoding="utf-8")
    assert len(DOUBLING) < 700
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    limit = 1024 if soft == resource.RLIM_INFINITY else min(1024, soft >> 20)
    done = _read_in_child(path, limit)
    assert done.returncode == 0, done.stderr
    assert "$A grows past 256 KiB" in done.stdout


def test_a_capped_variable_is_unresolved_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "bomb.sh"
    path.write_text(DOUBLING, encoding="utf-8")
    tp = read_config(str(path)).values["tp"]
    assert tp.value is None
    assert tp.unresolved is not None and "grows past" in tp.unresolved


def test_appending_keeps_one_buffer_not_a_copy_per_append() -> None:
    """`A+=x` repeated: each append extends the value in place (linear), and the value
    stops growing at the cap instead of being copied ever larger."""
    n = MAX_VALUE_SPANS + 500
    walker = Walker()
    walker.run(lex("A=start\n" + 'A+=" --x"\n' * n))
    var = walker.env.get("A")
    assert var is not None
    assert var.reason is not None and "grows past" in var.reason


def test_appends_in_place_leave_earlier_launches_their_value() -> None:
    """Appends share one buffer; a launch between them still sees the value of its moment."""
    walker = Walker()
    walker.run(lex('A=start\nA+=" --x"\npython a.py $A\nA+=" --y"\nA+=" --z"\npython b.py $A\n'))
    a, b = (launch.env.get("A") for launch in walker.launches)
    assert a is not None and b is not None
    assert a.value.text == "start --x"
    assert b.value.text == "start --x --y --z"
    assert [f.text for f in walker.launches[1].fields] == ["b.py", "start", "--x", "--y", "--z"]


def test_launch_commands_do_not_copy_every_variable() -> None:
    """Each launch once kept a copy of all variables: quadratic in a script of many
    assignments and commands (24 GB for issue 10's 3.9 MB script)."""
    lines = []
    for i in range(2000):
        lines.append(f"V{i}=value_{i}")
        lines.append(f"python tool.py --a $V{i}")
    text = "\n".join(lines) + "\n"
    tracemalloc.start()
    walker = Walker()
    walker.run(lex(text))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(walker.launches) == 2000
    # 2,000 launches x ~1,000 variables each would be ~100 MB of dict entries
    assert peak < 24 << 20


def test_each_launch_sees_the_variables_of_its_moment() -> None:
    walker = Walker()
    walker.run(lex("TP=1\npython a.py\nTP=2\npython b.py\nunset TP\npython c.py\n"))
    seen = [launch.env.get("TP") for launch in walker.launches]
    assert [v.value.text if v else None for v in seen] == ["1", "2", None]


def test_a_script_expanding_a_large_variable_many_times_is_capped(tmp_path: Path) -> None:
    """Within the per-variable cap, many uses still add up: the whole script's expansions
    are capped too, and what is past the cap is unresolved, not expanded."""
    big = "y" * (200 * 1024)
    uses = "python tool.py --a $BIG\n" * 400
    path = tmp_path / "uses.sh"
    path.write_text(
        f"#!/bin/bash\nBIG={big}\n{uses}msrun --worker_num=8 pretrain_gpt.py $BIG\n",
        encoding="utf-8",
    )
    done = _read_in_child(path, 1024)
    assert done.returncode == 0, done.stderr
    assert "is not expanded" in done.stdout
