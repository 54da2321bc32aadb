"""A small, safe expression language for rule conditions (`when`) and rank lists (`ranks`).

The syntax is a subset of Python's expressions, parsed with `ast` and compiled into
closures, never `eval`ed: names, numbers, strings, lists, arithmetic (+ - * / // %),
comparisons (chained, `in`), `and`/`or`/`not`, `a if c else b` and a few pure functions.
There is no attribute access, subscription, lambda, comprehension or `**`, so a condition
cannot reach Python internals and runs in time bounded by its size and its list inputs.
An unknown value (None) makes a comparison false (`!=` too) and arithmetic None; only a
comparison with the literal `None` (`x == None`, `x != None`) asks whether it is known.
Text plus a number or a list is text, the value written as a placeholder writes it
(`"group " + 0` is `group 0`, `"rank(s) " + [2, 3]` is `rank(s) 2-3`): captures that read
as numbers are numbers, so a message joining one to text must not come out empty.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from msrunwatch.core.compat import syntax_error, zip_strict
from msrunwatch.core.errors import ExprError
from msrunwatch.core.numbers import median
from msrunwatch.rules.shown import shown

MAX_LENGTH = 2000
MAX_NODES = 300

Env = Mapping[str, Any]
Node = Callable[[Env], Any]


def _numbers(values: Iterable[Any]) -> list[float]:
    return [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _median(values: Iterable[Any]) -> float | None:
    nums = _numbers(values)
    return median(nums) if nums else None


def _extreme(pick: Callable[[list[float]], float]) -> Callable[..., float | None]:
    def fn(*args: Any) -> float | None:
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        nums = _numbers(items)
        return pick(nums) if nums else None

    return fn


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": len,
    "min": _extreme(min),
    "max": _extreme(max),
    "sum": lambda values: sum(_numbers(values)),
    "median": _median,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "any": any,
    "all": all,
}
"""The only functions a condition may call."""

_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_ORDER: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _joined(a: Any, b: Any) -> str | None:
    """`"group " + 0`: text joined to a number or a list is text, the value written as a
    message's placeholder writes it (`group 0`, `rank(s) 2-3`). A capture that reads as a
    number is a number (`group name:0`), so a rule author cannot know which of their captures
    will be one; None and true/false stay unknown."""
    if isinstance(a, str) and isinstance(b, str):
        return a + b
    if isinstance(a, str) and _joinable(b):
        return a + shown(b)
    if _joinable(a) and isinstance(b, str):
        return shown(a) + b
    return None


def _joinable(value: Any) -> bool:
    return isinstance(value, (int, float, list, tuple)) and not isinstance(value, bool)


def _arith(op: type, left: Node, right: Node) -> Node:
    fn = _ARITH[op]

    def run(env: Env) -> Any:
        a, b = left(env), right(env)
        if op is ast.Add and (isinstance(a, str) or isinstance(b, str)):
            return _joined(a, b)
        if not (_is_number(a) and _is_number(b)):
            return None
        try:
            return fn(a, b)
        except ZeroDivisionError:
            return None

    return run


def _compare(op: ast.cmpop, a: Any, b: Any, literal_none: bool = False) -> bool:
    kind = type(op)
    if kind in (ast.Eq, ast.NotEq):
        if (a is None or b is None) and not literal_none:
            return False  # unknown: neither equal nor different, so the rule does not fire
        return bool(a == b) if kind is ast.Eq else bool(a != b)
    if kind in (ast.In, ast.NotIn):
        if not isinstance(b, (list, tuple, str, set, frozenset)) or a is None:
            return False
        found = (a in b) if not isinstance(b, str) or isinstance(a, str) else False
        return found if kind is ast.In else not found
    if a is None or b is None:
        return False
    if (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
        return _ORDER[kind](a, b)
    return False


class _Compiler:
    """Turns a validated AST into closures."""

    def __init__(self, names: set[str] | None) -> None:
        self.names = names
        self.used: set[str] = set()
        self.called: set[str] = set()
        self.count = 0

    def build(self, node: ast.AST) -> Node:
        self.count += 1
        if self.count > MAX_NODES:
            raise ExprError("expression is too long", getattr(node, "col_offset", 0))
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise ExprError(_refusal(node), getattr(node, "col_offset", 0))
        result: Node = method(node)
        return result

    def _Expression(self, node: ast.Expression) -> Node:
        return self.build(node.body)

    def _Constant(self, node: ast.Constant) -> Node:
        value = node.value
        if not isinstance(value, (int, float, str, bool, type(None))):
            raise ExprError(
                "only numbers, strings, true/false and None are literals", node.col_offset
            )
        return lambda env: value

    def _Name(self, node: ast.Name) -> Node:
        name = node.id
        if name in ("true", "True"):
            return lambda env: True
        if name in ("false", "False"):
            return lambda env: False
        if name in ("null", "None"):
            return lambda env: None
        if self.names is not None and name not in self.names:
            raise ExprError(f"unknown name {name!r}", node.col_offset)
        self.used.add(name)
        return lambda env: env.get(name)

    def _List(self, node: ast.List | ast.Tuple) -> Node:
        items = [self.build(e) for e in node.elts]
        return lambda env: [item(env) for item in items]

    _Tuple = _List

    def _BoolOp(self, node: ast.BoolOp) -> Node:
        parts = [self.build(v) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda env: all(bool(p(env)) for p in parts)
        return lambda env: any(bool(p(env)) for p in parts)

    def _UnaryOp(self, node: ast.UnaryOp) -> Node:
        inner = self.build(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda env: not inner(env)
        if isinstance(node.op, ast.USub):
            return lambda env: -v if _is_number(v := inner(env)) else None
        if isinstance(node.op, ast.UAdd):
            return inner
        raise ExprError("this operator is not allowed", node.col_offset)

    def _BinOp(self, node: ast.BinOp) -> Node:
        if type(node.op) not in _ARITH:
            raise ExprError("only + - * / // % are allowed", node.col_offset)
        return _arith(type(node.op), self.build(node.left), self.build(node.right))

    def _Compare(self, node: ast.Compare) -> Node:
        left = self.build(node.left)
        rights = [self.build(c) for c in node.comparators]
        ops = list(node.ops)
        operands = [node.left, *node.comparators]
        nones = [_is_none(x) for x in operands]
        for op in ops:
            if isinstance(op, (ast.Is, ast.IsNot)):
                raise ExprError("use == and != instead of is", node.col_offset)

        def run(env: Env) -> bool:
            a = left(env)
            for i, (op, right) in enumerate(zip_strict(ops, rights)):
                b = right(env)
                if not _compare(op, a, b, nones[i] or nones[i + 1]):
                    return False
                a = b
            return True

        return run

    def _IfExp(self, node: ast.IfExp) -> Node:
        test, body, orelse = self.build(node.test), self.build(node.body), self.build(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def _Call(self, node: ast.Call) -> Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise ExprError(f"only these functions can be called: {allowed}", node.col_offset)
        if node.keywords:
            raise ExprError("keyword arguments are not allowed", node.col_offset)
        fn = FUNCTIONS[node.func.id]
        self.called.add(node.func.id)
        args = [self.build(a) for a in node.args]

        def run(env: Env) -> Any:
            try:
                return fn(*(a(env) for a in args))
            except (TypeError, ValueError, OverflowError):
                return None

        return run


def _is_none(node: ast.AST) -> bool:
    """The literal None (or null): `x == None` asks whether x is unknown."""
    if isinstance(node, ast.Constant):
        return node.value is None
    return isinstance(node, ast.Name) and node.id in ("None", "null")


def _refusal(node: ast.AST) -> str:
    kind = type(node).__name__
    reasons = {
        "Attribute": "attribute access is not allowed",
        "Subscript": "indexing is not allowed",
        "Lambda": "lambda is not allowed",
        "ListComp": "comprehensions are not allowed",
        "GeneratorExp": "comprehensions are not allowed",
        "NamedExpr": "assignment is not allowed",
    }
    return reasons.get(kind, f"{kind} is not allowed in a condition")


class Expr:
    """A compiled condition: call it with the variables."""

    def __init__(self, source: str, names: set[str] | None = None, lazy: bool = False) -> None:
        """`lazy`: parsed on first use (a rule from the built-in pack or the cache, validated
        before): a cold start parses only the conditions a run evaluates."""
        if len(source) > MAX_LENGTH:
            raise ExprError("expression is too long")
        self.source = source
        self._allowed = names
        self._used: frozenset[str] | None = None
        self._called: frozenset[str] = frozenset()
        self._run: Node = self._first_run
        if not lazy:
            self._compile()

    def _compile(self) -> None:
        try:
            tree = ast.parse(self.source.strip(), mode="eval")
        except SyntaxError as exc:
            message, col = syntax_error(exc)
            raise ExprError(f"invalid syntax: {message}", col) from None
        compiler = _Compiler(self._allowed)
        self._run = compiler.build(tree)
        self._used = frozenset(compiler.used)
        self._called = frozenset(compiler.called)

    def _first_run(self, env: Env) -> Any:
        self._compile()
        return self._run(env)

    @property
    def names(self) -> frozenset[str]:
        """The variables the condition reads."""
        if self._used is None:
            self._compile()
        assert self._used is not None
        return self._used

    @property
    def calls(self) -> frozenset[str]:
        """The functions the condition calls."""
        if self._used is None:
            self._compile()
        return self._called

    def __call__(self, env: Env) -> Any:
        return self._run(env)

    def truth(self, env: Env) -> bool:
        """The condition's value as a boolean."""
        return bool(self._run(env))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its source and names (a rule set kept whole by rules.rulecache); it
        comes back parsed on first use, as a condition of the built-in pack is."""
        return (_parsed_later, (self.source, self._allowed))


def _parsed_later(source: str, names: set[str] | None) -> Expr:
    return Expr(source, names, lazy=True)


class RememberedCondition:
    """One condition's truth, remembered by the values of the names it reads: a rank-scope
    rule over 100,000 ranks in a handful of states is evaluated once per state, not once
    per rank (issue 21, defect 14). Values are keyed with their types, since True, 1 and
    1.0 read differently through arithmetic and `is a number`; a float is keyed by its
    bits when the condition calls str() (-0.0 prints apart from 0.0), and so is every
    list or tuple, item by item. A value that cannot be a key (a mapping) is evaluated
    every time, and past MAX_KEPT states nothing more is kept: a condition on each rank's
    own figures costs what it did, in bounded memory."""

    MAX_KEPT = 4096

    def __init__(self, expr: Expr) -> None:
        self._expr = expr
        self._names = tuple(sorted(expr.names))
        self._plain = _PLAIN - {float} if "str" in expr.calls else _PLAIN
        self._known: dict[tuple[Any, ...], bool] = {}

    def truth(self, env: Env) -> bool:
        """What `expr.truth(env)` is."""
        found = tuple(map(env.get, self._names))
        types = tuple(map(type, found))
        try:
            key = (found, types) if self._plain.issuperset(types) else _exact(found)
            known = self._known.get(key)
        except TypeError:
            return self._expr.truth(env)
        if known is None:
            known = self._expr.truth(env)
            if len(self._known) < self.MAX_KEPT:
                self._known[key] = known
        return known


_PLAIN = frozenset({type(None), bool, int, str, float})
"""Types whose value and type together say how every function reads them."""


def _exact(found: tuple[Any, ...]) -> tuple[Any, ...]:
    return ("exact", tuple(_key(value) for value in found))


def _key(value: Any) -> Any:
    """A value with its type, lists and tuples item by item, a float by its exact bits;
    TypeError when unhashable."""
    if isinstance(value, (list, tuple)):
        return type(value), tuple(_key(item) for item in value)
    if type(value) is float:
        return float, value.hex()
    hash(value)
    return type(value), value
