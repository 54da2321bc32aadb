"""What the headless mode is asked to do, as the command line gave it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeadlessOptions:
    """Typed options of `watch --headless`."""

    events: str | None = None
    """Write the JSON lines here (default: stdout)."""
    metrics_port: int | None = None
    """Serve Prometheus metrics on this port."""
    metrics_addr: str = "127.0.0.1"
    """Address of the metrics server: this host only unless told otherwise."""
    on_finding: str | None = None
    """Shell command run once for each error cause (the root cause, another rank's own fault)."""
    on_every_finding: bool = False
    """Run it for symptoms and victims too (the timeouts of the ranks that waited)."""
    exit_when_done: bool = False
    """Exit with triage's code once every rank ended."""
    poll: bool = False
    """Files are polled rather than watched (reported in the start event)."""
    hook_on_cause: bool = False
    """--on-finding runs once per root cause, not per finding (the cluster view: 256 nodes'
    timeouts are symptoms of one cause)."""
    publish: str | None = None
    """Write the node's facts snapshot to this directory (`<host>.facts.jsonl`)."""
