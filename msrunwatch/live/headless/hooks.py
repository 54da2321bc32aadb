"""Run --on-finding's command once per new error finding, off the tick thread."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import threading
from dataclasses import replace
from typing import Any, TextIO

from msrunwatch.core.sanitize import json_document, json_line, terminal
from msrunwatch.judge.model import Finding, Report, RootCause
from msrunwatch.report import fmt
from msrunwatch.rules.vocab import Severity

HOOK_TIMEOUT_S = 60.0
"""An --on-finding command running longer than this is killed."""
HOOK_WORKERS = 4
MAX_ENV_BYTES = 8192
"""Bytes of UTF-8 an MSRUNWATCH_* value may have; the event on stdin is never cut."""


class Hook:
    """Runs --on-finding's command per new error finding, off the tick thread."""

    def __init__(self, command: str, err: TextIO, timeout_s: float = HOOK_TIMEOUT_S) -> None:
        self.command, self.err, self.timeout_s = command, err, timeout_s
        self._pool = concurrent.futures.ThreadPoolExecutor(
            HOOK_WORKERS, thread_name_prefix="msrunwatch-hook"
        )
        self._ran: set[tuple[str, str]] = set()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.futures: list[concurrent.futures.Future[None]] = []

    def submit(self, finding: Finding, event: dict[str, Any]) -> None:
        """Queue the command for an error finding not seen before, its event on stdin."""
        key = (finding.rule, finding.fingerprint)
        if finding.severity is not Severity.ERROR or key in self._ran:
            return
        self._ran.add(key)
        data = (json_line(json_document(json.dumps(event, ensure_ascii=False))) + "\n").encode()
        self.futures.append(self._pool.submit(self._run, finding.rule, data, _env(finding)))

    def _run(self, rule: str, data: bytes, env: dict[str, str]) -> None:
        """Run the command once; whatever goes wrong is a warning (a pool thread's exception
        would vanish into its future)."""
        try:
            proc = self._spawn(rule, env)
            if proc is None:
                return
            with self._lock:
                self._running.add(proc)
            try:
                self._communicate(rule, proc, data)
            finally:
                with self._lock:
                    self._running.discard(proc)
        except Exception as exc:  # every failure is reported, none escapes
            self._warn(rule, f"failed: {exc}")

    def _spawn(self, rule: str, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
        """Start the command in its own session, so a timeout kills all it started."""
        try:
            return subprocess.Popen(
                self.command,
                shell=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            self._warn(rule, f"cannot start: {getattr(exc, 'strerror', None) or exc}")
            return None

    def _communicate(self, rule: str, proc: subprocess.Popen[bytes], data: bytes) -> None:
        """Feed the event, wait up to the timeout, and warn about a failure."""
        try:
            _, stderr = proc.communicate(data, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            self._warn(rule, f"killed after {self.timeout_s:g} s")
            return
        if proc.returncode:
            last = stderr.decode(errors="replace").strip().splitlines()[-1:]
            why = f"exit code {proc.returncode}" if proc.returncode > 0 else "killed"
            self._warn(rule, why + (f": {last[0][:200]}" if last else ""))

    def _warn(self, rule: str, why: str) -> None:
        with self._lock:
            try:
                print(f"msrunwatch: warning: --on-finding for {rule}: {why}", file=self.err)
                self.err.flush()
            except (OSError, ValueError):
                pass

    def close(self, wait: bool) -> None:
        """Wait for the commands (each bounded by the timeout), or stop them now."""
        if not wait:
            with self._lock:
                running = list(self._running)
            for proc in running:
                _kill(proc)
        self._pool.shutdown(wait=wait, cancel_futures=not wait)


def cause_finding(report: Report, cause: RootCause) -> Finding:
    """The finding a root cause is, for the hook that runs once per cause: the report's
    root-cause finding of that rule, else one made from the cause (a run-level cause)."""
    for f in report.findings:
        if f.role == "root-cause" and f.rule == cause.rule:
            return replace(f, fingerprint=f"{f.fingerprint}|ranks {cause.ranks}")
    return Finding(
        rule=cause.rule,
        title=cause.category,
        category=cause.category,
        severity=Severity.ERROR,
        role="root-cause",
        message=cause.message,
        ranks=cause.ranks,
        occurrences=(),
        count=1,
        fingerprint=f"{cause.rule}|{cause.category}|ranks {cause.ranks}",
    )


def _env(finding: Finding) -> dict[str, str]:
    """The process environment plus the finding's MSRUNWATCH_* variables. MSRUNWATCH_MESSAGE
    is the message as every text view shows it (`1.2 GiB`), for a person reading a chat;
    MSRUNWATCH_MESSAGE_RAW is it as the rule wrote it and the event's JSON keeps it
    (`1342177280 B`). Each is made safe to pass: the kernel refuses a NUL in the environment
    and a string over 128 KiB, and either would stop the command from starting at all (the
    full event is on its stdin)."""
    ranks = ",".join(str(n) for n in finding.ranks)
    return {
        **os.environ,
        "MSRUNWATCH_RULE": env_value(finding.rule),
        "MSRUNWATCH_CATEGORY": env_value(finding.category),
        "MSRUNWATCH_SEVERITY": finding.severity.value,
        "MSRUNWATCH_RANKS": env_value(ranks),
        "MSRUNWATCH_MESSAGE": env_value(fmt.human_sizes(finding.message)),
        "MSRUNWATCH_MESSAGE_RAW": env_value(finding.message),
    }


def env_value(text: str) -> str:
    """Log text as an environment value: NULs removed, other controls shown visibly, at most
    MAX_ENV_BYTES of UTF-8 (cut on a character boundary, marked with `...`)."""
    value = terminal(text.replace("\0", ""))
    raw = value.encode("utf-8", "surrogateescape")
    if len(raw) <= MAX_ENV_BYTES:
        return value
    return raw[: MAX_ENV_BYTES - 3].decode("utf-8", "ignore") + "..."


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group (it has its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
