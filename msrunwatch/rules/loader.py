"""Load and validate rule files: one rule per YAML file, `id` equal to the file stem.

Validation runs in order and stops at the first problem of a file, reported as
`file:line:col: rule-id: what is wrong`: YAML syntax, the JSON Schema (unknown keys,
types, enums), then what the schema cannot see (the id/file name, the regex, the
condition and the message's placeholders).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msrunwatch.core.errors import ExprError, RuleError, YamlError
from msrunwatch.core.fileio import read_capped
from msrunwatch.core.positions import Positions
from msrunwatch.rules import rulecache, variables
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.model import Peer, Rule, Scope, Subject, compile_pattern
from msrunwatch.rules.patterncheck import pattern_problem, python_re_error
from msrunwatch.rules.searchtable import TABLE_SUFFIX, load_search_table
from msrunwatch.rules.tables import Lookup, TableRows, load_table
from msrunwatch.rules.template import check_template
from msrunwatch.rules.vocab import CATEGORIES, Blame, Effect, Refers, Role, Severity, Witness
from msrunwatch.schemas import files

if TYPE_CHECKING:
    import regex
    from jsonschema import ValidationError

CASES_SUFFIX = ".cases.yaml"
MAX_RULE_BYTES = 1 << 20
"""A rule file larger than this is refused (the largest built-in one has 3 KB)."""
MAX_CASES_BYTES = 8 << 20
"""A cases file larger than this is refused (the largest built-in one has 24 KB)."""


@cache
def rule_schema() -> dict[str, Any]:
    """The JSON Schema every rule file must satisfy (shipped in the package)."""

    import json  # only user rules are validated

    schema: dict[str, Any] = json.loads(files.read("rule.schema.json"))
    return schema


def builtin_rules_dir() -> Path:
    """The shipped rule pack: inside the wheel, or the checkout's top-level rules/."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_builtin_rules"
    return packaged if packaged.is_dir() else here.parent / "rules"


def rule_files(paths: Iterable[Path]) -> list[Path]:
    """Rule files under the given files or directories (and their subdirectories, so a pack
    can be grouped by domain), cases files excluded, in path order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            under: list[tuple[tuple[str, ...], Path]] = []
            _walk(path, (), under)
            found.extend(p for _, p in sorted(under, key=lambda item: item[0]))
        elif path.exists():
            found.append(path)
        else:
            raise RuleError(path, "no such file or directory")
    return found


def _walk(
    directory: Path, parts: tuple[str, ...], found: list[tuple[tuple[str, ...], Path]]
) -> None:
    """The rule files under directory, with their parts below the root: what
    `sorted(root.rglob("*.yaml"))` finds, less cases, tables and anything under a name that
    starts with a dot (a hidden directory is not walked). As rglob, it does not follow a
    link to a directory, takes any entry whose name matches (a link to a file, a broken
    one), and passes over a directory it may not read. A tenth of what rglob costs: the
    built-in pack's 500 files and 23 directories were 35 M instructions of a cold start."""
    try:
        with os.scandir(directory) as entries:
            listed = [(e.name, _is_real_dir(e)) for e in entries if not e.name.startswith(".")]
    except PermissionError:
        return
    for name, is_dir in listed:
        if name.endswith(".yaml") and not name.endswith((CASES_SUFFIX, TABLE_SUFFIX)):
            found.append(((*parts, name), directory / name))
        if is_dir:
            _walk(directory / name, (*parts, name), found)


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir() and not entry.is_symlink()
    except OSError:
        return False


def _schema_error(error: ValidationError, data: Any, pos: Positions) -> tuple[str, tuple[int, int]]:
    """A readable message and the position of one schema violation."""
    path = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        if extra:
            return f"unknown key {extra[0]!r}", pos.of((*path, extra[0]), key=True)
    if error.validator == "required":
        return error.message.replace("is a required property", "is required"), pos.of(path)
    if error.validator == "enum":
        where = path[-1] if path else "value"
        choices = ", ".join(str(v) for v in schema.get("enum", []))
        return f"{where} must be one of: {choices} (not {error.instance!r})", pos.of(path)
    if error.validator == "anyOf" and path and path[-1] == "category":
        choices = ", ".join(schema["anyOf"][0]["enum"])
        message = f"category must be one of: {choices}, or x-<name> (not {error.instance!r})"
        return message, pos.of(path)
    if error.validator == "type":
        where = path[-1] if path else "the file"
        return f"{where} must be of type {error.validator_value}", pos.of(path)
    if error.validator in ("not", "if", "allOf") and isinstance(data, dict):
        return _conditional_message(data), pos.of(path)
    where = f"{path[-1]}: " if path else ""
    return f"{where}{error.message}", pos.of(path)


