"""MindFormers' config schema as facts (data/mindformers_schema.yaml): a key a section's class
does not take, a value its validator refuses, a scalar where a mapping belongs, and a likely
misspelling in the sections whose other keys MindFormers passes on, each located at its key."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from msrunwatch.core.yamlload import Path_, Positions
from msrunwatch.read.config.common import Doc
from msrunwatch.read.config.model import Value
from msrunwatch.read.config.tables import table


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _bool(value: object) -> bool:
    return isinstance(value, bool)


CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "positive_int": (_positive_int, "a positive whole number"),
    "bool": (_bool, "True or False"),
}
"""Validator name -> (accepts, what it wants)."""


def _near(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return f" (did you mean {close[0]}?)" if close else ""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class SchemaCheck:
    """Walks the schema's sections of one YAML document."""

    def __init__(self, data: Mapping[str, Any], positions: Positions, doc: Doc) -> None:
        self.data, self.positions, self.doc = data, positions, doc
        self.refused: list[tuple[str, Path_]] = []
        self.newer: list[tuple[str, Path_, int]] = []
        self.older: list[tuple[str, Path_, int]] = []
        """Classes named as an older release registered them: (text, path, last version)."""
        self.unknown: list[tuple[str, Path_]] = []
        self.scalars: set[str] = set()
        """Sections that hold a scalar where a mapping belongs (readers skip them)."""

    def run(self) -> dict[str, Value]:
        schema = table("mindformers_schema")
        for name, spec in schema["strict"].items():
            self._strict(name, spec)
        for name in schema["mappings"]:
            self._mapping((name,))
        self._mapping(("model", "model_config"))
        converted = {
            tuple(dotted.split(".")): spec
            for dotted, spec in schema["converted"].items()
            if all(self.data.get(key) == value for key, value in spec["when"].items())
        }
        for path, spec in converted.items():
            self._converted(path, spec["keys"])
        for dotted, keys in schema["lenient"].items():
            if tuple(dotted.split(".")) not in converted:
                self._lenient(tuple(dotted.split(".")), keys)
        for name, spec in schema["registered"].items():
            self._registered(name, spec["names"], spec.get("renamed") or {})
        return self._values()

    def _registered(
        self, name: str, known: list[str], renamed: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """`type:` names of a list section: a near miss of a registered class is refused; a
        class's name before a release renamed it is refused only after that release."""
        section = self._section((name,))
        if not isinstance(section, list):
            return
        module = name.upper().rstrip("S")
        for i, item in enumerate(section):
            kind = item.get("type") if isinstance(item, Mapping) else None
            if not isinstance(kind, str) or kind in known:
                continue
            text = f"{name}[{i}].type {kind}: Can't find class type {module} class name {kind}"
            if kind in renamed:
                old = renamed[kind]
                self.older.append(
                    (
                        f"{text} in the registry (did you mean {old['to']}?)",
                        (name, i, "type"),
                        int(old["until"]),
                    )
                )
                continue
            near = _near(kind, known)
            if near:
                self.refused.append((f"{text} in the registry{near}", (name, i, "type")))

    def _section(self, path: Path_) -> Any:
        node: Any = self.data
        for key in path:
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node

    def _mapping(self, path: Path_, why: str = "") -> bool:
        """Whether the section is a mapping; a scalar is refused, None (empty) is fine."""
        node = self._section(path)
        if node is None or isinstance(node, Mapping):
            return node is not None
        name = ".".join(str(p) for p in path)
        self.scalars.add(str(path[0]))
        kind = "list" if isinstance(node, list) else f"the {type(node).__name__} {_short(node)}"
        self.refused.append(
            (
                f"{name} is {kind}, not a mapping (a line under it is indented wrong, or a key "
                f"lacks the space after ':'){why}",
                path,
            )
        )
        return False

    def _strict(self, name: str, spec: Mapping[str, Any]) -> None:
        why = f": MindFormers calls {spec['class']}(**{name})"
        if not self._mapping((name,), why):
            return
        section = self._section((name,))
        keys, since = spec["keys"], spec.get("since") or {}
        for key, value in section.items():
            path = (name, key)
            if key not in keys:
                self.refused.append(
                    (
                        f"{name}.{key}: {spec['class']}.__init__() got an unexpected keyword "
                        f"argument '{key}'{_near(str(key), list(keys))}",
                        path,
                    )
                )
            elif key in since:
                self.newer.append((f"{name}.{key}", path, int(since[key])))
            check = CHECKS.get(keys.get(key, "any"))
            if check is not None and value is not None and not check[0](value):
                self.refused.append(
                    (f"{name}.{key} is {_short(value)}, not {check[1]} ({spec['class']})", path)
                )

    def _converted(self, path: Path_, keys: list[str]) -> None:
        """A section every key of which MindFormers maps to another class, refusing the rest."""
        section = self._section(path)
        if not isinstance(section, Mapping):
            return
        where = ".".join(str(p) for p in path)
        for key in section:
            if str(key) not in keys:
                near = _near(str(key), keys)
                self.refused.append(
                    (
                        f"{where}.{key}: Keys: ['{key}'] does not be converted! (MindFormers maps "
                        f"each key of an mcore model's config to TransformerConfig){near}",
                        (*path, key),
                    )
                )

    def _lenient(self, path: Path_, keys: list[str]) -> None:
        section = self._section(path)
        if not isinstance(section, Mapping):
            return
        for key in section:
            if str(key) in keys:
                continue
            near = _near(str(key), keys)
            if near:
                where = ".".join(str(p) for p in path)
                self.unknown.append((f"{where}.{key}{near}", (*path, key)))

    def _value(self, items: list[tuple[str, Path_]]) -> Value:
        line, col = self.positions.of(items[0][1], key=True)
        return Value([text for text, _ in items], self.doc.source(line, col))

    def _values(self) -> dict[str, Value]:
        out: dict[str, Value] = {}
        if self.refused:
            out["refused_keys"] = self._value(self.refused)
        if self.unknown:
            out["unknown_keys"] = self._value(self.unknown)
        for name, items in (("newer_keys", self.newer), ("older_keys", self.older)):
            if items:
                line, col = self.positions.of(items[0][1], key=True)
                out[name] = Value(
                    [[text, version] for text, _, version in items], self.doc.source(line, col)
                )
        return out
