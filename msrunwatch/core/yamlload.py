"""Safe YAML loading that remembers where every key and value came from.

Rule and case files are validated after parsing; to report `file:line:col` for an error,
each key and value keeps its position. Only plain YAML is accepted: no tags that build
objects, no duplicate keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from msrunwatch.core.errors import YamlError

Path_ = tuple[str | int, ...]
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""LibYAML's loader when PyYAML was built with it: same safety, several times faster."""
TOO_DEEP = "nested too deeply to read"
"""One message for a document nested beyond the parser's depth, whichever parser found it:
LibYAML (PyYAML 6.0.4 and later) stops at its own depth limit, the pure-Python loader
recurses until Python's limit."""
_LIBYAML_TOO_DEEP = "maximum nesting depth"


@dataclass
class Positions:
    """Where each value (and each mapping key) of a document starts."""

    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def of(self, path: Path_, key: bool = False) -> tuple[int, int]:
        """Position of path, or of its nearest ancestor that has one."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            probe = probe[:-1]
        return self.values.get((), (1, 1))


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _walk(node: yaml.Node, path: Path_, pos: Positions) -> None:
    pos.values[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                line, col = _mark(key_node)
                raise YamlError("a mapping key must be a plain value", line, col)
            key = key_node.value
            if key in seen:
                line, col = _mark(key_node)
                raise YamlError(f"duplicate key {key!r}", line, col)
            seen.add(key)
            pos.keys[(*path, key)] = _mark(key_node)
            _walk(value_node, (*path, key), pos)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), pos)


def load(text: str) -> tuple[Any, Positions]:
    """Parse one YAML document safely; returns the data and its positions."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        positions = Positions()
        if node is None:
            return None, positions
        _walk(node, (), positions)
        return loader.construct_document(node), positions
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = str(exc.problem or exc.context or exc)
        raise YamlError(TOO_DEEP if _LIBYAML_TOO_DEEP in problem else problem, line, col) from None
    except RecursionError:
        raise YamlError(TOO_DEEP) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc)) from None
    finally:
        loader.dispose()
