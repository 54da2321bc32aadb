"""Where the central view finds the nodes: `--cluster SOURCE...`.

A SOURCE is a URL of a watcher's `/facts`, a `host:port` (its metrics port), a directory
its watchers `--publish` to (every `*.facts.jsonl` in it is a node, looked for again at
each poll), or a file listing watchers one per line (`host:port` or a URL; `#` starts a
comment): what `scontrol show hostnames` or `kubectl get pods` give, with the port added.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from msrunwatch.core.errors import UsageError
from msrunwatch.core.fileio import open_regular
from msrunwatch.drivers.cluster import FACTS_NAMES, facts_files

MAX_LIST_BYTES = 4 << 20
"""Bytes read of a file listing watchers."""
MAX_FEEDS = 1 << 14
"""Nodes followed at most (16,384: 131,072 ranks at 8 per node)."""
_HOST_PORT = re.compile(
    r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9._-]{0,252}):(?P<port>\d{1,5})$"
)


@dataclass(frozen=True)
class Feed:
    """One node's snapshot, where it comes from."""

    label: str
    """How the user named it (`node-3:9464`, a URL, a file's path)."""
    url: str | None = None
    path: str | None = None
    host: str | None = None
    """The host the user named (a URL's or `host:port`'s), matched against the scheduler's
    table when the node never answered."""


def url_feed(text: str) -> Feed | None:
    """A URL (`/facts` added to a bare one) or `host:port`; None when it is neither."""
    if text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        if not parts.hostname:
            return None
        url = text if parts.path not in ("", "/") else f"{parts.scheme}://{parts.netloc}/facts"
        return Feed(text, url=url, host=parts.hostname)
    m = _HOST_PORT.match(text)
    if m is None or not 0 < int(m["port"]) < 65536:
        return None
    return Feed(text, url=f"http://{text}/facts", host=m["host"].strip("[]"))


def _listed(path: str) -> tuple[list[Feed], list[str]]:
    """The watchers a list file names; a line that is none is a warning."""
    try:
        with open(open_regular(path), "rb") as fh:
            data = fh.read(MAX_LIST_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--cluster {path}: cannot read: {exc.strerror or exc}") from None
    warnings = []
    if len(data) > MAX_LIST_BYTES:
        warnings.append(f"{path}: only its first {MAX_LIST_BYTES >> 20} MiB read")
    feeds = []
    for number, raw in enumerate(data[:MAX_LIST_BYTES].decode("utf-8", "replace").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        feed = url_feed(line)
        if feed is None:
            warnings.append(f"{path}:{number}: not host:port or a URL: {line[:80]!r}")
        else:
            feeds.append(feed)
    return feeds, warnings


class Sources:
    """The feeds the SOURCE arguments name, directories listed again at each poll."""

    def __init__(self, specs: Sequence[str]) -> None:
        self.specs = list(specs)
        self._fixed: list[Feed] = []
        self._dirs: list[str] = []
        self.warnings: list[str] = []
        for spec in specs:
            self._add(spec)

    def _add(self, spec: str) -> None:
        if os.path.isdir(spec):
            self._dirs.append(spec)
        elif os.path.isfile(spec):
            if facts_files(spec) is not None:
                self._fixed.append(Feed(spec, path=spec))
            else:
                feeds, warnings = _listed(spec)
                if not feeds:
                    raise UsageError(f"--cluster {spec}: names no watcher (host:port or URL lines)")
                self._fixed.extend(feeds)
                self.warnings.extend(warnings)
        else:
            feed = url_feed(spec)
            if feed is None:
                raise UsageError(
                    f"--cluster {spec}: not a directory of snapshots, a file listing watchers, "
                    "host:port or a URL"
                )
            self._fixed.append(feed)

    def feeds(self) -> tuple[list[Feed], list[str]]:
        """Every feed now (a directory's new snapshot files included), and what could not
        be listed."""
        out = list(self._fixed)
        problems = []
        for folder in self._dirs:
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                problems.append(f"cannot list {folder}: {exc.strerror or exc}")
                continue
            for name in names:
                if name.endswith(FACTS_NAMES) and not name.startswith("."):
                    path = str(Path(folder) / name)
                    out.append(Feed(path, path=path))
        if len(out) > MAX_FEEDS:
            problems.append(f"{len(out):,} snapshots: only the first {MAX_FEEDS:,} are followed")
            out = out[:MAX_FEEDS]
        unique = list({f.label: f for f in out}.values())
        return unique, problems
