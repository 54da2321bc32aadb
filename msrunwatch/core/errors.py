"""Every error msrunwatch raises, in one family.

`MsrunwatchError` and its subclasses are what a user can fix: the command line prints
`msrunwatch: error: <message>` (always one line) and exits 2. The parse errors below
them carry a position and are turned into one of the user-facing errors by the reader
that met them, which knows the file.
"""

from __future__ import annotations

import re


def _one_line(message: str) -> str:
    """Error messages are printed on one line, whatever the text they quote holds."""
    return re.sub(r"\s*[\r\n]+\s*", " ", message).strip()


class MsrunwatchError(Exception):
    """Bad input or usage the user can fix; one line, exit code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(_one_line(message))


class UsageError(MsrunwatchError):
    """Bad arguments, or an output that cannot be written."""


class InputError(MsrunwatchError):
    """A target that cannot be read as msrun logs."""


class SettingsError(MsrunwatchError):
    """A settings file or option that cannot be used."""


class ConfigError(MsrunwatchError):
    """A training config that cannot be read or parsed (`file:line: why`)."""


class RuleError(MsrunwatchError):
    """A rule or cases file that cannot be used; str() is `file:line:col: rule: message`."""

    def __init__(
        self, path: object, message: str, line: int = 1, col: int = 1, rule: str | None = None
    ) -> None:
        self.path, self.line, self.col, self.rule = str(path), line, col, rule
        self.problem = message
        who = f"{rule}: " if rule else ""
        super().__init__(f"{path}:{line}:{col}: {who}{message}")


# -- parse errors: raised inside a reader, reported through one of the errors above --------


class YamlError(Exception):
    """A document that is not valid (or is too large) YAML; line and col are 1-based."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line, self.col = line, col


class ExprError(Exception):
    """A rule condition that cannot be used; `col` is 0-based within the expression."""

    def __init__(self, message: str, col: int = 0) -> None:
        super().__init__(message)
        self.col = col


class ShellSyntaxError(Exception):
    """Launch-script text bash itself could not parse; `line` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class ArithError(Exception):
    """A shell arithmetic expression that cannot be evaluated; the message says why."""
