"""A vocabulary from the tokenizer: the model family's known size, and Megatron's padding.

A launch that takes its vocabulary from a tokenizer (`--tokenizer-name-or-path`, MindFormers
`processor.tokenizer`) writes no vocab_size. The family is recognised from the tokenizer's path
or type, the model type, or the file's name (`data/vocabularies.yaml`, each size as public
configs of the family state it); with no family known, a stated range is used instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from msrunwatch.read.config.tables import table


class Family(NamedTuple):
    """A model family's vocabulary, and where the figure is stated."""

    name: str
    vocab: int
    source: str


def family_of(texts: Iterable[str]) -> Family | None:
    """The first family whose pattern matches one of the texts (lower-cased), in order."""
    words = [t.lower() for t in texts if t]
    for name, pattern, vocab, source in table("vocabularies")["families"]:
        if any(re.search(pattern, w) for w in words):
            return Family(str(name), int(vocab), str(source))
    return None


def vocab_range() -> tuple[int, int]:
    """(smallest, largest) vocabulary of the known families: the range used when none is."""
    low, high = table("vocabularies")["range"]
    return int(low), int(high)


def megatron_padded(vocab: int, divisible_by: int, tp: int) -> int:
    """Megatron pads the tokenizer's vocabulary to a multiple of make_vocab_size_divisible_by x
    TP (`_vocab_size_with_padding`, megatron/training/tokenizer/tokenizer.py)."""
    multiple = max(1, divisible_by) * max(1, tp)
    return -(-vocab // multiple) * multiple
