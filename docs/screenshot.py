"""Draw the README's screenshot (docs/tui-oom-hccl.svg) from a fixture, never by hand.

    python docs/screenshot.py            # rewrite the SVG
    python docs/screenshot.py --check    # exit 1 if the SVG is not what the code draws now

The live view is run headless on triage's verdict of the 8-rank OOM fixture, at a fixed
size, with a frozen clock, so the same code always draws the same picture; a test runs
`--check`, so the README cannot show a screen the tool no longer draws.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = "fixtures/synth_hccl_ei0006_after_oom_8p"
OUTPUT = ROOT / "docs" / "tui-oom-hccl.svg"
SIZE = (120, 34)
TITLE = "msrunwatch fixtures/synth_hccl_ei0006_after_oom_8p"


async def _draw() -> str:
    from msrunwatch.drivers.triage import triage
    from msrunwatch.live.run import Update
    from msrunwatch.rules.loader import load_rules
    from msrunwatch.tui.app import MsrunwatchApp
    from msrunwatch.tui.messages import FindingsRaised, SnapshotUpdated

    report = triage([FIXTURE], load_rules())
    end = max(r.last_time for r in report.ranks if r.last_time is not None)
    update = Update(report, report.findings, (), {}, 0, 0, (), end)
    app = MsrunwatchApp(None, (FIXTURE,), clock=lambda: end)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(FindingsRaised(report.findings, report.root_cause))
        app.post_message(SnapshotUpdated(update))
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        return app.export_screenshot(title=TITLE)


def draw() -> str:
    """The screenshot's SVG, drawn from the repository root."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return asyncio.run(_draw())
    finally:
        os.chdir(here)


def main(argv: list[str] | None = None) -> int:
    """Write the SVG, or with --check say whether the committed one is current."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    svg = draw()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != svg:
            print(
                f"{OUTPUT.relative_to(ROOT)} is stale: python docs/screenshot.py", file=sys.stderr
            )
            return 1
        return 0
    OUTPUT.write_text(svg, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