def _conditional_message(data: dict[str, Any]) -> str:
    scope = data.get("scope", "line")
    if scope != "line" and "match" in data:
        return f"match is only for line rules, not scope {scope}"
    if "ranks" in data and scope != "run":
        return "ranks is only for run rules"
    if "at" in data and scope != "config":
        return "at is only for config rules"
    return "the rule's keys do not fit its scope"


@cache
def _validator() -> Any:
    import jsonschema  # only user rules are validated: a cold start need not load it

    return jsonschema.Draft202012Validator(rule_schema())


def _validate_schema(path: Path, data: Any, pos: Positions) -> None:
    validator = _validator()
    errors = sorted(validator.iter_errors(data), key=lambda e: pos.of(tuple(e.absolute_path)))
    if errors:
        rule = data.get("id") if isinstance(data, dict) else None
        message, (line, col) = _schema_error(errors[0], data, pos)
        raise RuleError(path, message, line, col, rule if isinstance(rule, str) else None)


def _expr(
    path: Path,
    data: dict[str, Any],
    pos: Positions,
    key: str,
    names: set[str] | None,
    lazy: bool = False,
) -> Expr | None:
    source = data.get(key)
    if source is None:
        return None
    try:
        return Expr(source, names, lazy)
    except ExprError as exc:
        line, col = pos.of((key,))
        raise RuleError(path, f"{key}: {exc}", line, col + exc.col, data["id"]) from None


def _names(scope: Scope, match: regex.Pattern[str] | None) -> set[str] | None:
    if scope is Scope.CONFIG and not variables.CONFIG:
        return None
    names = set(variables.SCOPES[scope.value])
    if match is not None:
        names |= set(match.groupindex)
    return names


def _validate(path: Path, data: Any, pos: Positions) -> None:
    """Everything the engine relies on: the schema, the id, the regex, the names used."""
    _validate_schema(path, data, pos)
    rule_id = data["id"]
    if rule_id != path.stem:
        line, col = pos.of(("id",))
        raise RuleError(path, f"id must equal the file name {path.stem!r}", line, col, rule_id)
    scope = Scope(data.get("scope", "line"))
    match = None
    if "match" in data:
        match = _compile_bounded(path, data["match"], pos, rule_id)
    if "under" in data:
        _compile_bounded(path, data["under"], pos, rule_id, key="under")
    names = _names(scope, match)
    if "lookup" in data and names is not None:
        names |= _lookup_columns(path, data, pos, match)
    for name in _names_list(data.get("at", ())):
        if names is not None and name not in names:
            line, col = pos.of(("at",))
            raise RuleError(path, f"at names unknown setting {name!r}", line, col, rule_id)
    for key in ("when", "ranks", "fallback_when"):
        _expr(path, data, pos, key, names)
    for key in ("message", "hint", "why"):
        problem = check_template(data.get(key, ""), names, key)
        if problem is not None:
            line, col = pos.of((key,))
            raise RuleError(path, problem, line, col, rule_id)
    _subject(path, data, pos, match)
    _peer(path, data, pos, match)


