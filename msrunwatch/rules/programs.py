"""The `re` programs of the large patterns built from a rule set, kept between runs.

The prefilter's scans and the quiet-line pattern are tries of every rule's literals, 7-10
KB of regex whose compiling (`re`'s parser and code generator, in Python) was a fifth of a
cold `check`. What compiling makes is plain data, the program `re` hands to `_sre`: a list
of integers, the flags and the group names. `compiled` keeps it, by the pattern's whole
text, in a memo beside the rule sets (rules.rulecache: written whole or not at all, its
checksum read back, keyed by this code, the Python that ran and `_sre`'s own version), and
builds the pattern from it with `_sre.compile`, which is what `re.compile` ends in. The
result is the same object: it compares equal to `re.compile`'s (same pattern, flags and
program). `_sre.compile` checks a program before it takes it; one it refuses, or any other
surprise, is compiled again the usual way.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from functools import cache
from types import ModuleType
from typing import Any, AnyStr, Union

from msrunwatch.core.compat import sre_compile, sre_parse
from msrunwatch.rules.rulecache import Memo, enabled

_sre: ModuleType = sre_compile._sre
"""The regex engine `re` compiles for (a C module without type stubs)."""

PROGRAMS = Memo("programs", limit=12)
"""Programs by pattern: a rule set has three (the quiet lines, the two prefilter scans)."""

Program = tuple[int, list[int], int, dict[str, int], tuple[Union[str, None], ...]]
"""What `_sre.compile` takes after the pattern: flags, code, groups, and the group names
both ways."""


READ_SIDE = Memo("patterns", limit=256)
"""Programs of the read side's own patterns (read.patterns: its GLOG header, markers, shapes
and their grouped scans, 51 in all, 45 of them compiled by a cold `check` of a 2-rank run;
read.discover's 9 file-name and sniffing patterns).
Fixed by this code, so the memo fills once and stays; kept apart from the rule sets' tries,
whose memo starts again when new rule sets push it past its limit."""


def compiled(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, its program taken from PROGRAMS when known."""
    return remembered(PROGRAMS, pattern, flags)


def read_side(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile` for the read side's fixed patterns (read.patterns, read.discover), its
    program from READ_SIDE: compiling them with re's parser, written in Python, was ~42 M
    instructions (4.5%) of a cold `check`."""
    return remembered(READ_SIDE, pattern, flags)


def remembered(memo: Memo, pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, its program taken from the memo when known."""
    text = pattern.encode("utf-8", "surrogatepass") if isinstance(pattern, str) else pattern
    h = hashlib.sha256(f"{type(pattern).__name__}\0{int(flags)}\0{_VERSION}\0".encode())
    h.update(text)
    program = memo.get("re:" + h.hexdigest(), lambda: _program(pattern, int(flags)))
    try:
        return _sre.compile(pattern, *program)  # type: ignore[no-any-return]
    except (RuntimeError, TypeError, ValueError, OverflowError):  # refused: the usual way
        return re.compile(pattern, flags)


_VERSION = f"{sys.version}\0{_sre.MAGIC}\0{_sre.CODESIZE}\0{_sre.MAXREPEAT}\0{_sre.MAXGROUPS}"
"""A program holds sizes and opcodes of the `_sre` it was made for."""


def _program(pattern: str | bytes, flags: int) -> Program:
    """What `re`'s compiler hands `_sre.compile` (the same steps as
    `re._compiler.compile`, the same from Python 3.9 to 3.13)."""
    parsed: Any = sre_parse.parse(pattern, flags)
    code = [int(op) for op in sre_compile._code(parsed, flags)]  # opcodes are int subclasses
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    flags = int(flags | parsed.state.flags)
    return flags, code, int(parsed.state.groups) - 1, groupindex, tuple(indexgroup)


# -- the `regex` module's patterns ---------------------------------------------------------

VERSION1 = 0x100
"""`regex.VERSION1`: the syntax rule patterns are written in (the tests hold it to regex's)."""
_LOCALE = 0x4
"""`regex.LOCALE`: a pattern that depends on the locale is never remembered."""

REGEX = Memo("regex", limit=4096)
"""What `regex` compiles a pattern to, by the pattern's text and flags: the arguments its
own `_regex.compile` takes (the pattern's `_pickled_data`, what pickling a pattern keeps)."""

_made: dict[tuple[str, int], Any] = {}


def regex_compiled(pattern: str, flags: int = 0) -> Any:
    """`regex.compile(pattern, flags)`: from what REGEX remembers when known, built by
    `regex`'s C engine alone, as unpickling builds a pattern. A cold start whose patterns are
    all remembered never imports the `regex` package (~55 M instructions) nor parses a
    pattern in Python (~3 M each); a pattern never seen, or one the engine refuses, is
    compiled by `regex` itself (and its errors are `regex.error`, as before)."""
    made = _made.get((pattern, flags))
    if made is None:
        made = _made[(pattern, flags)] = _regex_built(pattern, flags)
    return made


def regex_or_none(pattern: str, flags: int = 0) -> Any:
    """`regex_compiled`, or None for a pattern `regex` refuses."""
    try:
        return regex_compiled(pattern, flags)
    except Exception as exc:
        import regex

        if isinstance(exc, regex.error):
            return None
        raise


def _regex_built(pattern: str, flags: int) -> Any:
    if not enabled():
        return _regex_compile(pattern, flags)
    key = f"{regex_version()}\0{flags}\0{pattern}"
    data = REGEX.get(key, lambda: _regex_data(pattern, flags))
    if data is not None:
        try:
            return regex_engine().compile(*data)
        except (RuntimeError, TypeError, ValueError, OverflowError):
            pass
    return _regex_compile(pattern, flags)


def _regex_compile(pattern: str, flags: int) -> Any:
    import regex

    if not hasattr(regex, "_regex"):  # the engine was loaded before the package
        regex._regex = regex_engine()
    return regex.compile(pattern, flags)


def _regex_data(pattern: str, flags: int) -> tuple[Any, ...] | None:
    """The arguments `_regex.compile` took for the pattern (None: not to be remembered)."""
    data = tuple(_regex_compile(pattern, flags)._pickled_data)
    return None if data[1] & _LOCALE else data


def regex_engine() -> ModuleType:
    """`regex._regex`, the C engine: as imported, else loaded on its own from the `regex`
    package's directory without running the package (whose Python half, the parser, is
    only needed to compile a pattern not remembered). The package imported later finds
    it in `sys.modules`, as its own `from regex import _regex` would have loaded it."""
    loaded = sys.modules.get("regex._regex")
    if loaded is not None:
        return loaded
    import importlib.machinery
    import importlib.util

    package = importlib.machinery.PathFinder.find_spec("regex")
    where = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec("regex._regex", where) if where else None
    if spec is None or spec.loader is None or "regex" in sys.modules:
        import regex._regex

        return regex._regex
    engine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(engine)
    return sys.modules.setdefault("regex._regex", engine)


@cache
def regex_version() -> str:
    """What a remembered pattern was made by: the engine's magic number and the size and
    time of each file of the `regex` package (an upgrade rewrites them)."""
    engine = regex_engine()
    directory = os.path.dirname(engine.__file__ or "")
    said = [str(getattr(engine, "MAGIC", "")), str(getattr(engine, "CODE_SIZE", ""))]
    for name in sorted(os.listdir(directory)) if directory else ():
        if name.endswith((".py", ".so", ".pyd")):
            st = os.stat(os.path.join(directory, name))
            said.append(f"{name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    return "\0".join(said)
