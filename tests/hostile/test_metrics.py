"""The metrics server: idle connections cannot pile up threads, a silent one is dropped,
scrapes still work, and it listens on this host only unless told otherwise."""

from __future__ import annotations

import socket
import threading
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from msrunwatch.cli import _parser
from msrunwatch.live.headless import metrics
from msrunwatch.live.headless.options import HeadlessOptions


def test_idle_connections_do_not_each_hold_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "CONNECTION_TIMEOUT_S", 0.5, raising=False)
    server, url = metrics.serve(CollectorRegistry(), "127.0.0.1", 0)
    port = server.server_port
    before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
    try:
        body = b""
        for _ in range(50):  # served once a thread is free (idle ones time out)
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    body = response.read()
                break
            except OSError:
                continue
        assert threading.active_count() - before <= 8
        assert body is not None
    finally:
        for conn in idle:
            conn.close()
        server.shutdown()
        server.server_close()


def test_a_silent_connection_is_closed_by_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "CONNECTION_TIMEOUT_S", 0.3, raising=False)
    server, _ = metrics.serve(CollectorRegistry(), "127.0.0.1", 0)
    conn = socket.create_connection(("127.0.0.1", server.server_port))
    conn.settimeout(30)
    try:
        assert conn.recv(1024) == b""  # the server hung up (before: it waited forever)
    finally:
        conn.close()
        server.shutdown()
        server.server_close()


def test_metrics_listen_on_this_host_by_default(tmp_path: Path) -> None:
    args = _parser().parse_args(["watch", str(tmp_path), "--headless", "--metrics-port", "0"])
    assert args.metrics_addr == "127.0.0.1"
    assert HeadlessOptions().metrics_addr == "127.0.0.1"
