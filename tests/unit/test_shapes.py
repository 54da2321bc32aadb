"""Each structural shape's pre-check literal is derived from its regex; on every line of
every fixture, the guarded search finds exactly what the bare regex finds."""

from __future__ import annotations

import pytest

from msrunwatch.read import patterns as P
from tests.support import FIXTURES

LINES = sorted(
    {
        line
        for path in FIXTURES.rglob("*")
        if path.is_file() and path.suffix in (".log", ".txt")
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    }
)
SHAPES = dict(P.shapes())


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_guard_agrees_with_the_regex_on_every_fixture_line(name: str) -> None:
    shape = SHAPES[name]
    matched = [line for line in LINES if shape.regex.search(line)]
    assert all(shape.search(line) is not None for line in matched), name
    assert all(shape.regex.search(line) is None for line in LINES if not shape.could_match(line))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_match_contains_a_literal_the_guard_needs(name: str) -> None:
    shape = SHAPES[name]
    for line in LINES:
        m = shape.regex.search(line)
        if m is not None:
            text = m.group(0).lower() if shape.ignore_case else m.group(0)
            assert any(literal in text for literal in shape.needs), (name, line)


def test_the_shapes_match_real_lines() -> None:
    """Shapes that never match a fixture line would test nothing above."""
    unmatched = [n for n, s in SHAPES.items() if not any(s.regex.search(x) for x in LINES)]
    assert not unmatched
