"""A small HTTP server for the metrics that slow or idle clients cannot starve.

A thread per connection (even a bounded pool of them) is held by whoever connects and
sends slowly: 20 clients sending a byte every 4 s kept every thread, never silent long
enough to be dropped, and no scrape got through. So one thread serves every connection
through a selector and no connection ever holds it: a request is gathered as its bytes
come (whole within `timeout_s` of the connection, else it is closed), answered by the WSGI
app at once (a scrape builds its text in milliseconds), and the answer is sent as the
client takes it (whole within REPLY_TIMEOUT_S). At most MAX_CONNECTIONS are open; one
more closes the oldest that has not sent its request yet, so a scraper, which sends its
request at once, always gets in. Every answer closes its connection.
"""

from __future__ import annotations

import contextlib
import io
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

MAX_CONNECTIONS = 256
"""Connections open at once (a socket each, no thread)."""
MAX_REQUEST = 16 << 10
"""Bytes of request line and headers; more is a 431 and the connection closed."""
REPLY_TIMEOUT_S = 30.0
"""An answer the client has not taken in this long is dropped."""
POLL_S = 0.1
"""How often deadlines and a shutdown are looked at."""

App = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass
class _Connection:
    sock: socket.socket
    deadline: float
    request: bytearray = field(default_factory=bytearray)
    reply: memoryview | None = None
    """Set once the request is whole: what is left to send."""


class Server:
    """Serves `app` on (addr, port) from one daemon thread; `shutdown()` then
    `server_close()` stop it (the names of socketserver's, which it replaces)."""

    def __init__(self, app: App, addr: str, port: int, timeout_s: Callable[[], float]) -> None:
        infos = socket.getaddrinfo(addr or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)  # fmt: skip
        family, _, _, _, sockaddr = infos[0]
        self.app, self.timeout_s = app, timeout_s
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind(sockaddr)
            self.listener.listen(64)
        except OSError:
            self.listener.close()
            raise
        self.listener.setblocking(False)
        self.host = str(sockaddr[0])
        self.server_port = int(self.listener.getsockname()[1])
        self._open: dict[int, _Connection] = {}
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.listener, selectors.EVENT_READ, None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="msrunwatch-metrics", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        self._stop.set()
        self._thread.join()

    def server_close(self) -> None:
        for conn in list(self._open.values()):
            self._close(conn)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(self.listener)
        self.listener.close()
        self._selector.close()

    # -- the loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, events in self._selector.select(POLL_S):
                try:
                    self._ready(key, events)
                except Exception:  # one connection's trouble never stops the others
                    if key.data is not None:
                        self._close(key.data)
            self._expire(time.monotonic())

    def _ready(self, key: selectors.SelectorKey, events: int) -> None:
        if key.data is None:
            self._accept()
        elif events & selectors.EVENT_READ:
            self._receive(key.data)
        elif events & selectors.EVENT_WRITE:
            self._send(key.data)

    def _accept(self) -> None:
        for _ in range(64):  # what is waiting, not more: deadlines are looked at too
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: those waiting wait
                return
            if len(self._open) >= MAX_CONNECTIONS and not self._evict():
                sock.close()
                continue
            sock.setblocking(False)
            conn = _Connection(sock, time.monotonic() + self.timeout_s())
            self._open[sock.fileno()] = conn
            self._selector.register(sock, selectors.EVENT_READ, conn)

    def _evict(self) -> bool:
        """Close the oldest connection still sending its request, to make room."""
        waiting = [c for c in self._open.values() if c.reply is None]
        if not waiting:
            return False
        self._close(min(waiting, key=lambda c: c.deadline))
        return True

    def _receive(self, conn: _Connection) -> None:
        try:
            data = conn.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            self._close(conn)
            return
        conn.request += data
        end = _header_end(conn.request)
        if end < 0 and len(conn.request) <= MAX_REQUEST:
            return
        if end < 0 or end > MAX_REQUEST:
            reply = _plain(431, "Request Header Fields Too Large")
        else:
            reply = self._answer(bytes(conn.request[:end]))
        conn.reply = memoryview(reply)
        conn.deadline = time.monotonic() + REPLY_TIMEOUT_S
        self._selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
        self._send(conn)

    def _send(self, conn: _Connection) -> None:
        assert conn.reply is not None
        try:
            sent = conn.sock.send(conn.reply)
        except (BlockingIOError, InterruptedError):
            return
        conn.reply = conn.reply[sent:]
        if not conn.reply:
            self._close(conn)

    def _expire(self, now: float) -> None:
        for conn in [c for c in self._open.values() if c.deadline <= now]:
            self._close(conn)

    def _close(self, conn: _Connection) -> None:
        self._open.pop(conn.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(conn.sock)
        conn.sock.close()

    # -- HTTP

    def _answer(self, head: bytes) -> bytes:
        """The whole response to a request's head (its body, if any, is not read)."""
        lines = head.decode("latin-1").split("\n")
        parts = lines[0].strip().split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return _plain(400, "Bad Request")
        method, target, protocol = parts
        path, _, query = target.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "PATH_INFO": unquote(path),
            "QUERY_STRING": query,
            "SERVER_NAME": self.host,
            "SERVER_PORT": str(self.server_port),
            "SERVER_PROTOCOL": protocol,
            "wsgi.input": io.BytesIO(),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": "http",
        }
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                environ["HTTP_" + name.strip().upper().replace("-", "_")] = value.strip()
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
            started[:] = [status, headers]

        body = b"".join(self.app(environ, start_response))
        status, headers = started
        return _response(status, headers, body)


def _header_end(data: bytearray) -> int:
    """Where the request's head ends (after its blank line), or -1."""
    for mark in (b"\r\n\r\n", b"\n\n"):
        at = data.find(mark)
        if at >= 0:
            return at + len(mark)
    return -1


def _response(status: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    fields = [(k, v) for k, v in headers if k.lower() not in ("content-length", "connection")]
    fields += [("Content-Length", str(len(body))), ("Connection", "close")]
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n"
    return head.encode("latin-1") + body


def _plain(code: int, reason: str) -> bytes:
    text = f"{code} {reason}\n".encode()
    return _response(f"{code} {reason}", [("Content-Type", "text/plain")], text)
