"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and offline demos.

It speaks just enough of ``POST /v1/chat/completions`` for the official client: each request
is answered by the next scripted :class:`FakeReply` (or by a responder function), and every
request is recorded so tests can count them.  Nothing here touches the network beyond the
loopback interface.

Examples
--------
>>> from ragaudit.llm.testing import FakeChatServer, FakeReply
>>> with FakeChatServer([FakeReply('{"ok": true}')]) as server:
...     import urllib.request, json
...     req = urllib.request.Request(server.base_url + "/chat/completions",
...                                  data=b'{"model": "m", "messages": []}', method="POST")
...     body = json.load(urllib.request.urlopen(req))
>>> body["choices"][0]["message"]["content"], len(server.requests)
('{"ok": true}', 1)
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MALFORMED", "FakeChatServer", "FakeReply", "RecordedRequest"]


_UNSET: Any = object()


@dataclass(frozen=True)
class FakeReply:
    """One scripted answer.

    ``content`` is the assistant message; ``status`` other than 200 sends an error body;
    ``delay`` sleeps before answering (to trip client timeouts); ``usage`` is
    ``(prompt_tokens, completion_tokens)`` or ``None`` to omit the usage block.

    Malformed replies (see :data:`MALFORMED`): ``payload`` replaces the whole JSON body,
    ``raw`` sends these bytes as the body, ``content_type`` overrides the header, and
    ``truncate`` announces more bytes than it sends and then closes the connection.
    ``finish_reason="length"`` says the reply was cut at the token cap.
    """

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: tuple[int, int] | None = (10, 5)
    payload: Any = _UNSET
    raw: bytes | None = None
    content_type: str = "application/json"
    truncate: bool = False
    finish_reason: str = "stop"


def _completion(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-bad",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "fine"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    body.update(overrides)
    return body


#: Every kind of HTTP-200 reply that is not a valid chat completion, by name.  A client must
#: treat each as a retryable server fault: never an (empty) answer, never cached.
MALFORMED: dict[str, FakeReply] = {
    "empty_choices": FakeReply(payload=_completion(choices=[])),
    "null_message": FakeReply(
        payload=_completion(choices=[{"index": 0, "message": None, "finish_reason": "stop"}])
    ),
    "null_content": FakeReply(
        payload=_completion(
            choices=[{"index": 0, "message": {"role": "assistant", "content": None}}]
        )
    ),
    "empty_content": FakeReply(
        payload=_completion(choices=[{"index": 0, "message": {"role": "assistant", "content": ""}}])
    ),
    "content_not_text": FakeReply(
        payload=_completion(choices=[{"index": 0, "message": {"role": "assistant", "content": 7}}])
    ),
    "choices_not_list": FakeReply(payload=_completion(choices="nope")),
    "choice_not_object": FakeReply(payload=_completion(choices=["nope"])),
    "no_choices_key": FakeReply(payload={"id": "x", "object": "chat.completion"}),
    "error_with_200": FakeReply(payload={"error": {"message": "upstream overloaded"}}),
    "usage_not_int": FakeReply(
        payload=_completion(usage={"prompt_tokens": "lots", "completion_tokens": 5})
    ),
    "usage_negative": FakeReply(
        payload=_completion(usage={"prompt_tokens": -3, "completion_tokens": 5})
    ),
    "json_array": FakeReply(payload=[1, 2, 3]),
    "json_string": FakeReply(payload="fine"),
    "html": FakeReply(
        raw=b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"
    ),
    "plain_text": FakeReply(raw=b"fine", content_type="text/plain"),
    "not_json": FakeReply(raw=b'{"choices": [{"message": {"content": "fi'),
    "empty_body": FakeReply(raw=b""),
    "not_utf8": FakeReply(raw=b'{"choices": "\xff\xfe\xff"}'),
    "truncated": FakeReply(raw=b'{"id": "chatcmpl-1", "choices": [{"mess', truncate=True),
}


@dataclass(frozen=True)
class RecordedRequest:
    """What the server received (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, str]]:
        """The chat messages of the request."""
        return list(self.body.get("messages", []))


Responder = Callable[[RecordedRequest], FakeReply]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) resets connections at concurrency 64

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up (timeout tests) is expected, not worth a traceback


class FakeChatServer:
    """A threaded HTTP server answering chat completions from a script.

    Parameters
    ----------
    script : iterable of FakeReply, optional
        Replies used in order, one per request.
    responder : callable, optional
        ``responder(request) -> FakeReply``, used once the script is exhausted (or alone).
        Without either, requests beyond the script get HTTP 500 "script exhausted".
    """

    def __init__(
        self, script: Iterable[FakeReply] = (), responder: Responder | None = None
    ) -> None:
        self._script = list(script)
        self._responder = responder
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._stopped = False
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def respond_with(self, responder: Responder) -> None:
        """Answer every request past the script with ``responder(request)``."""
        with self._lock:
            self._responder = responder

    def add(self, *replies: FakeReply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    def _next_reply(self, request: RecordedRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.pop(0)
        if self._responder is not None:
            return self._responder(request)
        return FakeReply(status=500, content="script exhausted")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stalls

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                request = RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                reply = server._next_reply(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.raw is not None or reply.payload is not _UNSET:
                    body_bytes = (
                        reply.raw
                        if reply.raw is not None
                        else json.dumps(reply.payload).encode("utf-8")
                    )
                    self._send_raw(
                        reply.status,
                        body_bytes,
                        {"content-type": reply.content_type, **reply.headers},
                        truncate=reply.truncate,
                    )
                    return
                if reply.status != 200:
                    payload: dict[str, Any] = {
                        "error": {"message": reply.content or "scripted error", "type": "fake"}
                    }
                else:
                    payload = {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": reply.finish_reason,
                            }
                        ],
                    }
                    if reply.usage is not None:
                        payload["usage"] = {
                            "prompt_tokens": reply.usage[0],
                            "completion_tokens": reply.usage[1],
                            "total_tokens": reply.usage[0] + reply.usage[1],
                        }
                self._send(reply.status, payload, reply.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self._send_raw(status, data, {"content-type": "application/json", **headers})

            def _send_raw(
                self, status: int, data: bytes, headers: dict[str, str], truncate: bool = False
            ) -> None:
                try:
                    self.send_response(status)
                    # a truncated body promises more than it sends, then hangs up
                    length = len(data) + (1000 if truncate else 0)
                    self.send_header("content-length", str(length))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    if truncate:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (a timeout test); nothing to report

        return Handler

    def start(self) -> FakeChatServer:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open keep-alive connections and release the port (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
