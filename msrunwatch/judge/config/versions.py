"""Which framework versions run a job: given by the user, or implied by the config.

Several start-up checks came or went between versions (MindFormers' MoE check from r1.6.0,
MANUAL_PARALLEL from r1.6.0, Megatron's expert grid from core 0.12). A rule is an error only
where the version that runs the job is known to refuse; otherwise it says the check depends
on the version (a warning). Versions become numbers the rule language can compare:
1.6.0 -> 10600, 0.12.1 -> 1201, and master/main -> 990000 (newer than any release).

    --framework-version mindformers=1.6.0
    --framework-version mindspeed-llm=2.2.0,megatron=0.12.1
    msrunwatch.yaml:  framework-version: {mindformers: 1.6.0}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from msrunwatch.core.errors import UsageError

NEWEST = 990000
"""master / main: newer than every release."""
NAMES = {
    "mindformers": "mindformers",
    "mindspeed-llm": "mindspeed-llm",
    "mindspeed_llm": "mindspeed-llm",
    "mindspeed": "mindspeed",
    "mindspeed-mm": "mindspeed-mm",
    "mindspeed-rl": "mindspeed-rl",
    "megatron": "megatron",
    "megatron-lm": "megatron",
    "megatron-core": "megatron",
}
"""Accepted framework names -> the one each stands for."""
STACKS = ("mindspeed-llm", "mindspeed-mm", "mindspeed-rl", "mindspeed", "megatron")
"""Megatron-family stacks, the most specific first."""
VERSION = re.compile(r"(?:r|v|core_r|core_v)?(\d{1,2})\.(\d{1,2})(?:\.(\d{1,2}))?(?:\.\w+)?")
CORE = re.compile(r"_core_[rv](\d+\.\d+(?:\.\d+)?)")
"""MindSpeed's branch names carry the Megatron core they patch: 2.3.0_core_r0.12.1."""


def number(text: str) -> int | None:
    """1.6.0 -> 10600, r1.6.0 -> 10600, core_v0.12.1 -> 1201, master -> NEWEST."""
    text = text.strip().lower()
    if text in ("master", "main", "dev", "latest"):
        return NEWEST
    m = VERSION.fullmatch(CORE.sub("", text))
    if m is None:
        return None
    major, minor, patch = (int(g) if g else 0 for g in m.groups())
    return major * 10000 + minor * 100 + patch


def core_of(stack: str, version: int) -> int:
    """The Megatron core a MindSpeed-family release runs on (their version tables)."""
    if stack in ("mindspeed-llm", "mindspeed") and version < 20200:
        return 800  # MindSpeed-LLM 2.1.0 runs on core_r0.8.0 (its README's version table)
    return 1201  # 2.2.0 to master: core_v0.12.1 (MindSpeed-LLM's 3rdparty/Megatron-LM)


@dataclass(frozen=True)
class Versions:
    """Framework -> version number, for what the user named."""

    known: Mapping[str, int]

    def of(self, name: str) -> int | None:
        return self.known.get(name)

    @property
    def stack(self) -> str | None:
        """The Megatron-family stack named, the most specific first."""
        return next((s for s in STACKS if s in self.known), None)

    @property
    def megatron(self) -> int | None:
        """Megatron core: given, or implied by the MindSpeed-family version."""
        if "megatron" in self.known:
            return self.known["megatron"]
        stack = self.stack
        return core_of(stack, self.known[stack]) if stack else None


def parse(text: str | None) -> Versions:
    """`mindformers=1.6.0,megatron=0.12.1` (or a mapping's str form); empty -> none known."""
    if not text or not text.strip():
        return Versions({})
    known: dict[str, int] = {}
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name, sep, version = item.partition("=")
        canonical = NAMES.get(name.strip().lower())
        if not sep or canonical is None:
            raise UsageError(
                f"--framework-version {item!r}: expected NAME=VERSION with NAME one of "
                f"{', '.join(sorted(set(NAMES.values())))} (e.g. mindformers=1.6.0)"
            )
        value = number(version)
        if value is None:
            raise UsageError(f"--framework-version {item!r}: {version!r} is not a version")
        known[canonical] = value
        if core := CORE.search(version.lower()):
            known.setdefault("megatron", number(core.group(1)) or 0)
    return Versions(known)
