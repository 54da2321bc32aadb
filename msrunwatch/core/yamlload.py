"""Safe, bounded YAML loading that remembers where every key and value came from.

Every YAML msrunwatch reads (rules and their cases, MindFormers configs, `msrunwatch.yaml`)
comes through `load`. Only plain YAML is accepted: no tags that build objects, no duplicate
keys. LibYAML parses; the document is composed here, from its events, so that composing
can be bounded: each node counts once, and each alias counts as many nodes as it stands
for. A 400-byte "billion laughs" file stands for billions of nodes; anything that walks
the loaded data (the schema check, the config readers) would take that long, so a document
standing for more than MAX_NODES nodes is refused (`too many aliases/nodes`) before any of
it is built, and so is an alias used inside its own anchor. Positions are recorded while
composing, once per node written in the file, never by walking the expanded tree.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

from msrunwatch.core.errors import YamlError
from msrunwatch.core.positions import Path_, Positions

__all__ = ["MAX_NODES", "TOO_DEEP", "TOO_MANY", "Path_", "Positions", "load"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""LibYAML's loader when PyYAML was built with it: same safety, several times faster."""
MAX_NODES = 100_000
"""Nodes a document may stand for, aliases expanded: the largest real config or rule file
has about 500, and every reader walks the expanded data."""
MAX_INT_CHARS = 40
"""Characters of an integer (2**64 has 20 digits): a longer one overflows every float the
readers compute with, or Python's 4,300-digit conversion limit."""
_INT = "tag:yaml.org,2002:int"
TOO_MANY = "too many aliases/nodes"
TOO_DEEP = "nested too deeply to read"
"""One message for a document nested beyond the parser's depth, whichever parser found it:
LibYAML (PyYAML 6.0.4 and later) stops at its own depth limit, Python at its recursion
limit."""
_LIBYAML_TOO_DEEP = "maximum nesting depth"


def _mark(mark: Any) -> tuple[int, int]:
    return mark.line + 1, mark.column + 1


