"""The metrics server: idle connections cannot pile up threads, a silent one is dropped,
scrapes still work, and it listens on this host only unless told otherwise."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from msrunwatch.commands.parser import build
from msrunwatch.live.headless import metrics
from msrunwatch.live.headless.options import HeadlessOptions
from tests.support import HANG_S


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
    args = build().parse_args(["watch", str(tmp_path), "--headless", "--metrics-port", "0"])
    assert args.metrics_addr == "127.0.0.1"
    assert HeadlessOptions().metrics_addr == "127.0.0.1"


SCRAPE_S = 30.0
"""How long a scrape may wait for its answer: a server whose threads slow clients hold never
answers it, however long; a free one answers in milliseconds, in seconds on a busy machine."""


def scrape(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=SCRAPE_S) as response:
            return b"msrunwatch_files" in response.read()
    except OSError:
        return False


def test_slow_clients_do_not_starve_scrapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21, defect 7: 20 clients sending one byte every 4 s (here every 0.2 s, against
    a 1 s limit: never silent that long) held every thread of the old server, and no scrape
    got through for as long as they went on."""
    from msrunwatch.live.headless.metrics import RunCollector

    monkeypatch.setattr(metrics, "CONNECTION_TIMEOUT_S", 1.0, raising=False)
    registry = CollectorRegistry()
    registry.register(RunCollector(lambda: 0.0))
    server, url = metrics.serve(registry, "127.0.0.1", 0)
    stop = threading.Event()
    dribbling: set[int] = set()

    def dribble() -> None:
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: yes\r\n" * 50
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", server.server_port)) as conn:
                    for byte in request:
                        if stop.wait(0.2):
                            return
                        conn.send(bytes([byte]))
                        dribbling.add(threading.get_ident())
            except OSError:
                continue  # closed by the server: connect again, as an attacker would

    slow = [threading.Thread(target=dribble, daemon=True) for _ in range(20)]
    for thread in slow:
        thread.start()
    try:
        deadline = time.monotonic() + HANG_S  # every slow client connected and dribbling
        while len(dribbling) < len(slow):  # (a fixed 0.5 s was not enough on a busy machine)
            assert time.monotonic() < deadline, f"{len(dribbling)} of {len(slow)} clients began"
            stop.wait(0.05)
        assert [scrape(url) for _ in range(5)] == [True] * 5
    finally:
        stop.set()
        for thread in slow:
            thread.join()
        server.shutdown()
        server.server_close()


def test_a_flood_of_idle_connections_does_not_keep_a_scrape_out() -> None:
    server, url = metrics.serve(CollectorRegistry(), "127.0.0.1", 0)
    idle = []
    try:
        port = server.server_port  # more connections than the server keeps open:
        idle.extend(socket.create_connection(("127.0.0.1", port)) for _ in range(300))
        with urllib.request.urlopen(url, timeout=SCRAPE_S) as response:
            assert response.status == 200
    finally:
        for conn in idle:
            conn.close()
        server.shutdown()
        server.server_close()
