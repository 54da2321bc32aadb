"""Walk a lexed script in order: track variables, blocks and the launch commands.

Assignments at the top level set variables. An assignment inside `if`/`for`/`while`/
`case`, a function, a subshell or after `&&`/`||` depends on the run, so the variable
becomes unresolved with that reason. `export`, `declare -x` and `VAR=x cmd` prefixes
mark what a child process (msrun) sees. msrun, torchrun (or `python -m
torch.distributed.run`) and plain `python script.py` commands are recorded with their
words expanded against the variables of that moment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from msrunwatch.read.config.shellexpand import Env, Expander, Field, Lookup, Var
from msrunwatch.read.config.shellvars import new_var
from msrunwatch.read.config.shellwords import ASSIGNMENT, NAME, Command, Lit, Word

PYTHON = re.compile(r"python[0-9.]*")
TORCH_MODULES = ("torch.distributed.run", "torch.distributed.launch")
WRAPPERS = ("nohup", "exec", "command", "time", "env")
DECLARERS = ("export", "declare", "typeset", "local", "readonly")
BLOCKS = {
    "if": "an `if` block",
    "while": "a `while` loop",
    "until": "an `until` loop",
    "for": "a `for` loop",
    "select": "a `select` loop",
    "case": "a `case` block",
    "function": "a function body",
    "(": "a subshell",
}
CLOSERS = {
    "fi": ("if",),
    "done": ("for", "while", "until", "select"),
    "esac": ("case",),
    "}": ("{", "function"),
}


@dataclass
class Launch:
    """A launch command: msrun, torchrun or python, and its words after the program."""

    kind: str
    fields: list[Field]
    line: int
    env: Lookup
    """The script's variables when the command runs."""
    prefix: dict[str, Var] = field(default_factory=dict)
    """`VAR=value command` assignments, seen by this command only."""


