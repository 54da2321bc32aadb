"""`-` as a target: a log piped in (`kubectl logs ... | msrunwatch triage -`).

The readers work on files (offsets, `pread`), so standard input is spooled to a private
temporary file first, and the report names it `<stdin>` instead of that file's path.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

from msrunwatch.core.errors import MsrunwatchError

if TYPE_CHECKING:
    from msrunwatch.judge.model import Report

STDIN = "-"
LABEL = "<stdin>"
"""How reports name standard input (as compilers do)."""


@contextmanager
def spooled(targets: Sequence[str], source: BinaryIO | None = None) -> Iterator[list[str]]:
    """The targets with `-` replaced by a temporary file holding standard input."""
    if STDIN not in targets:
        yield list(targets)
        return
    import shutil  # only with `-`: most runs read files, and start faster without these
    import tempfile

    with tempfile.TemporaryDirectory(prefix="msrunwatch-") as tmp:
        path = os.path.join(tmp, "stdin.log")
        with open(path, "wb") as fh:
            shutil.copyfileobj(source or sys.stdin.buffer, fh)
        try:
            yield [path if t == STDIN else t for t in targets]
        except MsrunwatchError as exc:  # `<stdin>: not an msrun log`, never the spool's path
            exc.args = (_in_text(str(exc), {path}),)
            raise


def relabel(report: Report, spooled_targets: Sequence[str]) -> Report:
    """The report with the spooled file's path and name shown as `<stdin>`."""
    paths = {t for t in spooled_targets if os.path.basename(t) == "stdin.log"}
    if not paths:
        return report
    return _walk(report, paths)  # type: ignore[no-any-return]


def _walk(value: Any, paths: set[str]) -> Any:
    if type(value) is str:  # not the str enums (Status, Severity)
        return LABEL if value in paths or value == "stdin.log" else _in_text(value, paths)
    if isinstance(value, tuple):
        return tuple(_walk(v, paths) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _walk(getattr(value, f.name), paths) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **fields)
    return value


def _in_text(text: str, paths: set[str]) -> str:
    for path in paths:
        text = text.replace(path, LABEL)
    return text
