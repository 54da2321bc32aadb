"""The methods `dataclasses` writes are compiled once and kept (rules.methodcode): a class
made from remembered code must be the class compiled now, method for method, and an edited
class never gets the code of the one it replaced."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from msrunwatch.rules import methodcode, rulecache
from tests.support import ROOT

FINGERPRINTS = r"""
import dataclasses, importlib, json, pkgutil, sys, types
from msrunwatch.rules import methodcode
if {cached!r}:
    methodcode.remember()
if {no_compiler!r}:  # every method must come from the memo
    def refused(*args, **kwargs):
        raise AssertionError("compiled: " + args[0][:80])
    methodcode.compile = refused
import msrunwatch
for info in pkgutil.walk_packages(msrunwatch.__path__, "msrunwatch."):
    if not info.name.startswith(("msrunwatch.tui", "msrunwatch.__main__")):
        importlib.import_module(info.name)

def code(c):
    return [c.co_name, c.co_code.hex(), c.co_names, c.co_varnames, c.co_freevars,
            c.co_cellvars, c.co_argcount, c.co_kwonlyargcount, c.co_flags,
            [code(k) if isinstance(k, types.CodeType) else canon(k) for k in c.co_consts]]

def canon(k):  # a frozenset's repr follows the process's string hashes (3.13's field sets)
    return repr(sorted(k)) if isinstance(k, frozenset) else repr(k)

classes = {{}}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("msrunwatch."):
        continue
    for value in vars(module).values():
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name:
            methods = {{}}
            for attr, f in sorted(vars(value).items()):
                if isinstance(f, types.FunctionType) and f.__code__.co_filename == "<string>":
                    methods[attr] = [code(f.__code__), f.__qualname__, repr(f.__annotations__),
                                     repr(f.__defaults__), repr(f.__kwdefaults__)]
            classes[value.__module__ + "." + value.__qualname__] = methods
print(json.dumps(classes))
"""


def fingerprints(
    cache: Path, cached: bool, no_compiler: bool = False
) -> dict[str, dict[str, object]]:
    """Every msrunwatch dataclass (the TUI's aside) and the code of its generated methods,
    from a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != rulecache.OFF}
    env["XDG_CACHE_HOME"] = str(cache)
    script = FINGERPRINTS.format(cached=cached, no_compiler=no_compiler)
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found: dict[str, dict[str, object]] = json.loads(run.stdout)
    return found


def test_classes_made_from_remembered_code_are_the_classes_compiled(tmp_path: Path) -> None:
    compiled = fingerprints(tmp_path, cached=False)
    first = fingerprints(tmp_path, cached=True)  # compiles, and fills the memo
    assert (tmp_path / "msrunwatch" / "methods.bin").is_file()
    remembered = fingerprints(tmp_path, cached=True, no_compiler=True)
    assert len(compiled) > 40 and sum(len(m) for m in compiled.values()) > 150
    assert first == compiled
    assert remembered == compiled


EDITED = r"""
from dataclasses import dataclass
from msrunwatch.rules import methodcode
methodcode.remember()
@dataclass(frozen=True)
class Point:
    x: int
    {second}: int = 0
print(Point(1), Point.__init__.__annotations__)
"""


