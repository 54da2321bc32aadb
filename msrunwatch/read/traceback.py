"""Where an un-prefixed line stands in a Python traceback: its frames, the exception line
that ends it, and the exception's body (MindSpore prints its C++ error there).

This is structure, not fault knowledge: it tells the rules which line is an uncaught
exception (`kind == "exception"`), whatever its class, and where in the user's own code it
was raised (`frame`); which exception means what is for the rules to say.
"""

from __future__ import annotations

import re

START = "Traceback (most recent call last):"
CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
SURVIVED = (
    "Exception ignored",
    "Error in atexit._run_exitfuncs:",
    "Exception in thread ",
    "--- Logging error ---",
)
"""How the line before a traceback starts when Python prints it for an exception the program
goes on after: one raised in a destructor or an exit hook (`Exception ignored in: <function
X.__del__>`, `Exception ignored in atexit callback`, `Error in atexit._run_exitfuncs:`), in
a thread other than the main one (`Exception in thread Thread-1:`) or in a logging handler.
Any other traceback is the one the program dies of."""
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_LIBRARY = ("site-packages/", "dist-packages/", "/lib/python", "<frozen", "<string>")
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?P<detail>.*))?$")
_DECORATION = re.compile(r"^(?:-{5,}|={5,}|\s*)$|^- .*:$|\(For framework developers\)")
"""Body lines that carry no message: rules of dashes, `- Section:` headers, blank lines."""


class Traceback:
    """Follows one file's lines through tracebacks; `kind` of each line, `frame` so far."""

    __slots__ = ("before", "chained", "frame", "state", "survived")

    def __init__(self) -> None:
        self.state = "none"
        self.survived = False
        """The traceback being read is one the program went on after (see SURVIVED)."""
        self.chained = False
        """The last traceback ended with `During handling of ...`: the next continues it."""
        self.before = ""
        """The last line read outside a traceback's frames."""
        self.frame: str | None = None
        """The last frame outside installed packages: where the user's code was."""

    def feed(self, text: str) -> str:
        """`exception` for the line that ends a traceback, `text` for any other line."""
        if text.startswith(START):
            if not self.chained:
                self.survived = self.before.startswith(SURVIVED)
            self.state, self.frame, self.chained, self.before = "frames", None, False, ""
            return "text"
        if self.state != "frames":
            if self.state == "body" and text.startswith(CHAINED):
                self.state, self.chained = "none", True
            elif self.chained and text.strip():
                self.chained = False
            self.before = text
            return "text"
        if text.startswith((" ", "\t")) or not text.strip():
            self._frame(text)
            return "text"
        self.state = "body"
        return "exception" if _EXCEPTION.match(text) else "text"

    def reset(self) -> None:
        """A GLOG line: any traceback before it is over."""
        self.state, self.chained, self.before = "none", False, ""

    def _frame(self, text: str) -> None:
        m = _FRAME.match(text)
        if m is None or any(mark in m["path"] for mark in _LIBRARY):
            return
        name = m["path"].rsplit("/", 1)[-1]
        self.frame = f"{name}:{m['line']} in {m['func']}"


def is_bare(text: str) -> bool:
    """An exception line whose message is empty (`RuntimeError:`): its body says what."""
    m = _EXCEPTION.match(text)
    return m is not None and not (m["detail"] or "").strip()


def informative(text: str) -> bool:
    """A body line that says something (not a rule of dashes or a section header)."""
    return _DECORATION.search(text) is None
