"""Start the live view on a LiveRun, and end it cleanly: the entry point `watch` calls."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from msrunwatch.judge.model import Report
from msrunwatch.live.headless import HeadlessOptions, RunCollector
from msrunwatch.live.observer import Arrival
from msrunwatch.live.run import Engine
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.feed import LiveFeed
from msrunwatch.tui.outputs import ViewOutputs
from msrunwatch.tui.signals import StopSignals

STOPPED = {signal.SIGTERM: "terminated", signal.SIGHUP: "hangup"}
"""The done event's reason when a signal closed the view."""
JOIN_S = 5.0
"""How long quitting waits for a tick that is under way."""


def run_tui(
    live: Engine,
    tick_s: float = 0.25,
    arrival: Arrival | None = None,
    exit_when_done: bool = False,
    shown: Sequence[str] | None = None,
    color: bool = False,
    outputs: HeadlessOptions | None = None,
    collector: RunCollector | None = None,
) -> int:
    """Show the live view until the user quits (or, with `exit_when_done`, the run ends),
    SIGTERM or SIGHUP; then the verdict is printed as triage prints it, `color` or not, so
    it stays on the terminal (see `parting_words`); returns triage's exit code for the run,
    2 when a target never appeared, 128 + the signal after one.
    `shown`: what the header says is watched, when not the engine's targets (the cluster
    view's sources); `outputs`: the headless outputs asked for (--events FILE,
    --metrics-port, --publish, --on-finding), fed every tick's update as headless feeds them,
    `collector` their metrics (the cluster view's)."""
    app, feed, given = view(live, tick_s, arrival, exit_when_done, shown, outputs, collector)
    stops = StopSignals(app)
    try:
        with stops.installed():
            code = app.run()
    finally:
        feed.stop()
        joined = feed.join(JOIN_S)
    result = _ended(app, code, stops, color, live.consoles)
    if given is not None:
        given.end(*done_event(app, result if code is not None else None), feed_stopped=joined)
    return result


def view(
    live: Engine,
    tick_s: float = 0.25,
    arrival: Arrival | None = None,
    exit_when_done: bool = False,
    shown: Sequence[str] | None = None,
    outputs: HeadlessOptions | None = None,
    collector: RunCollector | None = None,
) -> tuple[MsrunwatchApp, LiveFeed, ViewOutputs | None]:
    """The app, its feed, and the outputs it drives (started: a usage error comes here)."""
    given = ViewOutputs(live, outputs, collector) if outputs is not None else None
    feed = LiveFeed(live, tick_s, arrival, given.observe if given else None)
    app = MsrunwatchApp(
        feed, live.targets if shown is None else shown, exit_when_done=exit_when_done
    )
    if given is not None:
        given.shown_by(app)
    return app, feed, given


def _ended(
    app: MsrunwatchApp,
    code: int | None,
    stops: StopSignals,
    color: bool,
    consoles: Sequence[str],
) -> int:
    """What the command line says once the view closed, and the exit code."""
    if stops.signum is not None:  # SIGTERM or SIGHUP: the terminal was given back
        return stops.said()
    if app.gave_up:
        print(f"msrunwatch: error: {app.gave_up}", file=sys.stderr)
    if code is None:  # the app failed; Textual printed why
        return app.return_code or 1
    print(parting_words(app, color, consoles), end="", flush=True)
    return code


def done_event(app: MsrunwatchApp, code: int | None) -> tuple[int, str, str | None]:
    """The done event's exit code, reason and error, as the view ended (`code` None: the
    app failed)."""
    if code is None:
        return app.return_code or 1, "error", "the view failed"
    if app.gave_up:
        return code, "error", app.gave_up
    if app.stop_signal is not None:
        return code, STOPPED.get(signal.Signals(app.stop_signal), "terminated"), None
    return code, "done" if app.run_ended else "quit", None


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
