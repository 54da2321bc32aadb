"""Write headless mode's events, one JSON object per line, flushed.

Events (schema 1). Every event has "event", "time" (the wall clock when it was written,
ISO 8601 in UTC) and "schema": 1; a payload's own log time, where the JSON report calls
it "time", is renamed "log_time" (the log's clock, no zone, as in the JSON report).

=============  ================================================================
event          payload
=============  ================================================================
start          targets, consoles, version, host, pid, poll, metrics (URL or null)
rank_status    rank, status, previous (null for a new rank), reason, file, log_dir
finding        the JSON report's finding (rule, category, severity, ranks, ...),
               log_time, spread (true when an announced finding reached more ranks)
root_cause     the JSON report's root_cause, log_time, cleared: false; or only
               cleared: true when a restarted run no longer has one
restarted      file (relative to its log directory): truncated or replaced
caught_up      files, ranks, bytes_read: everything present at start was read
warning        message: a problem reading the run, once when it first appears
done           outcome, exit_code, reason ("done", "interrupted", "terminated"; the
               view: "quit", "hangup"; "error" with an "error" message),
               statuses (rank count per status), warnings (those still standing)
=============  ================================================================
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from msrunwatch.core.fileio import silence_stdout
from msrunwatch.core.numbers import finite
from msrunwatch.core.sanitize import json_document, json_line

SCHEMA = 1
"""Version of the event lines; bumped only when a field changes meaning or disappears."""


class PipeClosed(Exception):
    """The reader of stdout went away: end quietly."""


def iso_now(seconds: float) -> str:
    """A wall-clock time as ISO 8601 in UTC, to the millisecond."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")


def relabel_time(payload: dict[str, Any]) -> dict[str, Any]:
    """The report's log time as "log_time": "time" is the event's wall clock."""
    return {("log_time" if key == "time" else key): value for key, value in payload.items()}


class EventStream:
    """Where the event lines go: a given stream, stdout, or an --events file it owns."""

    def __init__(self, clock: Callable[[], float], err: TextIO) -> None:
        self.clock, self.err = clock, err
        self.out: TextIO | LineFile | None = None
        self._owns_out = False
        self._write_failed = False

    def open(
        self,
        given: TextIO | None,
        events: str | None,
        watched: Iterable[str],
        usage_error: type[Exception],
    ) -> None:
        """Write to `given`, else to stdout or FILE; FILE may not be inside `watched`."""
        if given is not None:
            self.out = given
        elif not events or events == "-":
            self.out = LineFile.of_stdout() or sys.stdout
            self._owns_out = self.out is not sys.stdout
        else:
            self.out = _open_file(events, watched, usage_error)
            self._owns_out = True

    def close(self) -> None:
        """Close an --events file (never a stream it was given, nor stdout)."""
        if self._owns_out and self.out is not None:
            self.out.close()
            self._owns_out = False

    def emit(self, event: str, **payload: Any) -> dict[str, Any]:
        """Write one event; returns the record as written."""
        record = self.record(event, **payload)
        self._write(record)
        return record

    def record(self, event: str, **payload: Any) -> dict[str, Any]:
        """One event as it would be written now (a hook's stdin for a finding written before)."""
        return {"event": event, "time": iso_now(self.clock()), "schema": SCHEMA, **payload}

    def _write(self, record: dict[str, Any]) -> None:
        """One line, flushed; a closed pipe ends the run, another error only warns once."""
        out = self.out
        if out is None or self._write_failed:
            return
        try:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False, default=_plain)
        except ValueError:  # a NaN or infinity got past the report: null, as JSON has none
            line = json.dumps(_finite(record), ensure_ascii=False, default=_plain)
        line = json_line(json_document(line)) + "\n"
        try:
            out.write(line)
            out.flush()
        except BrokenPipeError:
            if out is sys.stdout:
                silence_stdout()
            raise PipeClosed from None
        except OSError as exc:  # a full disk: the run goes on, its exit code unchanged
            self._write_failed = True
            print(
                f"msrunwatch: warning: cannot write events: {exc.strerror or exc}; "
                "no more are written (the run is still watched)",
                file=self.err,
            )


class LineFile:
    """Event lines appended to a regular file, each whole or not at all: a line the disk
    had room for only in part is cut back off (ftruncate), so a full disk never leaves a
    cut-off line for a reader to choke on."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def of_stdout(cls) -> LineFile | None:
        """Standard output when it is a regular file (`> events.jsonl`), else None."""
        try:
            fd = sys.stdout.fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            sys.stdout.flush()
            return cls(os.dup(fd))
        except (OSError, ValueError, AttributeError):
            return None

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        try:
            start: int | None = os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:  # a FIFO or a terminal given as FILE: nothing to cut back
            start = None
        written = 0
        try:
            while written < len(data):
                written += os.write(self.fd, data[written:])
        except OSError:
            if written and start is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self.fd, start)
            raise

    def flush(self) -> None:
        """Nothing is buffered."""

    def close(self) -> None:
        os.close(self.fd)


def _open_file(events: str, watched: Iterable[str], usage_error: type[Exception]) -> LineFile:
    """Open --events FILE to append, unless it is in a watched directory."""
    path = Path(events).resolve()
    for target in watched:
        root = Path(target).resolve()
        directory = root if root.is_dir() else root.parent
        if path.is_relative_to(directory):
            raise usage_error(
                f"--events {events} is inside the watched directory {directory}; "
                "msrunwatch never writes there"
            )
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        return LineFile(os.open(path, flags, 0o644))
    except OSError as exc:
        raise usage_error(f"cannot write {events}: {exc.strerror}") from None


def _plain(value: Any) -> Any:
    """JSON for what the report's dicts may still hold (they hold plain data today)."""
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return str(value)


def _finite(value: Any) -> Any:
    """The value with every NaN or infinite float, at any depth, made null."""
    if isinstance(value, float):
        return finite(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
