"""fish's completion script, generated from the parser (shtab has no fish).

A helper function says which (sub)command the words typed so far chose (`triage`, `rules
show`; a first word that is no command is a directory: `watch`), and every option and
positional is offered under it: choices as words, files and directories from the file
system, rule ids from the built-in pack.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

from msrunwatch.commands.common import DIRECTORY, FILE, LEVELS, RULE_ID, RULE_LEVELS, RULE_NAMES

HELPER = """\
# msrunwatch's completion for fish (msrunwatch completion fish)
function __msrunwatch_command --description 'the msrunwatch command the words chose'
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    for word in $words
        string match -q -- '-*' $word; and continue
        if test (count $path) -eq 0
            if contains -- $word COMMANDS
                set path $word
            else
                echo watch
                return
            end
        else if test "$path" = rules; and contains -- $word RULES
            set path "rules $word"
        else
            break
        end
    end
    echo $path
end

function __msrunwatch_is --description 'the words chose this msrunwatch command'
    set -l chosen (__msrunwatch_command)
    test "$chosen" = "$argv"
end

function __msrunwatch_rule_ids --description 'the built-in rule ids'
    printf '%s\n' RULE_IDS
end

function __msrunwatch_rule_list --description 'rule ids and categories, after a comma too'
    set -l before (string match -r -- '^.*,' (commandline -ct))
    printf "$before%s\n" RULE_NAMES
end

function __msrunwatch_rule_level --description 'a rule id or category, then its severity'
    set -l token (commandline -ct)
    if string match -q -- '*=*' $token
        printf (string replace -r -- '=.*' '' $token)'=%s\n' LEVELS
    else
        printf '%s=\n' RULE_NAMES
    end
end

complete -c msrunwatch -f
complete -c msrunwatch -n '__msrunwatch_is' -a '(__fish_complete_directories)'
"""


def script(parser: argparse.ArgumentParser, rule_ids: Sequence[str], names: Sequence[str]) -> str:
    """The whole script: the helper, then one `complete` line per command and option.
    `names`: what `--select` takes (rule ids and categories)."""
    commands = _subcommands(parser)
    rules = _subcommands(commands["rules"]) if "rules" in commands else {}
    head = HELPER.replace("COMMANDS", " ".join(commands)).replace("RULES", " ".join(rules))
    head = head.replace("RULE_IDS", " ".join(rule_ids)).replace("RULE_NAMES", " ".join(names))
    head = head.replace("LEVELS", " ".join(LEVELS))
    lines = [head.rstrip("\n")]
    lines += _command_lines("", parser)
    for name, sub in commands.items():
        lines += _command_lines(name, sub)
    for name, sub in rules.items():
        lines += _command_lines(f"rules {name}", sub)
    return "\n".join(lines) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    return dict(action.choices) if action is not None else {}


def _command_lines(path: str, parser: argparse.ArgumentParser) -> Iterator[str]:
    when = f"-n {_quote(f'__msrunwatch_is {path}'.rstrip())}"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, help_text in _choices_help(action):
                yield f"complete -c msrunwatch {when} -a {name} -d {_quote(help_text)}"
            continue
        what = _values(action)
        if action.option_strings:
            yield f"complete -c msrunwatch {when}{_flags(action)}{what} -d {_quote(_help(action))}"
        elif what.strip() != "-x":
            yield f"complete -c msrunwatch {when}{what}"


def _choices_help(action: argparse._SubParsersAction[Any]) -> Iterator[tuple[str, str]]:
    helps = {a.dest: a.help or "" for a in action._choices_actions}
    for name in action.choices:
        yield name, helps.get(name, "")


def _flags(action: argparse.Action) -> str:
    out = ""
    for option in action.option_strings:
        if option.startswith("--"):
            out += f" -l {option[2:]}"
        elif len(option) == 2:
            out += f" -s {option[1]}"
    return out


def _values(action: argparse.Action) -> str:
    """What an option's value (or a positional) completes to."""
    complete = getattr(action, "complete", None)
    if complete is RULE_ID:
        return " -x -a '(__msrunwatch_rule_ids)'"
    if complete is RULE_NAMES:
        return " -x -a '(__msrunwatch_rule_list)'"
    if complete is RULE_LEVELS:
        return " -x -a '(__msrunwatch_rule_level)'"
    if complete is DIRECTORY:
        return " -x -a '(__fish_complete_directories)'"
    if complete is FILE:
        return " -r -F"
    if action.choices:
        return f" -x -a {_quote(' '.join(str(c) for c in action.choices))}"
    if action.nargs == 0:
        return ""
    return " -r -F" if action.metavar in ("FILE", "PATH") else " -x"


def _help(action: argparse.Action) -> str:
    text = (action.help or "").split(";")[0].split(" (")[0]
    return text[:80]


def _quote(text: str) -> str:
    """A fish single-quoted word."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