class _Composer:
    """Builds the node graph from the parser's events, counting what aliases stand for."""

    def __init__(self, parser: Any, max_nodes: int) -> None:
        self.parser, self.max_nodes = parser, max_nodes
        self.positions = Positions()
        self.nodes = 0
        self._anchors: dict[str, yaml.Node] = {}
        self._sizes: dict[int, int] = {}
        """Expanded size of each anchored node, by id, once it is complete."""

    def document(self) -> yaml.Node | None:
        """The single document of the stream, or None when it is empty."""
        parser = self.parser
        parser.get_event()  # stream start
        node = None
        if not parser.check_event(yaml.StreamEndEvent):
            parser.get_event()  # document start
            node = self.node(())
            parser.get_event()  # document end
        if not parser.check_event(yaml.StreamEndEvent):
            line, col = _mark(parser.get_event().start_mark)
            raise YamlError("expected a single document, but found another", line, col)
        return node

    def _count(self, n: int, mark: Any) -> None:
        self.nodes += n
        if self.nodes > self.max_nodes:
            line, col = _mark(mark)
            why = f"the document stands for more than {self.max_nodes:,} nodes, aliases expanded"
            raise YamlError(f"{TOO_MANY}: {why}", line, col)

    def node(self, path: Path_) -> yaml.Node:
        """The next node; its position is recorded under path."""
        event = self.parser.peek_event()
        self.positions.values[path] = _mark(event.start_mark)
        if isinstance(event, AliasEvent):
            return self._alias(self.parser.get_event())
        start = self.nodes
        if isinstance(event, ScalarEvent):
            node: yaml.Node = self._scalar(self.parser.get_event())
        elif isinstance(event, SequenceStartEvent):
            node = self._sequence(path)
        elif isinstance(event, MappingStartEvent):
            node = self._mapping(path)
        else:  # the parser only yields the kinds above here
            line, col = _mark(event.start_mark)
            raise YamlError(f"unexpected {type(event).__name__}", line, col)
        if event.anchor is not None:
            self._sizes[id(node)] = self.nodes - start
        return node

    def _alias(self, event: Any) -> yaml.Node:
        anchor = self._anchors.get(event.anchor)
        line, col = _mark(event.start_mark)
        if anchor is None:
            raise YamlError(f"found undefined alias {event.anchor!r}", line, col)
        size = self._sizes.get(id(anchor))
        if size is None:
            why = f"alias *{event.anchor} is used inside its own anchor (a recursive alias)"
            raise YamlError(f"{TOO_MANY}: {why}", line, col)
        self._count(size, event.start_mark)
        return anchor

    def _anchor(self, event: Any, node: yaml.Node) -> None:
        self._count(1, event.start_mark)
        if event.anchor is not None:
            first = self._anchors.get(event.anchor)
            if first is not None:  # PyYAML refuses it, and so every framework reading with it
                line, col = _mark(event.start_mark)
                at, _ = _mark(first.start_mark)
                raise YamlError(
                    f"found duplicate anchor {event.anchor!r} (first on line {at})", line, col
                )
            self._anchors[event.anchor] = node

    def _tag(self, kind: type, value: str | None, event: Any) -> str:
        tag: str | None = event.tag
        if tag is None or tag == "!":
            tag = self.parser.resolve(kind, value, event.implicit)
        return str(tag)

    def _scalar(self, event: Any) -> yaml.ScalarNode:
        tag = self._tag(yaml.ScalarNode, event.value, event)
        if tag == _INT and len(event.value) > MAX_INT_CHARS:
            line, col = _mark(event.start_mark)
            raise YamlError(f"a number of {len(event.value):,} digits is not a setting", line, col)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        self._anchor(event, node)
        return node

    def _open(self, kind: type[yaml.CollectionNode]) -> Any:
        """A sequence or mapping node from its start event, counted and anchored."""
        start = self.parser.get_event()
        tag = self._tag(kind, None, start)
        node = kind(tag, [], start.start_mark, None, start.flow_style)
        self._anchor(start, node)
        return node

    def _sequence(self, path: Path_) -> yaml.SequenceNode:
        node: yaml.SequenceNode = self._open(yaml.SequenceNode)
        while not self.parser.check_event(yaml.SequenceEndEvent):
            node.value.append(self.node((*path, len(node.value))))
        node.end_mark = self.parser.get_event().end_mark
        return node

    def _mapping(self, path: Path_) -> yaml.MappingNode:
        node: yaml.MappingNode = self._open(yaml.MappingNode)
        seen: set[str] = set()
        while not self.parser.check_event(yaml.MappingEndEvent):
            key_node = self._key()
            line, col = _mark(key_node.start_mark)
            key = key_node.value
            if key in seen:
                raise YamlError(f"duplicate key {key!r}", line, col)
            seen.add(key)
            where = (*path, key)
            self.positions.keys[where] = (line, col)
            node.value.append((key_node, self.node(where)))
        node.end_mark = self.parser.get_event().end_mark
        return node

    def _key(self) -> yaml.Node:
        """A mapping key: a plain value (or an alias of one), never a collection."""
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            node = self._alias(self.parser.get_event())
        elif isinstance(event, ScalarEvent):
            node = self._scalar(self.parser.get_event())
        else:
            node = None
        if not isinstance(node, yaml.ScalarNode):
            line, col = _mark(event.start_mark)
            raise YamlError("a mapping key must be a plain value", line, col)
        return node


def load(text: str, max_nodes: int = MAX_NODES) -> tuple[Any, Positions]:
    """Parse one YAML document safely; returns the data and its positions."""
    parser = _Loader(text)
    try:
        composer = _Composer(parser, max_nodes)
        node = composer.document()
        if node is None:
            return None, composer.positions
        return parser.construct_document(node), composer.positions
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
        parser.dispose()
