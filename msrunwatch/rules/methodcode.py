"""The code of the methods `dataclasses` writes, kept between runs.

A dataclass's `__init__`, `__repr__`, `__eq__`, `__hash__` and, frozen, `__setattr__` and
`__delattr__` are written as Python source when the class is made, and compiled there: the
46 dataclasses a cold `check` imports compile about 250 functions, a fifth of its run (the
compiler is the costliest step of making a class before Python 3.13). What compiling makes,
a code object, is what marshal keeps (as a .pyc does). `remember()` has `dataclasses` compile
through METHODS: a memo beside the rule sets (rules.rulecache: written whole or not at all,
its checksum read back, this user's, keyed by this code and the Python that ran) that finds
a code object by the source's whole text. Source never seen is compiled as `dataclasses`
compiles it, so a class is the same whether its code was remembered or compiled.

Only the command line calls `remember()`, once, before it imports what it runs; the library
used on its own compiles as Python does.
"""

from __future__ import annotations

import dataclasses
import sys
from types import CodeType, FunctionType, ModuleType
from typing import Any

from msrunwatch.rules.rulecache import Memo

METHODS = Memo("methods", limit=4096)
"""Code objects by the source `dataclasses` wrote (every class msrunwatch makes: ~700)."""


def code_of(source: str) -> CodeType:
    """The code `exec(source)` runs: remembered, or compiled now. Compiled as `exec` of a
    string in `dataclasses` compiles it: no `from __future__` flag of this module, the
    interpreter's own optimisation level (part of the key)."""
    key = f"{sys.flags.optimize}\0{source}"
    return METHODS.get(key, lambda: compile(source, "<string>", "exec", dont_inherit=True))


def _exec(source: Any, *args: Any, **kwargs: Any) -> None:
    """`exec` as `dataclasses` sees it: a source text run with its globals and namespace
    (`exec(text, globals, ns)`) takes its code from METHODS; any other call is `exec`'s own."""
    if isinstance(source, str) and len(args) == 2 and not kwargs:
        exec(code_of(source), *args)
    else:
        exec(source, *args, **kwargs)


def remember(module: ModuleType = dataclasses) -> None:
    """From now on, the classes `dataclasses` makes in this process take their methods' code
    from METHODS: `exec` in its namespace (which it calls as `exec(text, globals, ns)` from
    3.9 to 3.13) is `_exec`. Inert on a `dataclasses` that names no `exec` (one that does
    not compile methods from text): nothing is patched."""
    if _names_exec(module):
        module.exec = _exec  # type: ignore[attr-defined]


def _names_exec(module: ModuleType) -> bool:
    """Whether a function or method of the module calls a global `exec` (in its own body,
    where 3.9 to 3.13 call it)."""
    functions = [v for v in vars(module).values() if isinstance(v, FunctionType)]
    for cls in vars(module).values():
        if isinstance(cls, type) and cls.__module__ == module.__name__:
            functions.extend(v for v in vars(cls).values() if isinstance(v, FunctionType))
    return any("exec" in f.__code__.co_names for f in functions)
