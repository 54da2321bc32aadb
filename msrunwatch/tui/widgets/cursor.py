"""The cursor line, readable: every text on it in the cursor's own colours."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip


def on_cursor(strip: Strip, cursor: Style) -> Strip:
    """A line under the cursor: every cell in the cursor's colours (a status or error colour
    on the cursor's background read at 1.4:1 to 2.8:1), its bold, italic and reverse kept."""
    plain = Style(color=cursor.color, bgcolor=cursor.bgcolor)
    return Strip(Segment.apply_style(strip, post_style=plain), strip.cell_length)