class Walker:
    """Runs through a script's commands without executing any."""

    def __init__(self, missing: str = "is not set in the script") -> None:
        self.env = Env()
        self.expander = Expander(self.env, missing)
        self.blocks: list[tuple[str, int]] = []
        self.launches: list[Launch] = []
        self.sourced: list[tuple[str, int]] = []
        self._function_next = False

    def run(self, commands: Iterable[Command]) -> None:
        prev = "\n"
        for cmd in commands:
            after = prev if prev in ("&&", "||", "|") else None
            self.command(cmd, "|" if cmd.end == "|" and after is None else after)
            prev = cmd.end

    # -- one command -----------------------------------------------------------------------

    def command(self, cmd: Command, after: str | None) -> None:
        words = list(cmd.words)
        if not words:
            if cmd.end == "(":
                self.blocks.append(("(", cmd.line))
            elif cmd.end == ")" and self.blocks and self.blocks[-1][0] == "(":
                self.blocks.pop()
            return
        if cmd.end == "(" and len(words) == 1 and NAME.fullmatch(words[0].literal() or ""):
            self._function_next = True  # `name() {`
            return
        words = self._keywords(words, cmd.line)
        if not words:
            return
        why = self._why(after)
        assigns: list[Word] = []
        while words and _is_assignment(words[0]):
            assigns.append(words.pop(0))
        if not words:
            for word in assigns:
                self._assign(word, why, exported=False)
            return
        prefix: dict[str, Var] = {}
        for word in assigns:
            var = self._var(word, why)
            prefix[var.name] = var.exporting()
        self._run(words, cmd.line, why, prefix)

    def _keywords(self, words: list[Word], line: int) -> list[Word]:
        while words:
            kw = words[0].literal()
            if kw in ("then", "do", "else", "!", "time"):
                words.pop(0)
            elif kw in CLOSERS:
                self._close(CLOSERS[kw])
                words.pop(0)
            elif kw == "{":
                self.blocks.append(("function" if self._function_next else "{", line))
                self._function_next = False
                words.pop(0)
            elif kw == "function":
                self._function_next = True
                words = words[2:]
            elif kw in ("if", "while", "until", "for", "select", "case"):
                self.blocks.append((kw, line))
                return []  # the condition or the loop list
            elif kw == "elif":
                return []
            else:
                break
        return words

    def _close(self, kinds: tuple[str, ...]) -> None:
        for i in range(len(self.blocks) - 1, -1, -1):
            if self.blocks[i][0] in kinds:
                del self.blocks[i:]
                return

    def _why(self, after: str | None) -> str | None:
        for kind, line in self.blocks:
            if kind != "{":
                return f"inside {BLOCKS[kind]} (line {line})"
        if after == "|":
            return "in a pipeline, which runs in a subshell"
        if after is not None:
            return f"after `{after}`, so only if the command before it succeeds or fails"
        return None

    # -- variables -------------------------------------------------------------------------

    def _var(self, word: Word, why: str | None, exported: bool = False) -> Var:
        first = word.parts[0]
        assert isinstance(first, Lit)
        m = ASSIGNMENT.match(first.text)
        assert m is not None
        name, append = m.group(1), m.group(2)
        rest = first.text[m.end() :]
        col = first.col + m.end()
        parts = [Lit(rest, first.line, col, False)] if rest else []
        value = self.expander.value([*parts, *word.parts[1:]])
        old = self.env.get(name)
        reason = f"{name} is assigned {why}: its value depends on the run" if why else None
        if append and old is not None:
            if not value.spans:
                return old
            return old.appended(value, first.line, col, reason, exported)
        keep = old.exported if old is not None else False
        return new_var(name, value, first.line, col, exported or keep, reason)

    def _assign(self, word: Word, why: str | None, exported: bool) -> None:
        self.env.set(self._var(word, why, exported))

    def _declare(self, builtin: str, words: Sequence[Word], why: str | None) -> None:
        options: set[str] = set()
        for word in words:
            if _is_assignment(word):
                self._assign(word, why, builtin == "export" or "-x" in options)
                continue
            for f in self.expander.fields(word):
                text = f.text
                if text.startswith("-"):
                    options.add(text)
                elif (builtin == "export" or "-x" in options) and (var := self.env.get(text)):
                    self.env.set(var.exporting())

    # -- commands --------------------------------------------------------------------------

    def _run(
        self, words: Sequence[Word], line: int, why: str | None, prefix: dict[str, Var]
    ) -> None:
        if words[0].literal() in DECLARERS:
            self._declare(words[0].literal() or "", words[1:], why)
            return
        fields = [f for word in words for f in self.expander.fields(word)]
        while fields and _base(fields[0]) in WRAPPERS:
            fields = fields[1:]
            while fields and (fields[0].text.startswith("-") or "=" in fields[0].text):
                fields = fields[1:]  # env's VAR=value and options, nohup/time options
        if not fields:
            return
        base = _base(fields[0])
        args = fields[1:]
        if base == "unset":
            for f in args:
                if not f.text.startswith("-"):
                    self.env.unset(f.text)
        elif base == "read":
            for f in args:
                if NAME.fullmatch(f.text):
                    reason = f"{f.text} is read from input (line {line})"
                    self.env.set(Var(f.text, Field(), line, 1, False, reason))
        elif base in ("source", "."):
            self.sourced.append((args[0].text if args else "", line))
        elif base in ("msrun", "torchrun"):
            self._launch(base, args, line, prefix)
        elif PYTHON.fullmatch(base):
            self._python(args, line, prefix)

    def _python(self, args: list[Field], line: int, prefix: dict[str, Var]) -> None:
        i = 0
        while i < len(args) and args[i].text.startswith("-") and args[i].text not in ("-m", "-c"):
            i += 1
        if i >= len(args) or args[i].text == "-c":
            return
        if args[i].text == "-m":
            if i + 1 < len(args) and args[i + 1].text in TORCH_MODULES:
                self._launch("torchrun", args[i + 2 :], line, prefix)
            return
        self._launch("python", args[i:], line, prefix)

    def _launch(self, kind: str, args: list[Field], line: int, prefix: dict[str, Var]) -> None:
        self.launches.append(Launch(kind, args, line, self.env.snapshot(), prefix))


def _is_assignment(word: Word) -> bool:
    first = word.parts[0] if word.parts else None
    return isinstance(first, Lit) and not first.quoted and ASSIGNMENT.match(first.text) is not None


def _base(f: Field) -> str:
    return f.text.rsplit("/", 1)[-1]
