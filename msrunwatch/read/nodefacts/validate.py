"""A validator compiled from the facts' JSON Schema (msrunwatch/schemas/facts.schema.json).

Facts files come from other machines and are read as hostile input. The schema is the one
statement of what a record may hold; this module turns it into nested checks once, so
what the reader accepts is what the published schema says (a test holds it to the
`jsonschema` package's verdict), at a small fraction of that package's cost per record.

Only the keywords the facts schema uses are understood; any other is refused when the
schema is compiled, so the schema cannot grow a rule this reader would silently skip.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from msrunwatch.schemas import files

Check = Callable[[Any], None]
ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})
KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
        "anyOf", "allOf", "if", "then", "$ref",
    }
)  # fmt: skip


class Invalid(ValueError):
    """A value the schema refuses; str() says where and why (`facts.hits[3].line: ...`)."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}" if where else why)
        self.where, self.why = where, why

    def inside(self, step: str) -> Invalid:
        """The same refusal, one level further out."""
        return Invalid(
            f"{step}{'.' if self.where[:1] not in ('', '[') else ''}{self.where}", self.why
        )


_PYTHON = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


class Compiler:
    """Compiles one schema document; `$ref`s point into its `$defs` (not recursively)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self._refs: dict[str, Check] = {}

    def compile(self, schema: Mapping[str, Any]) -> Check:
        """One check for one schema: its types, bounds, fields and items in one function,
        the combinators ($ref, anyOf, allOf, if/then) after."""
        unknown = set(schema) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise ValueError(f"schema keyword(s) this reader does not implement: {sorted(unknown)}")
        extras = [c for c in self._combinators(schema) if c is not None]
        local = {k: v for k, v in schema.items() if k in KEYWORDS and k not in COMBINATORS}
        if not local and len(extras) == 1:
            return extras[0]
        return self._node(local, extras)

    def _combinators(self, schema: Mapping[str, Any]) -> list[Check | None]:
        return [
            self._ref(schema.get("$ref")),
            self._any_of(schema.get("anyOf")),
            *[self.compile(s) for s in schema.get("allOf", ())],
            self._if_then(schema),
        ]

    def _node(self, schema: Mapping[str, Any], extras: list[Check]) -> Check:
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        types = None if kinds is None else frozenset(t for k in kinds for t in _PYTHON[k])
        integral = kinds is not None and "integer" in kinds and "number" not in kinds
        shown = "" if kinds is None else " or ".join(kinds)
        low, high = schema.get("minimum"), schema.get("maximum")
        short, long = schema.get("minLength", 0), schema.get("maxLength")
        allowed = _allowed(schema)
        fields = self._fields(schema)
        items = self._items(schema)

        def check(value: Any) -> None:
            kind = type(value)
            if (
                types is not None
                and kind not in types
                and not (integral and kind is float and value.is_integer())
            ):
                raise Invalid("", f"{_shown(value)} is not {shown}")
            if kind is int or kind is float:
                if (low is not None and not value >= low) or (
                    high is not None and not value <= high
                ):
                    raise Invalid("", f"{_shown(value)} is out of range [{low}, {high}]")
            elif kind is str:
                if len(value) < short or (long is not None and len(value) > long):
                    raise Invalid("", f"a string of {len(value)} characters (at most {long})")
            elif kind is dict and fields is not None:
                fields(value)
            elif kind is list and items is not None:
                items(value)
            if allowed is not None and (
                kind not in (str, int, float, bool) or (kind, value) not in allowed
            ):
                raise Invalid("", f"{_shown(value)} is not one of the values allowed")
            for extra in extras:
                extra(value)

        return check

    def _ref(self, ref: str | None) -> Check | None:
        if ref is None:
            return None
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"only local $refs are read: {ref}")
        name = ref.rsplit("/", 1)[1]
        if name not in self._refs:
            self._refs[name] = _pending
            self._refs[name] = self.compile(self.document["$defs"][name])
        return self._refs[name]

    def _fields(self, schema: Mapping[str, Any]) -> Check | None:
        props = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        required = list(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        rest = None if extra is True else self.compile(extra)
        if not props and not required and rest is None:
            return None

        def fields(value: dict[str, Any]) -> None:
            for key in required:
                if key not in value:
                    raise Invalid("", f"{key!r} is missing")
            for key, item in value.items():
                check = props.get(key, rest)
                if check is not None:
                    try:
                        check(item)
                    except Invalid as exc:
                        raise exc.inside(str(key)) from None

        return fields

    def _items(self, schema: Mapping[str, Any]) -> Check | None:
        head = [self.compile(s) for s in schema.get("prefixItems", ())]
        each = self.compile(schema["items"]) if "items" in schema else None
        fewest, most = schema.get("minItems", 0), schema.get("maxItems")
        if not head and each is None and not fewest and most is None:
            return None

        def items(value: list[Any]) -> None:
            if len(value) < fewest or (most is not None and len(value) > most):
                raise Invalid("", f"{len(value)} items (between {fewest} and {most})")
            for index, item in enumerate(value):
                check = head[index] if index < len(head) else each
                if check is not None:
                    try:
                        check(item)
                    except Invalid as exc:
                        raise exc.inside(f"[{index}]") from None

        return items

    def _any_of(self, options: list[Mapping[str, Any]] | None) -> Check | None:
        if not options:
            return None
        checks = [self.compile(s) for s in options]

        def any_of(value: Any) -> None:
            for check in checks:
                try:
                    check(value)
                    return
                except Invalid:
                    continue
            raise Invalid("", f"{_shown(value)} matches none of its allowed forms")

        return any_of

    def _if_then(self, schema: Mapping[str, Any]) -> Check | None:
        if "if" not in schema:
            return None
        then = self.compile(schema.get("then", {}))
        fast = _const_property(schema["if"])
        if fast is not None:  # `if: {properties: {kind: {const: node}}}`: one dict lookup
            key, wanted = fast

            def if_kind(value: Any) -> None:
                if type(value) is dict and key in value:
                    got = value[key]
                    if type(got) is type(wanted) and got == wanted:
                        then(value)

            return if_kind
        condition = self.compile(schema["if"])

        def if_then(value: Any) -> None:
            try:
                condition(value)
            except Invalid:
                return
            then(value)

        return if_then


COMBINATORS = frozenset({"$ref", "anyOf", "allOf", "if", "then"})


def _allowed(schema: Mapping[str, Any]) -> frozenset[tuple[type, Any]] | None:
    """enum / const as (type, value) pairs (JSON's true is not 1)."""
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    return None if values is None else frozenset((type(v), v) for v in values)


def _const_property(schema: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(key, value) when a schema only says that one property has one constant value."""
    props = schema.get("properties")
    if set(schema) != {"properties"} or not isinstance(props, dict) or len(props) != 1:
        return None
    ((key, inner),) = props.items()
    if isinstance(inner, dict) and set(inner) == {"const"} and type(inner["const"]) is str:
        return key, inner["const"]
    return None


def _pending(value: Any) -> None:  # pragma: no cover - a $ref to itself while compiling
    raise AssertionError("recursive $ref")


def _shown(value: Any) -> str:
    text = (
        json.dumps(value)[:40]
        if type(value) in (str, int, float, bool) or value is None
        else type(value).__name__
    )
    return "an object" if text == "dict" else "an array" if text == "list" else text


_RECORD: Check | None = None


def record_check() -> Check:
    """The check of one facts record (compiled on first use, then kept)."""
    global _RECORD
    if _RECORD is None:
        document = json.loads(files.read("facts.schema.json"))
        _RECORD = Compiler(document).compile(document)
    return _RECORD
