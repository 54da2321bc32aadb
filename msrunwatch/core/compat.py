"""What Python 3.9 and 3.10 lack, in one place: msrunwatch runs on 3.9 to 3.13.

Each name is the standard library's own where the running Python has it, and a small
equivalent before that:

- `dataclass`: `slots=True` (3.10) builds the class with `__slots__` as 3.11 does, frozen
  slotted instances pickling through `__getstate__`/`__setstate__`;
- `zip_strict`: `zip(..., strict=True)` (3.10), a ValueError when lengths differ;
- `StrEnum` (3.11): members are strings, `str()` and `format()` give the value;
- `syntax_error`: a SyntaxError's message and column as 3.10's parser and later give them;
- `toml_loads`: `tomllib.loads` (3.11), the `tomli` package before (imported on first use);
- `sre_parse`, `sre_constants`, `sre_compile`: the `re` module's parser and compiler
  (`re._parser`, `re._constants`, `re._compiler` since 3.11, where the old names warn), as
  modules whose attributes are untyped.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import zip_longest
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, overload

__all__ = [
    "StrEnum",
    "dataclass",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "syntax_error",
    "toml_loads",
    "zip_strict",
]

_T = TypeVar("_T")
_T1 = TypeVar("_T1")
_T2 = TypeVar("_T2")
_T3 = TypeVar("_T3")
_T4 = TypeVar("_T4")

if sys.version_info >= (3, 10):
    from dataclasses import dataclass
else:
    if TYPE_CHECKING:
        from typing_extensions import dataclass_transform
    else:

        def dataclass_transform(**_: Any) -> Callable[[_T], _T]:
            return lambda function: function

    def _getstate(self: Any) -> list[Any]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]

    def _setstate(self: Any, state: list[Any]) -> None:
        for f, value in zip(dataclasses.fields(self), state):
            object.__setattr__(self, f.name, value)  # frozen: as 3.11's own does

    def _slots(cls: type) -> tuple[str, ...]:
        slots = cls.__dict__.get("__slots__", ())
        return (slots,) if isinstance(slots, str) else tuple(slots)

    def _add_slots(cls: type[_T], frozen: bool) -> type[_T]:
        """The class again, with its fields as `__slots__` (3.11's `dataclasses._add_slots`)."""
        inherited = {name for base in cls.__mro__[1:-1] for name in _slots(base)}
        names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        namespace = dict(cls.__dict__)
        namespace["__slots__"] = tuple(n for n in names if n not in inherited)
        for name in names:
            namespace.pop(name, None)  # a default lives in __init__, not in the class
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        metaclass: type = type(cls)
        slotted: type[_T] = metaclass(cls.__name__, cls.__bases__, namespace)
        slotted.__qualname__ = cls.__qualname__
        if frozen:
            slotted.__getstate__ = _getstate  # type: ignore[attr-defined]
            slotted.__setstate__ = _setstate  # type: ignore[attr-defined]
        return slotted

    @overload
    def dataclass(cls: type[_T], /) -> type[_T]: ...

    @overload
    def dataclass(
        *,
        init: bool = True,
        repr: bool = True,
        eq: bool = True,
        order: bool = False,
        unsafe_hash: bool = False,
        frozen: bool = False,
        slots: bool = False,
    ) -> Callable[[type[_T]], type[_T]]: ...

    @dataclass_transform()
    def dataclass(
        cls: type[_T] | None = None, /, *, slots: bool = False, **options: bool
    ) -> type[_T] | Callable[[type[_T]], type[_T]]:
        """dataclasses.dataclass, with 3.10's `slots`."""

        def wrap(cls: type[_T]) -> type[_T]:
            made: type[_T] = dataclasses.dataclass(**options)(cls)
            return _add_slots(made, options.get("frozen", False)) if slots else made

        return wrap if cls is None else wrap(cls)


@overload
def zip_strict(a: Iterable[_T1], /) -> Iterator[tuple[_T1]]: ...
@overload
def zip_strict(a: Iterable[_T1], b: Iterable[_T2], /) -> Iterator[tuple[_T1, _T2]]: ...
@overload
def zip_strict(
    a: Iterable[_T1], b: Iterable[_T2], c: Iterable[_T3], /
) -> Iterator[tuple[_T1, _T2, _T3]]: ...
@overload
def zip_strict(
    a: Iterable[_T1], b: Iterable[_T2], c: Iterable[_T3], d: Iterable[_T4], /
) -> Iterator[tuple[_T1, _T2, _T3, _T4]]: ...
@overload
def zip_strict(*iterables: Iterable[_T]) -> Iterator[tuple[_T, ...]]: ...
def zip_strict(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """zip(*iterables, strict=True): a ValueError when one runs out before the others."""
    return _zip_strict(iterables)


if sys.version_info >= (3, 10):

    def _zip_strict(iterables: tuple[Iterable[Any], ...]) -> Iterator[tuple[Any, ...]]:
        return zip(*iterables, strict=True)
else:
    _MISSING = object()

    def _zip_strict(iterables: tuple[Iterable[Any], ...]) -> Iterator[tuple[Any, ...]]:
        for items in zip_longest(*iterables, fillvalue=_MISSING):
            if any(item is _MISSING for item in items):
                raise ValueError("zip_strict: the iterables have different lengths")
            yield items


if sys.version_info >= (3, 11):
    from enum import StrEnum
else:

    class StrEnum(str, enum.Enum):
        """enum.StrEnum: members are strings; str() and format() give the value."""

        __str__ = str.__str__
        __format__ = str.__format__  # type: ignore[assignment]


def syntax_error(exc: SyntaxError) -> tuple[str, int]:
    """What a SyntaxError from `ast.parse` says, and its 0-based column, alike on every
    version: of an expression that ends too soon, 3.10's parser and later say "invalid
    syntax" without a column (0), 3.9's "unexpected EOF while parsing" at its end."""
    if sys.version_info < (3, 10) and exc.msg == "unexpected EOF while parsing":
        return "invalid syntax", 0
    return exc.msg, max((exc.offset or 1) - 1, 0)


def toml_loads(text: str) -> dict[str, Any]:
    """tomllib.loads (tomli before 3.11), imported on first use; invalid TOML raises its
    TOMLDecodeError, a ValueError."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads(text)


sre_parse: ModuleType = importlib.import_module(
    "re._parser" if sys.version_info >= (3, 11) else "sre_parse"
)
sre_constants: ModuleType = importlib.import_module(
    "re._constants" if sys.version_info >= (3, 11) else "sre_constants"
)
sre_compile: ModuleType = importlib.import_module(
    "re._compiler" if sys.version_info >= (3, 11) else "sre_compile"
)
