"""Just enough of a VT100 to read what a Textual app drew: cursor moves, text, erases.

Colours and modes are skipped. Textual redraws by moving the cursor (CSI row;col H) and
writing runs of text, so a grid of characters is all a test needs to read the screen.
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(
    r"\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    r"|\x1bP[^\x1b]*\x1b\\"  # DCS
    r"|\x1b[()][0-9A-Za-z]"  # character sets
    r"|\x1b[^\[\]P()]"  # other two-byte escapes
)


class Screen:
    """A grid of characters that terminal output is drawn onto."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rows = [[" "] * width for _ in range(height)]
        self.x = self.y = 0
        self.exited_alternate = False
        """The app switched back from the alternate screen (it restored the terminal)."""
        self._pending = ""

    def feed(self, data: str) -> None:
        """Draw more output (an escape sequence cut at the end waits for the rest)."""
        data = self._pending + data
        self._pending = ""
        cut = data.rfind("\x1b")
        if cut >= 0 and not _SEQUENCE.match(data, cut) and len(data) - cut < 64:
            data, self._pending = data[:cut], data[cut:]
        pos = 0
        for match in _SEQUENCE.finditer(data):
            self._text(data[pos : match.start()])
            if match.group("final"):
                self._csi(match.group("params"), match.group("final"))
            pos = match.end()
        self._text(data[pos:])

    def lines(self) -> list[str]:
        return ["".join(row).rstrip() for row in self.rows]

    def text(self) -> str:
        return "\n".join(self.lines())

    def _text(self, text: str) -> None:
        for char in text:
            if char == "\r":
                self.x = 0
            elif char == "\n":
                self.y = min(self.y + 1, self.height - 1)
            elif char == "\b":
                self.x = max(self.x - 1, 0)
            elif char >= " ":
                if 0 <= self.y < self.height and 0 <= self.x < self.width:
                    self.rows[self.y][self.x] = char
                self.x += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith("?"):
            if params[1:] == "1049" and final == "l":
                self.exited_alternate = True
            if params[1:] == "1049" and final == "h":
                self._erase(0, self.height)
            return
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        if final in "Hf":
            row, col = [*numbers, 1, 1][:2]
            self.y, self.x = max(row, 1) - 1, max(col, 1) - 1
        elif final == "J" and numbers[:1] in ([2], [3]):
            self._erase(0, self.height)
        elif final == "K" and 0 <= self.y < self.height:
            self.rows[self.y][self.x :] = [" "] * max(self.width - self.x, 0)
        elif final == "G":
            self.x = max((numbers or [1])[0], 1) - 1
        elif final == "C":
            self.x += max((numbers or [1])[0], 1)
        elif final == "A":
            self.y = max(self.y - max((numbers or [1])[0], 1), 0)
        elif final == "B":
            self.y = min(self.y + max((numbers or [1])[0], 1), self.height - 1)

    def _erase(self, top: int, bottom: int) -> None:
        for y in range(top, bottom):
            self.rows[y] = [" "] * self.width
