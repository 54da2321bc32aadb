"""User settings: extra rules, rule selection and severity overrides.

Read from `msrunwatch.yaml` (or `.msrunwatch.yaml`), or `[tool.msrunwatch]` in
pyproject.toml, in the working directory or the nearest parent that has one; command-line
options add to them. Keys: rules (paths), select and ignore (rule ids or categories),
severity (id or category -> error|warning|info), fail-on (error|warning|never),
framework-version (framework -> version, for the version-dependent config checks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from msrunwatch.core.compat import toml_loads, zip_strict
from msrunwatch.core.errors import SettingsError, YamlError
from msrunwatch.core.fileio import read_capped
from msrunwatch.rules.loader import builtin_rules_dir, load_rules
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity

NAMES = ("msrunwatch.yaml", ".msrunwatch.yaml")
KEYS = {"rules", "select", "ignore", "severity", "fail-on", "framework-version"}
FAIL_ON = ("error", "warning", "never")
MAX_BYTES = 1 << 20
"""A settings file (or pyproject.toml) larger than this is refused."""


@dataclass(frozen=True)
class Settings:
    """What the user configured."""

    rules: tuple[Path, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: str = "error"
    source: Path | None = None
    framework_version: str | None = None
    """`framework-version: {mindformers: 1.6.0}`: what the config checks may rely on."""
    origin: Mapping[str, str] = field(default_factory=dict)
    """Where each rule name and rules path came from (`msrunwatch.yaml: ignore`,
    `--ignore`), so an error names the file and the key to fix."""


def _list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise SettingsError(f"{where}: {key} must be a list of strings")


def _severities(value: Any, where: str) -> dict[str, Severity]:
    if not isinstance(value, dict):
        raise SettingsError(f"{where}: severity must map rule ids or categories to a severity")
    try:
        return {str(k): Severity(v) for k, v in value.items()}
    except ValueError as exc:
        raise SettingsError(f"{where}: severity: {exc}") from None


def _versions(value: Any, where: str) -> str | None:
    """framework-version as option text (a mapping NAME: VERSION, or `NAME=VER,...`)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, str):
        return value
    raise SettingsError(f"{where}: framework-version must map frameworks to versions")


def _from_mapping(data: Any, source: Path, where: str) -> Settings:
    if data is None:
        return Settings(source=source)
    if not isinstance(data, dict):
        raise SettingsError(f"{where}: settings must be a mapping")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise SettingsError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})"
        )
    fail_on = data.get("fail-on", "error")
    if fail_on not in FAIL_ON:
        raise SettingsError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}")
    base = source.parent
    written = _list(data.get("rules", []), "rules", where)
    rules = tuple(base / p for p in written)
    for text, path in zip_strict(written, rules):
        if not path.exists():
            raise SettingsError(
                f"{where}: rules: {text}: no such file or directory (paths are relative to "
                "the settings file)"
            )
    settings = Settings(
        rules=rules,
        select=_list(data.get("select", []), "select", where),
        ignore=_list(data.get("ignore", []), "ignore", where),
        severity=_severities(data.get("severity", {}), where),
        fail_on=fail_on,
        source=source,
        framework_version=_versions(data.get("framework-version"), where),
    )
    return replace(settings, origin=_origins(settings, where))


def _origins(settings: Settings, where: str) -> dict[str, str]:
    """`where: key` for each name the settings hold."""
    named = {"select": settings.select, "ignore": settings.ignore}
    named["severity"] = tuple(settings.severity)
    return {name: f"{where}: {key}" for key, names in named.items() for name in names}


def _text(path: Path) -> str:
    """A settings file's text: a regular file of at most MAX_BYTES (a FIFO or a device named
    msrunwatch.yaml is an error, never a read that blocks or never ends)."""
    try:
        return read_capped(path, MAX_BYTES).decode("utf-8")
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: cannot read: not UTF-8 text") from None


def read_file(path: Path) -> Settings:
    """Settings from one file (YAML, or a pyproject.toml's [tool.msrunwatch])."""
    text = _text(path)
    if path.name == "pyproject.toml":
        try:
            table = toml_loads(text).get("tool", {}).get("msrunwatch")
        except ValueError as exc:  # TOMLDecodeError
            raise SettingsError(f"{path}: invalid TOML: {exc}") from None
        return _from_mapping(table, path, f"{path} [tool.msrunwatch]")
    from msrunwatch.core.yamlload import load  # only when there is a settings file

    try:
        data, _ = load(text)
    except YamlError as exc:
        raise SettingsError(f"{path}:{exc.line}:{exc.col}: invalid YAML: {exc}") from None
    return _from_mapping(data, path, str(path))


def _has_table(pyproject: Path) -> bool:
    """Whether a pyproject.toml has msrunwatch's table (one that cannot be read has not: it
    is someone else's file)."""
    try:
        return b"[tool.msrunwatch]" in read_capped(pyproject, MAX_BYTES)
    except OSError:
        return False


