"""Headless live mode: JSON-lines events, Prometheus metrics and a hook, one instance per node.

`msrunwatch watch DIR... --headless` runs the live engine without a screen. Every tick
(0.25 s, sooner when the file watcher saw a change) it writes what changed as one JSON
object per line, flushed, to stdout or `--events FILE`; `--metrics-port` serves the
run's state for Prometheus; `--on-finding CMD` runs a command per new error finding; and
`--exit-when-done` ends with triage's exit code once every rank has ended. Nothing is
ever written into the watched directories.

`loop` drives the ticks; `outputs` makes each tick's update events, metrics and hook runs
(the live view drives it too, for the same options); `events` documents and writes the
event lines, `metrics` the Prometheus metrics, and `hooks` runs --on-finding; `signals`
turns SIGINT and SIGTERM into a stop.
"""

from __future__ import annotations

from msrunwatch.live.headless.events import SCHEMA
from msrunwatch.live.headless.hooks import HOOK_TIMEOUT_S, HOOK_WORKERS
from msrunwatch.live.headless.loop import MIN_GAP_S, TICK_S, Headless
from msrunwatch.live.headless.metrics import OUTCOMES, RunCollector
from msrunwatch.live.headless.options import HeadlessOptions
from msrunwatch.live.headless.outputs import Outputs
from msrunwatch.live.headless.signals import REPEAT_S

__all__ = [
    "HOOK_TIMEOUT_S",
    "HOOK_WORKERS",
    "MIN_GAP_S",
    "OUTCOMES",
    "REPEAT_S",
    "SCHEMA",
    "TICK_S",
    "Headless",
    "HeadlessOptions",
    "Outputs",
    "RunCollector",
]