def test_an_edited_class_is_compiled_again(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != rulecache.OFF}
    env["XDG_CACHE_HOME"] = str(tmp_path)

    def run(second: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", EDITED.format(second=second)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    assert run("y") == "Point(x=1, y=0) {'x': <class 'int'>, 'y': <class 'int'>, 'return': None}\n"
    assert run("z") == "Point(x=1, z=0) {'x': <class 'int'>, 'z': <class 'int'>, 'return': None}\n"
    assert run("y") == "Point(x=1, y=0) {'x': <class 'int'>, 'y': <class 'int'>, 'return': None}\n"


@pytest.mark.parametrize("flag", ["-V", "check"])
def test_the_command_line_remembers_only_when_it_runs_a_command(flag: str) -> None:
    """`--version` alone imports nothing it would need (tests/integration/test_imports.py);
    a command has `dataclasses` compile through the memo."""
    script = (
        "import contextlib, dataclasses, io\n"
        "from msrunwatch.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    try: main([{flag!r}])\n"
        "    except SystemExit: pass\n"
        "print('exec' in vars(dataclasses))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out == ("False\n" if flag == "-V" else "True\n")


def _made(name: str) -> type:
    """A class that uses every method `dataclasses` writes: frozen, ordered, hashed, with
    defaults, a factory, a field left out of repr and one left out of comparing."""

    @dataclasses.dataclass(frozen=True, order=True)
    class Made:
        x: int
        y: str = "y"
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
        secret: str = dataclasses.field(default="s", repr=False)
        note: str = dataclasses.field(default="", compare=False)

    Made.__qualname__ = Made.__name__ = name
    return Made


def _behaviour(cls: type) -> list[object]:
    a, b, c = cls(1), cls(1, "y", (), "s", "other note"), cls(2, "z", ("t",), secret="q")
    frozen = []
    for act in (lambda: setattr(a, "x", 5), lambda: delattr(a, "y")):
        try:
            act()
        except dataclasses.FrozenInstanceError as exc:
            frozen.append(str(exc))
    return [
        repr(a), repr(c), a == b, a == c, a != c, hash(a) == hash(b), hash(a) == hash(cls(1)),
        a < c, c >= a, sorted([c, a]) == [a, c], a.tags, c.tags, a.secret, frozen,
        [f.name for f in dataclasses.fields(cls)], dataclasses.astuple(c),
        dataclasses.replace(a, x=3) == cls(3), inspect.signature(cls),
    ]  # fmt: skip


def test_a_class_made_from_remembered_code_behaves_as_one_compiled(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eq, repr, hash, order, frozen, defaults and factories, the signature: the same whether
    the methods' code was compiled now or read back from the memo's file."""
    compiled = _behaviour(_made("Made"))
    monkeypatch.setattr(methodcode, "METHODS", rulecache.Memo("methods", limit=4096))
    monkeypatch.setattr(dataclasses, "exec", methodcode._exec, raising=False)
    first = _behaviour(_made("Made"))
    methodcode.METHODS.save()
    assert (cache / "methods.bin").is_file()
    monkeypatch.setattr(methodcode, "METHODS", rulecache.Memo("methods", limit=4096))
    monkeypatch.setattr(
        methodcode, "compile", lambda *a, **k: pytest.fail("compiled"), raising=False
    )
    remembered = _behaviour(_made("Made"))
    # one text per method (init, repr, eq, order, hash, frozen) to 3.12; one per class from 3.13
    assert len(methodcode.METHODS._known()) >= (1 if sys.version_info >= (3, 13) else 6)
    assert remembered == first == compiled
    assert compiled[13] == ["cannot assign to field 'x'", "cannot delete field 'y'"]


def test_remembering_is_inert_on_a_dataclasses_that_calls_no_exec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A `dataclasses` that makes methods some other way is left as it is; `exec` called
    otherwise than `exec(text, globals, ns)` is `exec`'s own call."""
    other = types.ModuleType("dataclasses")
    other.make = lambda cls: setattr(cls, "__init__", lambda self: None)  # type: ignore[attr-defined]
    methodcode.remember(other)
    assert "exec" not in vars(other)
    assert methodcode._names_exec(dataclasses)
    monkeypatch.setattr(methodcode, "code_of", lambda *a: pytest.fail("taken from the memo"))
    ns: dict[str, object] = {}
    methodcode._exec(compile("x = 1", "<string>", "exec"), {}, ns)
    if sys.version_info >= (3, 11):  # exec takes no keyword argument before 3.11
        methodcode._exec("y = 2", {}, ns, closure=None)
    else:
        ns["y"] = 2
    methodcode._exec("z = 3", ns)
    assert {k: v for k, v in ns.items() if k != "__builtins__"} == {"x": 1, "y": 2, "z": 3}