def find(start: Path) -> Settings:
    """The settings that apply in a directory: the nearest file up the tree, else none."""
    for directory in [start, *start.parents]:
        for name in NAMES:
            if (directory / name).is_file():
                return read_file(directory / name)
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _has_table(pyproject):
            return read_file(pyproject)
    return Settings()


def merge(
    base: Settings,
    rules: Iterable[str],
    select: Iterable[str],
    ignore: Iterable[str],
    severity: Iterable[str],
    fail_on: str | None,
) -> Settings:
    """Command-line options on top of the file's settings."""
    overrides = dict(base.severity)
    origin = dict(base.origin)
    for item in severity:
        key, _, level = item.partition("=")
        try:
            overrides[key.strip()] = Severity(level.strip())
        except ValueError:
            raise SettingsError(f"--severity {item!r}: expected ID=error|warning|info") from None
        origin[key.strip()] = "--severity"
    extra = [Path(r) for r in rules]
    for path in extra:
        if not path.exists():
            raise SettingsError(f"--rules {path}: no such file or directory")
    chosen, skipped = _split(select), _split(ignore)
    origin.update(dict.fromkeys(chosen, "--select"))
    origin.update(dict.fromkeys(skipped, "--ignore"))
    return replace(
        base,
        rules=(*base.rules, *extra),
        select=(*base.select, *chosen),
        ignore=(*base.ignore, *skipped),
        severity=overrides,
        fail_on=fail_on or base.fail_on,
        origin=origin,
    )


def _split(values: Iterable[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _names(rule: Rule) -> tuple[str, ...]:
    """What settings may call a rule: its id, its former ids, its category."""
    return (rule.id, *rule.aliases, rule.category)


def _named(rule: Rule, names: Sequence[str]) -> bool:
    return any(name in names for name in _names(rule))


def _severity(rule: Rule, settings: Settings) -> Severity | None:
    return next((settings.severity[n] for n in _names(rule) if n in settings.severity), None)


def apply(rules: Sequence[Rule], settings: Settings) -> list[Rule]:
    """The rules that run: selected, not ignored, with severities overridden (`reported`:
    what their findings count as; the root cause is judged on the rules' own severities).
    An ignored rule is gone from the judgement too: its lines are not read as faults, so
    the root cause may change (it is how a rule wrong for these logs is switched off)."""
    known = {name for r in rules for name in _names(r)}
    for name in (*settings.select, *settings.ignore, *settings.severity):
        if name not in known:
            where = settings.origin.get(name)
            import difflib  # only for a name no rule has

            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SettingsError(
                f"{where + ': ' if where else ''}unknown rule id or category {name!r}{hint}"
            )
    chosen = [r for r in rules if not settings.select or _named(r, settings.select)]
    chosen = [r for r in chosen if not _named(r, settings.ignore)]
    out = []
    for rule in chosen:
        level = _severity(rule, settings)
        out.append(replace(rule, reported=level) if level else rule)
    return out


def rule_set(settings: Settings) -> list[Rule]:
    """Built-in rules plus the user's, with the settings applied."""
    rules = {r.id: r for r in load_rules(None)}
    if settings.rules:
        rules.update({r.id: r for r in load_rules(settings.rules)})
    return apply(list(rules.values()), settings)


def describe(settings: Settings) -> str:
    """Which settings file applies, for -v: `/repo/msrunwatch.yaml`, or that none does."""
    source = settings.source
    if source is None:
        return (
            "none (no msrunwatch.yaml, .msrunwatch.yaml or pyproject.toml with "
            "[tool.msrunwatch] from the working directory up)"
        )
    return f"{source} [tool.msrunwatch]" if source.name == "pyproject.toml" else str(source)


def describe_rules(rules: Sequence[Rule], settings: Settings) -> str:
    """The rules loaded, for -v: how many are built in, which came from the user's paths,
    and what selection and severity changes were applied (`check` then says how many of them
    its targets took: the config rules apply to configs only)."""
    builtin = str(builtin_rules_dir().resolve())
    own = sum(1 for r in rules if str(Path(r.path).resolve()).startswith(builtin))
    parts = [f"{len(rules)} loaded ({own} built-in from {builtin}"]
    if settings.rules:  # even when they hold none: a misplaced directory is seen
        parts[0] += f", {len(rules) - own} from {', '.join(str(p) for p in settings.rules)}"
    parts[0] += ")"
    for key, names in (("select", settings.select), ("ignore", settings.ignore)):
        if names:
            parts.append(f"{key} {','.join(names)}")
    if settings.severity:
        changed = ",".join(f"{k}={v.value}" for k, v in settings.severity.items())
        parts.append(f"severity {changed}")
    return "; ".join(parts)
