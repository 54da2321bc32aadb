"""Arguments whose value Megatron's or MindSpeed-LLM's parser refuses at start-up: a value outside
the argument's fixed choices (data/megatron_choices.yaml), as a typo makes it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from msrunwatch.read.config.tables import table


def refused_choices(env: Mapping[str, Any], unresolved: Mapping[str, str]) -> list[str]:
    """`--arg value` for each read value no known version of the parser accepts, with the
    closest accepted one; nothing for MindFormers, whose YAML has no such arguments."""
    if env.get("framework") == "mindformers":
        return []
    out = []
    for name, entry in table("megatron_choices").items():
        value = env.get(name)
        if name in unresolved or not isinstance(value, str) or value in entry["choices"]:
            continue
        close = difflib.get_close_matches(value, entry["choices"], n=1)
        out.append(f"{entry['arg']} {value}" + (f" (did you mean {close[0]}?)" if close else ""))
    return out
