"""Exit codes: a contract for scripts and CI."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What the process's return code means."""

    OK = 0
    """The run looks healthy, or nothing reached the failure threshold."""
    FINDINGS = 1
    """Faults found (or, for `check`, findings at or above --fail-on)."""
    USAGE = 2
    """Bad arguments, unreadable input or invalid rules; a one-line error on stderr."""
    INTERRUPTED = 130
    """Stopped by Ctrl+C."""
    TERMINATED = 143
    """Stopped by SIGTERM (128 + 15, as a shell reports a process SIGTERM killed)."""
