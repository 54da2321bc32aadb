"""A cache of what loading a rule set parsed, so that a cold start does not parse it again.

Most of loading the built-in pack is its YAML: 230 documents whose LibYAML events are
composed in Python (to bound aliases and note positions). What one load parsed (every rule
file and search table, as plain data) is kept, per set of rule files, in the user's cache
directory: `$XDG_CACHE_HOME/msrunwatch`, else `~/.cache/msrunwatch`; never beside the rules
or in a directory msrunwatch reads or watches (`keep_out`). An entry is used only when it
was made from the same inputs: the cache format, msrunwatch's version and the code that
reads rules (every `rules/*.py`, the YAML reader and the schemas, hashed), the Python and
PyYAML that ran, the list of rule files, and the bytes of every file the load parsed. The
settings (`--select`, `--ignore`, `--severity`) apply after loading and change nothing here.

Anything else is the slow path, silently: no entry, a corrupt one (its checksum), a foreign
one (another user's file or directory, another format), an unreadable one, or a cache
directory that cannot be written. An entry is written to a temporary file renamed into
place, so concurrent runs never read half of one. `MSRUNWATCH_NO_CACHE` (non-empty) turns
the cache off; the test suite does, except where it tests the cache.

User rules (`--rules DIR`) are validated on the slow path, and an entry is made only when
every file passed: a hit skips validating files that passed it, byte for byte, under the same
code. A load that fails on the fast path is made again on the slow path, whose error names
the file, line and column.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import marshal
import os
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from msrunwatch import __version__
from msrunwatch.core.positions import Positions

T = TypeVar("T")
OFF = "MSRUNWATCH_NO_CACHE"
FORMAT = b"msrunwatch-rules-2\n"
"""First bytes of an entry; a new layout of entries gets a new one (2: the CRC-32 of the
payload after it, where 1 had its SHA-256)."""
MAX_ENTRY = 64 << 20
"""An entry larger than this is not read (the built-in pack's is about 0.5 MB)."""
_PACKAGE = Path(__file__).resolve().parent.parent
CODE = (
    *sorted((_PACKAGE / "rules").glob("*.py")),
    _PACKAGE / "core" / "yamlload.py",
    _PACKAGE / "core" / "compat.py",
    *sorted(p for p in (_PACKAGE / "schemas").iterdir() if p.suffix in (".py", ".json", ".yaml")),
)
"""What turns rule files into rules: a change to any of it is a new cache key."""

_kept_out: list[Path] = []


def keep_out(paths: Iterable[str | Path]) -> None:
    """Directories (and files) this run reads or watches: no entry is written under them,
    even when the cache directory is set to one."""
    for path in paths:
        with contextlib.suppress(OSError, ValueError):
            _kept_out.append(Path(os.path.realpath(path)))


def enabled() -> bool:
    """Whether the cache is on (MSRUNWATCH_NO_CACHE unset or empty)."""
    return not os.environ.get(OFF)


def cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/msrunwatch` (an absolute XDG_CACHE_HOME only, as the spec says),
    else `~/.cache/msrunwatch`; None when there is no home to put it in."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "msrunwatch"


# -- the documents one load parses ---------------------------------------------------------


class _Recorder:
    """Every document a slow load parses, in order, as marshal bytes with its digest."""

    def __init__(self) -> None:
        self.documents: dict[str, tuple[str, bytes]] = {}
        self.usable = True
        """False once a document holds what marshal cannot keep (a YAML timestamp)."""

    def parsed(self, path: Path, text: str, data: Any) -> None:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        try:
            self.documents[str(path)] = (digest, marshal.dumps(data))
        except ValueError:
            self.usable = False


_recording: ContextVar[_Recorder | None] = ContextVar("rule_recording", default=None)
_replaying: ContextVar[dict[str, bytes] | None] = ContextVar("rule_replaying", default=None)


class NotCached(LookupError):
    """A fast load asked for a document the entry does not hold."""


def document(path: Path, text_of: Callable[[], str]) -> tuple[Any, Positions]:
    """A rule file's or search table's YAML: from the entry being replayed (without
    positions: a fast load that fails is made again on the slow path), else parsed from
    its text (and recorded, while a slow load records)."""
    replay = _replaying.get()
    if replay is not None:
        blob = replay.get(str(path))
        if blob is None:
            raise NotCached(str(path))
        return marshal.loads(blob), Positions()
    text = text_of()
    data, positions = _parse(text)
    recorder = _recording.get()
    if recorder is not None:
        recorder.parsed(path, text, data)
    return data, positions


def _parse(text: str) -> tuple[Any, Positions]:
    """Parse a document (PyYAML is imported here: a start whose documents are all in the
    cache never loads it)."""
    from msrunwatch.core.yamlload import load

    return load(text)


# -- entries -------------------------------------------------------------------------------


@cache
def _code_digest() -> bytes:
    """The version, the interpreter, PyYAML and the code that reads rules."""
    h = hashlib.sha256(FORMAT)
    h.update(f"{__version__}\0{sys.version}\0{sys.implementation.cache_tag}\0".encode())
    yaml_init = _yaml_init()
    for path in (*CODE, *([yaml_init] if yaml_init else [])):
        h.update(str(path.name).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.digest()


def _yaml_init() -> Path | None:
    """PyYAML's `__init__.py` (it holds the version), found without importing it: the
    digest must not depend on whether something imported PyYAML first."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("yaml")
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin else None


def _key(files: Sequence[Path], trusted: bool, documents: Iterable[tuple[str, str]]) -> str:
    """What an entry was made from: code, rule files, and each parsed document's digest."""
    h = hashlib.sha256(_code_digest())
    h.update(b"trusted\0" if trusted else b"validated\0")
    for path in files:
        h.update(str(path).encode("utf-8", "surrogatepass") + b"\0")
    h.update(b"\1")
    for name, digest in documents:
        h.update(f"{name}\0{digest}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _entry_path(directory: Path, roots: Sequence[Path], trusted: bool) -> Path:
    """One entry per list of rule directories (and files): each checkout's pack and each
    --rules list has its own; a file added to one replaces its entry."""
    names = (os.path.realpath(p) for p in roots)
    where = hashlib.sha256("\0".join(names).encode("utf-8", "surrogatepass"))
    where.update(b"trusted" if trusted else b"validated")
    return directory / f"rules-{where.hexdigest()[:24]}.bin"


def _owned(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid()


def _read_entry(path: Path) -> dict[str, Any] | None:
    """A whole, intact entry of this format written by this user, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _owned(st) or st.st_size > MAX_ENTRY:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(MAX_ENTRY + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    head, check = raw[: len(FORMAT)], raw[len(FORMAT) : len(FORMAT) + 4]
    payload = raw[len(FORMAT) + 4 :]
    if head != FORMAT or _checksum(payload) != check:
        return None
    try:
        entry = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return entry if _well_formed(entry) else None


def _checksum(payload: bytes) -> bytes:
    """What finds an entry damaged (a disk's error, a write cut short by a crash before
    the rename reached the disk): the payload's CRC-32. It guards against accidents, not
    against another user (entries are this user's own, in a private directory); a cold
    start reads about 1 MB of entries, whose SHA-256, computed without the CPU's SHA
    instructions, was 31 M instructions of a cold check under callgrind."""
    return zlib.crc32(payload).to_bytes(4, "big")


def _well_formed(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return False
    if "values" in entry:
        return isinstance(entry["values"], dict)
    if not isinstance(entry.get("built", b""), bytes):
        return False
    documents = entry.get("documents")
    stats = entry.get("stats", {})
    return (
        isinstance(documents, list)
        and all(
            isinstance(d, tuple)
            and len(d) == 3
            and isinstance(d[0], str)
            and isinstance(d[2], bytes)
            for d in documents
        )
        and isinstance(stats, dict)
        and all(isinstance(v, tuple) and len(v) == len(STAT_FIELDS) for v in stats.values())
    )


def _current(entry: dict[str, Any], files: Sequence[Path], trusted: bool) -> bool:
    """Whether the entry was made from these files as they are now, under this code. A
    file whose stat is the one the entry noted (`_unchanged`) is not read again."""
    stats = entry.get("stats", {})
    documents = []
    for name, digest, _ in entry["documents"]:
        if name in stats and _signature(name) == stats[name]:
            documents.append((name, digest))
            continue
        try:
            data = Path(name).read_bytes()
        except OSError:
            return False
        documents.append((name, hashlib.sha256(data).hexdigest()))
    return bool(entry["key"] == _key(files, trusted, documents))


STAT_FIELDS = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
"""What a file's stat must still say for its bytes to be taken as read before. Any write
sets the change time (ctime) to the clock, and no call sets it back."""
RACY_NS = 3_000_000_000
"""A file written less than this before it was noted is always read again: a second write
within one tick of a coarse file-system clock (2 s on FAT) would leave its times as they
were (git's "racy" entries)."""


def _signature(name: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(name)
    except OSError:
        return None
    return tuple(getattr(st, field) for field in STAT_FIELDS)


def _unchanged(documents: Sequence[tuple[str, str, bytes]]) -> dict[str, tuple[int, ...]]:
    """The stat of each document file whose bytes are still those parsed (read again
    between two identical stats) and that was last written well before now (RACY_NS)."""
    noted = {}
    for name, digest, _ in documents:
        before = _signature(name)
        if before is None or max(before[-2:]) >= time.time_ns() - RACY_NS:
            continue
        try:
            data = Path(name).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == digest and _signature(name) == before:
            noted[name] = before
    return noted


def _writable(directory: Path) -> bool:
    """The cache directory, made if missing (private), when it is ours and outside every
    directory this run reads or watches."""
    real = Path(os.path.realpath(directory))
    if any(real == p or p in real.parents for p in _kept_out):
        return False
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(directory, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and _owned(st)


def _write_entry(path: Path, entry: dict[str, Any]) -> None:
    """Write an entry whole (a temporary file renamed into place), or not at all."""
    import tempfile  # only when an entry is written

    payload = marshal.dumps(entry)
    fd, temporary = tempfile.mkstemp(prefix=".rules-", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(FORMAT + _checksum(payload) + payload)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# -- loading through the cache -------------------------------------------------------------


def load_through(
    roots: Sequence[Path], files: Sequence[Path], trusted: bool, build: Callable[[bool], T]
) -> T:
    """`build(trusted)` (a slow load of `files`, found under `roots`), or, from a current
    entry, `build(True)` on the documents it holds; a slow load that succeeds leaves an
    entry for the next."""
    directory = cache_dir() if enabled() else None
    if directory is None:
        return build(trusted)
    entry_path = _entry_path(directory, roots, trusted)
    entry = _read_entry(entry_path)
    if entry is not None and _current(entry, files, trusted):
        kept = _unpickled(entry.get("built"))
        if kept is not None:
            return kept  # type: ignore[no-any-return]
        with contextlib.suppress(Exception), _replay(entry):
            return build(True)
    recorder = _Recorder()
    token = _recording.set(recorder)
    try:
        built = build(trusted)
    finally:
        _recording.reset(token)
    if recorder.usable:
        _store(entry_path, files, trusted, recorder, built)
    return built


@contextlib.contextmanager
def _replay(entry: dict[str, Any]) -> Iterator[None]:
    token = _replaying.set({name: blob for name, _, blob in entry["documents"]})
    try:
        yield
    finally:
        _replaying.reset(token)


def _store(
    path: Path, files: Sequence[Path], trusted: bool, recorder: _Recorder, built: Any
) -> None:
    """Keep what the slow load parsed, and what it built; a cache that cannot be written is
    no error."""
    documents = [(name, digest, blob) for name, (digest, blob) in recorder.documents.items()]
    key = _key(files, trusted, [(name, digest) for name, digest, _ in documents])
    with contextlib.suppress(OSError, ValueError):
        if _writable(path.parent):
            stats = _unchanged(documents)
            entry: dict[str, Any] = {"key": key, "documents": documents, "stats": stats}
            kept = _pickled(built)
            if kept is not None:
                entry["built"] = kept
            _write_entry(path, entry)


KEPT_MODULES = ("builtins", "copyreg", "pathlib")
"""What a kept rule set may name besides msrunwatch's own modules: anything else (a
compiled pattern, which would import the `regex` package) makes it unusable."""


def _pickled(built: Any) -> bytes | None:
    """What a slow load built, whole (pickle): a hit then needs neither the documents'
    replay nor the rules' building, 40 M instructions of a cold check. None when it cannot
    be kept."""
    import pickle

    try:
        return pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def _unpickled(kept: Any) -> Any:
    """What `_pickled` kept, or None (nothing kept, or it names a module outside
    KEPT_MODULES and msrunwatch's, or it fails to load: the documents are replayed)."""
    if not isinstance(kept, bytes):
        return None
    import io
    import pickle

    class Restricted(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module.split(".")[0] != "msrunwatch" and module not in KEPT_MODULES:
                raise pickle.UnpicklingError(f"{module}.{name} is not kept")
            return super().find_class(module, name)

    try:
        return Restricted(io.BytesIO(kept)).load()
    except Exception:
        return None


def package_document(path: Path) -> Any:
    """A YAML data file shipped with msrunwatch (the variable aliases), parsed, through the
    cache as a rule set is."""

    def build(trusted: bool) -> Any:
        return document(path, lambda: path.read_text(encoding="utf-8"))[0]

    return load_through([path], [path], True, build)


# -- what is worked out from rule patterns -------------------------------------------------

MAX_MEMO = 50_000
"""Values a memo keeps; past this it starts again (patterns of rule sets long gone)."""


class Memo:
    """Plain data worked out from rule patterns (the prefilter's literals and tries), kept
    between runs beside the rule sets. A value is found by its whole input (a pattern's
    text, a list of literals), and the memo holds only values of this code (its digest is
    the entry's key): no value can be stale. New values are written when the process ends."""

    def __init__(self, name: str, limit: int = MAX_MEMO) -> None:
        self.name = name
        self.limit = limit
        """Values kept; past this the memo starts again."""
        self._values: dict[str, Any] | None = None
        self._new = False

    def _known(self) -> dict[str, Any]:
        if self._values is None:
            self._values = {}
            directory = cache_dir() if enabled() else None
            if directory is not None:
                entry = _read_entry(directory / f"{self.name}.bin")
                if entry is not None and "values" in entry and entry["key"] == self._key():
                    self._values = entry["values"]
        return self._values

    @staticmethod
    def _key() -> str:
        return _code_digest().hex()

    def get(self, key: str, compute: Callable[[], T]) -> T:
        """The value for key: remembered, or computed now (and remembered)."""
        if not enabled():
            return compute()
        known = self._known()
        if key in known:
            return known[key]  # type: ignore[no-any-return]
        value = known[key] = compute()
        if not self._new:
            self._new = True
            atexit.register(self.save)
        return value

    def save(self) -> None:
        """Write the values (when some are new); a cache that cannot be written is no error."""
        directory = cache_dir() if enabled() else None
        if directory is None or not self._new or self._values is None:
            return
        self._new = False
        values = self._values if len(self._values) <= self.limit else {}
        with contextlib.suppress(OSError, ValueError):
            if _writable(directory):
                _write_entry(directory / f"{self.name}.bin", {"key": self._key(), "values": values})
