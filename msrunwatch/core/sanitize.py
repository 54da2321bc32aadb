"""Log text made safe for where it is shown: a terminal, or Markdown.

A log line is written by whatever ran (or whoever can write to the log directory): it can
hold escape sequences that retitle, recolour or rewrite a terminal (OSC, CSI), a bell, a
carriage return that overprints what came before, bidirectional overrides that reorder
what is read, and, for Markdown, HTML and line breaks that forge headings, links or
images in a job summary. Every renderer passes such text through one of these functions;
the TUI calls `terminal` too.

A file or directory name is bytes, not always UTF-8 (a GBK name from a Chinese-locale
cluster): Python holds each byte that does not decode as a lone surrogate (U+DC80 to
U+DCFF), which no UTF-8 output can carry. Such a byte is shown as `\\xNN`, the escape of a
control character, on a terminal, in text and XML, and as the same text inside a JSON
string (`json_document`), so every output stays valid UTF-8 and the name stays legible.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)
"""C0 controls but tab, DEL, C1 controls (CSI and OSC have one-character forms there), line
and paragraph separators, the invisible bidirectional marks and overrides, and surrogates
(a name's bytes that are not UTF-8)."""
_SURROGATES = re.compile("[\ud800-\udfff]")
_MARKDOWN = re.compile(r"[\\`*\[\]|]")
"""Characters Markdown reads as syntax in the middle of a line (code, emphasis, links and
images, table cells): each gets a backslash. `_` is left alone (paths and ids are full of
it, and inside a word it is not emphasis); what is syntax only at the start of a line
(`#`, `-`, `>`) needs nothing: line breaks never pass, and every line the renderers write
starts with their own text."""
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_HTML_CHARS = re.compile('[&<>"]')


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def name(text: str) -> str:
    """Text with the bytes of a name that are not UTF-8 shown as `\\xNN` (nothing else
    changes): for outputs that escape control characters their own way (XML)."""
    if _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub(_visible, text)


def json_document(text: str) -> str:
    """A JSON document (written with `ensure_ascii=False`) as valid UTF-8: a name's byte
    that is not UTF-8, held as a lone surrogate inside a string, becomes the text `\\xNN`
    there (a backslash escaped as JSON wants it)."""
    if _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub(lambda m: "\\" + _visible(m), text)


def terminal(text: str, newlines: bool = False) -> str:
    """Text with every control character shown as a visible escape (`\\x1b`, `\\x0d`,
    `\\x07`, `\\u202e`): nothing in it can move the cursor, change the terminal or hide
    what follows. Tabs stay, and so do line feeds when `newlines` (a multi-line hint);
    so does everything printable, in any script."""
    if _CONTROLS.search(text) is None:
        return text
    if newlines:
        return "\n".join(_CONTROLS.sub(_visible, line) for line in text.split("\n"))
    return _CONTROLS.sub(_visible, text)


def markdown(text: str) -> str:
    """Text for Markdown prose (a list item, a table cell): controls visible, HTML inert,
    and every character Markdown could read as syntax escaped, so a log line cannot open a
    heading, a link, an image, a table cell or a tag."""
    text = _HTML_CHARS.sub(lambda m: _HTML[m.group()], terminal(text))
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), text)


def markdown_code(text: str) -> str:
    """Text as one inline code span: shown literally (Markdown and HTML are not read inside
    one), fenced with more backticks than the text holds in a row."""
    text = terminal(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_JSON_BREAKS = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_line(text: str) -> str:
    """One JSON document as one line of a JSON Lines stream. `json.dumps` escapes `\\n` but
    keeps NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR raw (with `ensure_ascii=False`), and a
    reader that splits on Unicode line breaks (Python's `str.splitlines`, JavaScript) would
    cut the event in two: they are written as JSON escapes, which every parser reads back."""
    return text.translate(_JSON_BREAKS)
