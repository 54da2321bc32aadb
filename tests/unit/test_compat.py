"""The compat names behave as the standard library's do on the newest Python, whichever
Python runs the tests (3.9 to 3.13)."""

from __future__ import annotations

import ast
import dataclasses
import pickle

import pytest

from msrunwatch.core.compat import (
    StrEnum,
    dataclass,
    sre_constants,
    sre_parse,
    syntax_error,
    toml_loads,
    zip_strict,
)


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


@dataclass(frozen=True, slots=True)
class Labelled(Point):
    label: str = ""


@dataclass(slots=True)
class Counter:
    n: int = 0


class Colour(StrEnum):
    RED = "red"
    DARK_BLUE = "dark-blue"


def test_slotted_dataclasses_have_slots_and_no_dict() -> None:
    assert Point.__slots__ == ("x", "y")
    assert "label" in Labelled.__slots__  # 3.10 repeats the base's fields there, 3.11 not
    point = Labelled(1, 2, "a")
    assert not hasattr(point, "__dict__")
    assert (point.x, point.y, point.label) == (1, 2, "a")
    assert Point(3) == Point(3, 0) and hash(Point(3)) == hash(Point(3, 0))
    assert Point.__qualname__ == "Point"
    with pytest.raises(AttributeError):
        Counter().other = 1


def test_frozen_slotted_dataclasses_stay_frozen_and_pickle() -> None:
    point = Labelled(1, 2, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(point)) == point
    assert dataclasses.replace(point, y=7) == Labelled(1, 7, "a")
    counter = Counter()
    counter.n += 1
    assert pickle.loads(pickle.dumps(counter)) == Counter(1)


def test_zip_strict_zips_equal_lengths_and_refuses_others() -> None:
    assert list(zip_strict([1, 2], "ab")) == [(1, "a"), (2, "b")]
    assert list(zip_strict()) == []
    assert list(zip_strict(*[[1, 2], [3, 4], [5, 6]])) == [(1, 3, 5), (2, 4, 6)]
    with pytest.raises(ValueError):
        list(zip_strict([1, 2], "a"))
    with pytest.raises(ValueError):
        list(zip_strict([1], "ab"))


def test_str_enum_members_are_their_values() -> None:
    assert Colour("dark-blue") is Colour.DARK_BLUE
    assert isinstance(Colour.RED, str) and Colour.RED == "red"
    assert str(Colour.RED) == "red" and f"{Colour.DARK_BLUE}" == "dark-blue"
    assert f"{Colour.RED:>5}" == "  red"
    assert repr(Colour.RED) == "<Colour.RED: 'red'>"


def test_toml_loads_reads_toml_and_raises_value_error() -> None:
    assert toml_loads('[tool.x]\na = 1\nb = "c"\n') == {"tool": {"x": {"a": 1, "b": "c"}}}
    with pytest.raises(ValueError):
        toml_loads("[tool\n")


@pytest.mark.parametrize(
    ("source", "message", "col"),
    [
        ("what == 'memory' and", "invalid syntax", 0),  # ends too soon
        ("a +", "invalid syntax", 0),
        ("a ) b", "unmatched ')'", 2),
    ],
)
def test_syntax_errors_read_alike_on_every_version(source: str, message: str, col: int) -> None:
    with pytest.raises(SyntaxError) as caught:
        ast.parse(source, mode="eval")
    assert syntax_error(caught.value) == (message, col)


def test_the_re_parser_is_reachable() -> None:
    tree = sre_parse.parse("ab(c|d)")
    assert [op for op, _ in tree][:2] == [sre_constants.LITERAL, sre_constants.LITERAL]
