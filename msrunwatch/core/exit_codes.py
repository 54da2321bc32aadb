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
    HUNG_UP = 129
    """The live view's terminal hung up (SIGHUP: 128 + 1, as a shell reports it)."""
    INTERRUPTED = 130
    """Stopped by Ctrl+C."""
    OUTPUT_CLOSED = 141
    """Standard output closed before everything was written (a reader that went away:
    `| head`); 128 + SIGPIPE, what a shell reports for `cat` or `grep` stopped the same way.
    Never 0: output cut short must not pass for a whole answer (`set -o pipefail` sees it)."""
    TERMINATED = 143
    """Stopped by SIGTERM (128 + 15, as a shell reports a process SIGTERM killed)."""
