"""Load rule files: one rule per YAML file, `id` equal to the file stem."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import regex
import yaml

from msrunwatch.model import CATEGORIES, Blame, Role, Severity
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import template_fields

CASES_SUFFIX = ".cases.yaml"


class RuleError(Exception):
    """A rule file that cannot be used; the message is `file:line:col: ...`."""


def builtin_rules_dir() -> Path:
    """The shipped rule pack: inside the wheel, or the checkout's top-level rules/."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_builtin_rules"
    return packaged if packaged.is_dir() else here.parent / "rules"


def rule_files(paths: Iterable[Path]) -> list[Path]:
    """Rule files under the given files or directories, cases files excluded."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                p
                for p in sorted(path.glob("*.yaml"))
                if not p.name.endswith(CASES_SUFFIX) and not p.name.startswith(".")
            )
        else:
            found.append(path)
    return found


def _fail(path: Path, message: str, line: int = 1, col: int = 1) -> RuleError:
    return RuleError(f"{path}:{line}:{col}: {message}")


def _enum(path: Path, data: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = data.get(key, default)
    try:
        return kind(value)
    except ValueError:
        allowed = "|".join(m.value for m in kind)  # type: ignore[attr-defined]
        raise _fail(path, f"{key} must be one of {allowed}, not {value!r}") from None


def _compile(path: Path, pattern: object) -> regex.Pattern[str]:
    if not isinstance(pattern, str):
        raise _fail(path, "match must be a string")
    try:
        return regex.compile(pattern, regex.VERSION1)
    except regex.error as exc:
        raise _fail(path, f"match is not a valid regex: {exc}") from None


def rule_from_data(path: Path, data: object, line: int = 1) -> Rule:
    """Build a Rule from parsed YAML, checking what the engine relies on."""
    if not isinstance(data, dict):
        raise _fail(path, "a rule file must be a mapping")
    for key in ("id", "title", "category", "severity", "message"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise _fail(path, f"missing or empty required key {key!r}")
    if data["id"] != path.stem:
        raise _fail(path, f"id {data['id']!r} must equal the file name {path.stem!r}")
    if data["category"] not in CATEGORIES:
        raise _fail(path, f"unknown category {data['category']!r}")
    scope = _enum(path, data, "scope", Scope, "line")
    match = _compile(path, data["match"]) if "match" in data else None
    if scope is Scope.LINE and match is None:
        raise _fail(path, "a line rule needs a match pattern")
    if match is not None:
        unknown = set(template_fields(data["message"])) - set(match.groupindex) - {"rank"}
        if unknown:
            raise _fail(path, f"message uses {sorted(unknown)} which match does not capture")
    return Rule(
        id=data["id"],
        title=data["title"],
        category=data["category"],
        severity=_enum(path, data, "severity", Severity, "error"),
        scope=scope,
        message=data["message"],
        role=_enum(path, data, "role", Role, "cause"),
        blame=_enum(path, data, "blame", Blame, "first"),
        match=match,
        fallback=bool(data.get("fallback", False)),
        hint=str(data.get("hint", "")),
        doc=str(data.get("doc", "")),
        references=tuple(data.get("references", ())),
        versions=data.get("versions"),
        tags=tuple(data.get("tags", ())),
        path=str(path),
        line=line,
    )


def load_rule(path: Path) -> Rule:
    """Load one rule file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise _fail(path, f"invalid YAML: {getattr(exc, 'problem', exc)}", line, col) from None
    return rule_from_data(path, data)


def load_rules(paths: Iterable[Path] | None = None) -> list[Rule]:
    """Load every rule under paths (the built-in pack when None); later ids override earlier."""
    chosen = [builtin_rules_dir()] if paths is None else list(paths)
    rules: dict[str, Rule] = {}
    for path in rule_files(chosen):
        rule = load_rule(path)
        rules[rule.id] = rule
    return list(rules.values())
