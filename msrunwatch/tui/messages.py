"""What the feed thread tells the app: snapshots fold together, findings never do."""

from __future__ import annotations

from textual.message import Message

from msrunwatch.judge.model import Finding, RootCause
from msrunwatch.live.run import Update


class SnapshotUpdated(Message):
    """The whole state of the run after a tick.

    A newer snapshot queued right behind this one replaces it (`can_replace`), so a
    backlog of snapshots folds to the newest instead of being applied one by one.
    """

    def __init__(self, update: Update) -> None:
        super().__init__()
        self.update = update

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotUpdated)


class FindingsRaised(Message):
    """Findings new since the last tick, or seen on more ranks: each one is kept."""

    def __init__(self, findings: tuple[Finding, ...], root_cause: RootCause | None) -> None:
        super().__init__()
        self.findings = findings
        self.root_cause = root_cause


class FilesRestarted(Message):
    """Log files were truncated or replaced: a new run is writing into the directory."""

    def __init__(self, files: tuple[str, ...]) -> None:
        super().__init__()
        self.files = files


class TargetsAwaited(Message):
    """Some targets do not exist yet: the feed is waiting for them (`--wait`)."""

    def __init__(self, missing: tuple[str, ...], waited: float, expired: bool) -> None:
        super().__init__()
        self.missing = missing
        self.waited = waited
        """Seconds waited so far, when the message was sent (a message is sent every
        half second while waiting, so the figure shown is never older than that; measured by
        the sender, so what the screen says does not depend on when it is drawn)."""
        self.expired = expired
        """Waited for longer than --wait: the app gives up."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TargetsAwaited)


class LogsFound(Message):
    """The targets were listed before the first read: how many logs the view is reading."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count


class Said(Message):
    """A line the outputs (--on-finding, --events, --publish) wrote for a person, which
    headless puts on stderr: a hook that failed, an events file that cannot be written."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line
