"""The headless outputs (--events FILE, --metrics-port, --publish, --on-finding) in the view.

The view drives the same `Outputs` the headless loop drives, from the same engine updates
(the feed hands it each tick's update), so the events, metrics and hook runs are the same.
Only a line for a person changes place: the terminal is Textual's, so what headless writes
on stderr (a hook that failed or was killed, an events file that cannot be written) is a
notification while the view is up, and is printed on stderr again once it has closed, where
it stays. The hook's own output never reaches the terminal: its stdout is discarded and its
stderr kept for that warning's last line (hooks.Hook), and it runs in a session of its own,
without the terminal.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading

from textual.app import App

from msrunwatch.live.headless import HeadlessOptions, Outputs, RunCollector
from msrunwatch.live.run import Engine, Update
from msrunwatch.tui.messages import Said


class ViewLines(io.StringIO):
    """Stderr for the outputs while the view holds the terminal: each whole line is posted
    to the app (from whichever thread wrote it) and kept; `closed_view()` prints the kept
    lines on stderr, and every later one goes there at once."""

    def __init__(self) -> None:
        super().__init__()
        self.app: App[int] | None = None
        self.lines: list[str] = []
        self._part = ""
        self._after = False
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            *whole, self._part = (self._part + text).split("\n")
            for line in whole:
                if line:
                    self._say(line)
        return len(text)

    def _say(self, line: str) -> None:
        if self._after:
            _stderr(line)
            return
        self.lines.append(line)
        if self.app is not None:
            self.app.post_message(Said(line))

    def closed_view(self) -> None:
        """The view is gone: what it showed goes to stderr, and so does what follows."""
        with self._lock:
            self._after = True
            for line in self.lines:
                _stderr(line)


def _stderr(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # the terminal is gone (a hang-up)
        print(line, file=sys.stderr, flush=True)


class ViewOutputs:
    """The outputs a view was asked for, started before the screen is taken (a usage error,
    a port in use, comes first), fed by the view's feed, and ended with a done event."""

    def __init__(
        self, live: Engine, options: HeadlessOptions, collector: RunCollector | None = None
    ) -> None:
        self.lines = ViewLines()
        self.outputs = Outputs(
            live, options, err=self.lines, collector=collector, events_to_stdout=False,
            say_warnings=False,
        )  # fmt: skip
        try:
            self.outputs.start()
        except BaseException:
            self.outputs.close(wait_for_hooks=False)
            raise

    def observe(self, update: Update) -> None:
        """Every tick's update, on the feed's thread, as the headless loop publishes it."""
        self.outputs.publish(update)

    def shown_by(self, app: App[int]) -> None:
        self.lines.app = app

    def end(self, code: int, reason: str, error: str | None, feed_stopped: bool) -> None:
        """The done event (not while the feed thread may still publish), then the outputs
        closed: hooks still running are waited for when the run ended (--exit-when-done, as
        headless waits), else stopped; what the view showed for a person stays on stderr."""
        self.lines.closed_view()
        if feed_stopped:
            self.outputs.finish(code, reason, error)
        self.outputs.close(wait_for_hooks=reason == "done")
