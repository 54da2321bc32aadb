"""Training flags no version of Megatron-LM, MindSpeed or MindSpeed-LLM defines.

Megatron's parse_args (allow_abbrev=False, ignore_unknown_args=False, as the training entry
points call it) stops every rank with "unrecognized arguments" on a flag its parser does not
define, abbreviations included. The known names are facts (data/megatron_flags.yaml: every
flag string the three projects' Python ever added, over their whole history), so a flag any
commit defined is never called unknown here; only entry scripts that parse with Megatron's
parser alone are checked (MindSpeed-MM, FSDP2 and DeepSpeed trainers add flags of their own).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence

from msrunwatch.read.config.common import Doc, TracedValue
from msrunwatch.read.config.model import Value
from msrunwatch.read.config.shellexpand import Field
from msrunwatch.read.config.tables import table

CLOSE = 0.85
"""How alike a known flag must be (difflib's ratio) to be named as the one meant: at this
cutoff a dropped, doubled or swapped letter or a missing plural `s` matches, another word not."""


@functools.cache
def known_flags() -> frozenset[str]:
    """Every flag name the three projects' parsers ever defined."""
    return frozenset(table("megatron_flags")["flags"].split())


def checked_entry(entry: str | None, deepspeed: bool) -> bool:
    """Does this entry script parse its arguments with Megatron's parser alone?"""
    return entry is not None and not deepspeed and entry in table("megatron_flags")["entries"]


def unrecognized(fields: Sequence[Field], doc: Doc) -> dict[str, Value]:
    """`unrecognized_args` (a known flag is close: a typo) and `unknown_args` (none is), each
    located at its first flag; nothing when every flag is known."""
    known = known_flags()
    close: list[tuple[Field, str]] = []
    far: list[Field] = []
    for f in fields:
        name = f.text.partition("=")[0]
        if f.unresolved is not None or name in known or name == "--":
            continue
        match = difflib.get_close_matches(name, known, n=1, cutoff=CLOSE)
        if match:
            close.append((f, f"{name} (did you mean {match[0]}?)"))
        else:
            far.append(f)
    out: dict[str, Value] = {}
    if close:
        out["unrecognized_args"] = TracedValue(
            [text for _, text in close], doc.source(*close[0][0].at())
        )
    if far:
        names = [f.text.partition("=")[0] for f in far]
        out["unknown_args"] = TracedValue(names, doc.source(*far[0].at()))
    return out
