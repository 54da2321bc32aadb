"""Start the live view on a LiveRun, and end it cleanly: the entry point `watch` calls."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from msrunwatch.judge.model import Report
from msrunwatch.live.observer import Arrival
from msrunwatch.live.run import Engine
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.feed import LiveFeed
from msrunwatch.tui.signals import StopSignals

JOIN_S = 5.0
"""How long quitting waits for a tick that is under way."""


def run_tui(
    live: Engine,
    tick_s: float = 0.25,
    arrival: Arrival | None = None,
    exit_when_done: bool = False,
    shown: Sequence[str] | None = None,
    color: bool = False,
) -> int:
    """Show the live view until the user quits (or, with `exit_when_done`, the run ends),
    SIGTERM or SIGHUP; then the verdict is printed as triage prints it, `color` or not, so
    it stays on the terminal (see `parting_words`); returns triage's exit code for the run,
    2 when a target never appeared, 128 + the signal after one;
    `shown`: what the header says is watched, when not the engine's targets (the cluster
    view's sources)."""
    feed = LiveFeed(live, tick_s, arrival)
    app = MsrunwatchApp(
        feed, live.targets if shown is None else shown, exit_when_done=exit_when_done
    )
    stops = StopSignals(app)
    with stops.installed():
        code = app.run()
    feed.stop()
    feed.join(JOIN_S)
    if stops.signum is not None:  # SIGTERM or SIGHUP: the terminal was given back
        return stops.said()
    if app.gave_up:
        print(f"msrunwatch: error: {app.gave_up}", file=sys.stderr)
    if code is None:  # the app failed; Textual printed why
        return app.return_code or 1
    print(parting_words(app, color, live.consoles), end="", flush=True)
    return code


def parting_words(app: MsrunwatchApp, color: bool, consoles: Sequence[str] = ()) -> str:
    """What stays on the terminal once the view closed by `q` or at the run's end: the
    newest verdict, so that quitting does not take what was watched away with the screen.
    Nothing before the first verdict, nor when a target never appeared (the error says
    why), nor after a signal (whoever sent it is not reading)."""
    if app.last is None or app.gave_up or app.stop_signal is not None:
        return ""
    return verdict_text(app.last.report, color, consoles)


def verdict_text(report: Report, color: bool, consoles: Sequence[str] = ()) -> str:
    """The final verdict as triage prints it (its first lines: a screen's worth), and the
    triage command that reads what the view read."""
    from msrunwatch.report import text

    return text.verdict(report, color=color, consoles=consoles)
