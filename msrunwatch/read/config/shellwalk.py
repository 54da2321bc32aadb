"""Walk a lexed script in order: track variables, blocks and the launch commands.

Assignments at the top level set variables. An assignment inside `if`/`for`/`while`/
`case`, a function, a subshell or after `&&`/`||` depends on the run, so the variable
becomes unresolved with that reason. `export`, `declare -x` and `VAR=x cmd` prefixes
mark what a child process (msrun) sees. msrun, torchrun (or `python -m
torch.distributed.run`), deepspeed, `ray job submit -- ...` and plain `python script.py` commands
are recorded with their words expanded against the variables of that moment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from msrunwatch.read.config.shellexpand import Env, Expander, Field, Lookup, Var
from msrunwatch.read.config.shellfield import Span
from msrunwatch.read.config.shellvars import new_array, new_var
from msrunwatch.read.config.shellwords import ASSIGNMENT, NAME, ArrayLit, Command, Lit, Word

PYTHON = re.compile(r"python[0-9.]*")
TORCH_MODULES = ("torch.distributed.run", "torch.distributed.launch")
WRAPPERS = ("nohup", "exec", "command", "time", "env")
LAUNCHERS = ("msrun", "torchrun", "deepspeed")
UV_RUN_VALUED = (
    "--extra",
    "--with",
    "--with-requirements",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--group",
    "--env-file",
    "--package",
    "--index",
    "--index-url",
)
"""`uv run` options that take a value (uv's own documentation)."""
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
    """A launch command: msrun, torchrun, python, or `unknown` (a script started by an
    unresolved word), and its words after the program."""

    kind: str
    fields: list[Field]
    line: int
    env: Lookup
    """The script's variables when the command runs."""
    prefix: dict[str, Var] = field(default_factory=dict)
    """`VAR=value command` assignments, seen by this command only."""
    launcher: Field | None = None
    """kind `unknown`: the unresolved word that launches the script (`$LAUNCH_SCRIPT`)."""


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
        old = self.env.get(name)
        reason = f"{name} is assigned {why}: its value depends on the run" if why else None
        if any(isinstance(p, ArrayLit) for p in word.parts[1:]):
            items = self.expander.elements([*parts, *word.parts[1:]], first.line, col)
            if append and old is not None and old.reason is None and reason is not None:
                # appended under a condition: the elements before stand either way, and what
                # is appended is one word not known (`if multi-node; then ARGS+=(...); fi`)
                unknown = Field((Span("", first.line, col, reason),))
                items, reason = [*old.elements(), unknown], None
            elif append and old is not None:
                items = [*old.elements(), *items] if old.reason is None else []
                reason = reason or old.reason
            keep = old.exported if old is not None else False
            return new_array(name, tuple(items), first.line, col, exported or keep, reason)
        value = self.expander.value([*parts, *word.parts[1:]])
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
        fields = _unwrap([f for word in words for f in self.expander.fields(word)])
        if not fields:
            return
        if fields[0].unresolved is not None and not fields[0].text:
            self._unknown_launcher(fields, line, prefix)
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
        else:
            self._run_fields(fields, line, prefix)

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

    def _unknown_launcher(self, fields: list[Field], line: int, prefix: dict[str, Var]) -> None:
        """`$LAUNCHER train.py ...` or `$PREFIX torchrun ...` with the prefix unknown: a
        launcher named after it is read; else a Python script after it is the entry, and
        the launcher (so the card count) is unknown."""
        for i, f in enumerate(fields[1:4], 1):
            if f.unresolved is None and (_base(f) in LAUNCHERS or PYTHON.fullmatch(_base(f))):
                self._run_fields(fields[i:], line, prefix)
                return
        for i, f in enumerate(fields[1:], 1):
            if f.text.endswith(".py"):
                self.launches.append(
                    Launch("unknown", fields[i:], line, self.env.snapshot(), prefix, fields[0])
                )
                return

    def _run_fields(self, fields: list[Field], line: int, prefix: dict[str, Var]) -> None:
        base = _base(fields[0])
        if base in LAUNCHERS:
            self._launch(base, fields[1:], line, prefix)
        elif PYTHON.fullmatch(base):
            self._python(fields[1:], line, prefix)

    def _launch(self, kind: str, args: list[Field], line: int, prefix: dict[str, Var]) -> None:
        self.launches.append(Launch(kind, args, line, self.env.snapshot(), prefix))


def _unwrap(fields: list[Field]) -> list[Field]:
    """The command after wrappers: `nohup`, `env A=b`, `time -p`, `uv run --extra x`..."""
    while fields:
        base = _base(fields[0])
        if base == "ray" and [f.text for f in fields[1:3]] == ["job", "submit"]:
            fields = _after_double_dash(fields[3:])  # `ray job submit [options] -- command`
        elif base == "uv" and len(fields) > 1 and fields[1].text == "run":
            fields = _skip_options(fields[2:], UV_RUN_VALUED)
        elif base in WRAPPERS:
            fields = fields[1:]
            while fields and (fields[0].text.startswith("-") or "=" in fields[0].text):
                fields = fields[1:]  # env's VAR=value and options, nohup/time options
        else:
            return fields
    return fields


def _after_double_dash(fields: list[Field]) -> list[Field]:
    """The command after `--` (ray job submit's entrypoint); nothing when there is none."""
    for i, f in enumerate(fields):
        if f.text == "--":
            return fields[i + 1 :]
    return []


def _skip_options(fields: list[Field], valued: tuple[str, ...]) -> list[Field]:
    """fields after a wrapper's options (those in valued take the next word)."""
    while fields and fields[0].text.startswith("-"):
        option = fields[0].text
        fields = fields[2:] if option in valued and "=" not in option else fields[1:]
    return fields


def _is_assignment(word: Word) -> bool:
    first = word.parts[0] if word.parts else None
    return isinstance(first, Lit) and not first.quoted and ASSIGNMENT.match(first.text) is not None


def _base(f: Field) -> str:
    return f.text.rsplit("/", 1)[-1]