def _compile_bounded(
    path: Path, pattern: str, pos: Positions, rule_id: str, key: str = "match"
) -> regex.Pattern[str]:
    """A user's pattern (`match`, or `under`'s heading), compiled only once its size is
    known to be bounded: the `regex` module expands counted repeats while compiling, beyond
    any time or memory limit."""
    import regex  # a user's rule is validated: its errors are regex's

    line, col = pos.of((key,))
    problem = pattern_problem(pattern)
    if problem is not None:
        raise RuleError(path, f"{key} {problem}", line, col, rule_id)
    try:
        return compile_pattern(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise RuleError(path, f"{key} is not a valid regex: {exc}", line, col, rule_id) from None


def rule_from_data(path: Path, data: Any, pos: Positions, trusted: bool = False) -> Rule:
    """Build a Rule from parsed YAML. A rule from the user is validated first; the built-in
    pack (`trusted`), validated by `rules check --strict` in CI, is not, and compiles each
    pattern only when a line needs it: that keeps a cold start short."""
    if not trusted:
        _validate(path, data, pos)
    rule_id = data["id"]
    scope = Scope(data.get("scope", "line"))
    when = _expr(path, data, pos, "when", None, lazy=trusted)
    ranks = _expr(path, data, pos, "ranks", None, lazy=trusted)
    role, severity = Role(data.get("role", "cause")), Severity(data["severity"])
    effect = data.get("effect")
    return Rule(
        id=rule_id,
        title=data["title"],
        category=data["category"],
        severity=severity,
        scope=scope,
        message=data["message"],
        role=role,
        blame=Blame(data.get("blame", "first")),
        effect=Effect(effect) if effect else Effect.default(role, severity, scope is Scope.LINE),
        subject=_subject_of(data),
        peer=_peer(path, data, pos, None),
        lookup=_lookup(path, data, lazy=trusted),
        witness=Witness(data["witness"]) if "witness" in data else None,
        restates=tuple(data.get("restates", ())),
        aliases=tuple(data.get("aliases", ())),
        pattern=data.get("match"),
        under=data.get("under"),
        when=when,
        ranks=ranks,
        evidence=data.get("evidence", "last-line"),
        at=_names_list(data.get("at", ())),
        fallback={False: 0, True: 1, "last": 2}[data.get("fallback", False)],
        fallback_when=_expr(path, data, pos, "fallback_when", None, lazy=trusted),
        hint=data.get("hint", ""),
        why=data.get("why", ""),
        doc=data.get("doc", ""),
        references=tuple(data.get("references", ())),
        versions=data.get("versions"),
        tags=tuple(data.get("tags", ())),
        path=str(path),
        line=1,
    )


def _subject(
    path: Path, data: dict[str, Any], pos: Positions, match: regex.Pattern[str] | None
) -> Subject | None:
    """The `subject` capture, which must be one of the pattern's named groups."""
    given = data.get("subject")
    if given is None:
        return None
    if match is None or given["capture"] not in match.groupindex:
        line, col = pos.of(("subject", "capture"))
        raise RuleError(
            path,
            f"subject: {given['capture']!r} is not a named group of match",
            line,
            col,
            data["id"],
        )
    return _subject_of(data)


def _lookup_columns(
    path: Path, data: dict[str, Any], pos: Positions, match: regex.Pattern[str] | None
) -> set[str]:
    """Check a rule's table (its key is a capture, its rows use known categories and
    roles) and return its columns, which the message may use."""
    given = data["lookup"]
    line, col = pos.of(("lookup",))
    if match is None or given["key"] not in match.groupindex:
        raise RuleError(
            path,
            f"lookup key {given['key']!r} is not a named group of match",
            line,
            col,
            data["id"],
        )
    lookup = _lookup(path, data, check=True)
    assert lookup is not None
    search = lookup.search.rows if lookup.search else ()
    rows = [(row["classified_from"], row) for row in search] or lookup.rows.items()
    for key, row in rows:
        category, role = row.get("category"), row.get("role")
        if category and category not in CATEGORIES and not category.startswith("x-"):
            raise RuleError(
                path, f"lookup row {key!r}: unknown category {category!r}", line, col, data["id"]
            )
        if role and role not in {r.value for r in Role}:
            raise RuleError(
                path, f"lookup row {key!r}: unknown role {role!r}", line, col, data["id"]
            )
    return set(lookup.columns)


def _lookup(
    path: Path, data: dict[str, Any], check: bool = False, lazy: bool = False
) -> Lookup | None:
    """The rule's lookup table, read from beside the rule file (`check`: a search table's
    patterns compiled now, as a user's rule is validated). `lazy` (the built-in pack): a
    TSV table is read when a row is first looked up (tables.TableRows); a user's is read
    now, so that one edited while `watch` runs never fails in the middle of a run."""
    given = data.get("lookup")
    if given is None:
        return None
    table = path.parent / given["table"]
    if given["table"].endswith(TABLE_SUFFIX):
        return Lookup(given["table"], given["key"], {}, load_search_table(table, data["id"], check))
    rows = TableRows(table, data["id"]) if lazy and not check else load_table(table, data["id"])
    return Lookup(given["table"], given["key"], rows)


PEER_NAMES = {"rank", "world"}
"""What a peer expression may read besides the line's captures."""


def _peer(
    path: Path, data: dict[str, Any], pos: Positions, match: regex.Pattern[str] | None
) -> Peer | None:
    """The `peer` declaration; validated against the pattern's groups when one is given."""
    given = data.get("peer")
    if given is None:
        return None
    names = None if match is None else PEER_NAMES | set(match.groupindex)
    try:
        rank = Expr(given["rank"], names)
    except ExprError as exc:
        line, col = pos.of(("peer", "rank"))
        raise RuleError(path, f"peer rank: {exc}", line, col, data["id"]) from None
    for key in ("suspect", "if_ended"):
        value = given.get(key)
        if value is not None and value not in CATEGORIES and not value.startswith("x-"):
            line, col = pos.of(("peer", key))
            raise RuleError(path, f"peer {key}: unknown category {value!r}", line, col, data["id"])
    group = given.get("group")
    if group is not None and match is not None and group not in match.groupindex:
        line, col = pos.of(("peer", "group"))
        raise RuleError(path, f"peer group: no capture named {group!r}", line, col, data["id"])
    return Peer(
        rank, given["suspect"], given.get("if_ended"), Effect(given.get("effect", "none")), group
    )


def _subject_of(data: dict[str, Any]) -> Subject | None:
    given = data.get("subject")
    return None if given is None else Subject(given["capture"], Refers(given["is"]))


def _names_list(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def read_text(path: Path, cap: int = MAX_RULE_BYTES) -> str:
    """A rule or cases file's text: a regular file of at most cap bytes, UTF-8 (a FIFO or a
    device in a rules directory is an error, never a read that blocks or never ends)."""
    try:
        return read_capped(path, cap).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def load_rule(path: Path, trusted: bool = False) -> Rule:
    """Load one rule file (validated unless it is the built-in pack's)."""
    try:
        data, pos = rulecache.document(path, lambda: read_text(path))
    except YamlError as exc:
        raise RuleError(path, f"invalid YAML: {exc}", exc.line, exc.col) from None
    return rule_from_data(path, data, pos, trusted)


def load_rules(paths: Iterable[Path] | None = None) -> list[Rule]:
    """Load every rule under paths (the built-in pack when None); a later id overrides.
    What the files hold is read through the user's cache (rules.rulecache) when the same
    files, byte for byte, were loaded before."""
    roots = [builtin_rules_dir()] if paths is None else list(paths)
    files = rule_files(roots)

    def build(trusted: bool) -> list[Rule]:
        rules: dict[str, Rule] = {}
        for path in files:
            rule = load_rule(path, trusted)
            rules[rule.id] = rule
        return list(rules.values())

    return rulecache.load_through(roots, files, paths is None, build)


def check_files(paths: Iterable[Path]) -> tuple[list[Rule], list[RuleError]]:
    """Every rule that loads, and one error per file that does not (for `rules check`).
    A pattern Python's `re` cannot read is an error here, though `regex` compiles it: the
    shortcuts need `re`'s reading (see patterncheck.python_re_error)."""
    rules, errors = [], []
    for path in rule_files(paths):
        try:
            rule = load_rule(path)
        except RuleError as exc:
            errors.append(exc)
            continue
        unread = None if rule.pattern is None else python_re_error(rule.pattern)
        if unread is None:
            rules.append(rule)
        else:
            errors.append(RuleError(path, UNREAD_BY_RE.format(unread), rule=rule.id))
    return rules, errors


UNREAD_BY_RE = (
    "match is valid for the regex module but Python's re cannot read it ({}): the "
    "prefilter and the quiet-line shortcut then read every line of every log with this "
    "rule, several times slower; write it in the syntax both share (one name per group, "
    "no \\p{{..}} classes)"
)
