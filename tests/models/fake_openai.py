"""A small OpenAI-compatible chat server for tests: real HTTP on 127.0.0.1, standard library only.

Usage::

    with FakeOpenAI() as server:                       # default answer: echo the last user text
        backend = OpenAICompatBackend("m", base_url=server.url, provider="openai-compatible")
        server.push(("status", 429, {"Retry-After": "0.05"}), ("status", 500))
        ...
        assert "temperature" not in server.requests[-1]

API (all a test needs):

- ``FakeOpenAI(answer=None, *, lifetime=120.0)``: ``answer(body)`` makes the reply from
  the request JSON: the content as a string, or a dict ``{"content", "reasoning_content",
  "finish_reason", "reasoning_tokens"}`` for a reasoning model's reply (a vLLM-style separate
  reasoning field, ``finish_reason: "length"`` for a reply cut off, and
  ``usage.completion_tokens_details.reasoning_tokens``); ``lifetime`` seconds after start the
  server shuts itself down, so a crashed test never leaves it running. Use it as a context
  manager (or call ``start()``/``close()``).
- ``url``: the base URL to hand to a client, ``http://127.0.0.1:<port>/v1``.
- ``push(*faults)``: queue faults; each request to ``POST /v1/chat/completions`` consumes one:

  ``("status", code)``, ``("status", code, {header: value})`` or
  ``("status", code, {header: value}, message)``
      answer with that HTTP status, an OpenAI-style error body (``message`` in it, if given)
      and the headers;
  ``("delay", seconds)``
      wait, then answer normally (to trigger client timeouts);
  ``("truncated",)``
      half a JSON body, sent with ``content-type: application/json``;
  ``("no_choices",)``
      a 200 chat.completion whose ``choices`` is an empty list;
  ``("reject_param", name)``
      not queued: from now on every request that carries ``name`` gets a 400 naming it, the
      way OpenAI rejects an unsupported parameter (see also ``reject_param``).

- ``reject_param(name)``: as the fault above.
- ``requests``: every request body received (parsed JSON), in order; ``headers``: their
  headers, names lower-cased.

Only ``POST /v1/chat/completions`` exists; anything else gets a 404 in OpenAI's error shape.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], "str | dict[str, Any]"]
Fault = tuple[Any, ...]
FAULTS = ("status", "delay", "truncated", "no_choices", "reject_param")


def echo(body: dict[str, Any]) -> str:
    """The text of the last user message (text parts joined by newlines)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, str):
                return content
            return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return ""


def _words(value: Any) -> int:
    return len(json.dumps(value).split()) if not isinstance(value, str) else len(value.split())


class FakeOpenAI:
    """An OpenAI-compatible ``/v1/chat/completions`` server with scripted faults."""

    def __init__(self, answer: Answer | None = None, *, lifetime: float = 120.0) -> None:
        self.answer = answer or echo
        self.lifetime = lifetime
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.rejected: set[str] = set()
        self._faults: collections.deque[Fault] = collections.deque()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()
        return self

    def close(self) -> None:
        """Stop serving (idempotent); a request still waiting on a delay is released."""
        self._stopped.set()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def push(self, *faults: Fault) -> None:
        """Queue faults, one consumed per request (``reject_param`` persists instead)."""
        for fault in faults:
            if not fault or fault[0] not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; expected one of {FAULTS}")
            if fault[0] == "reject_param":
                self.reject_param(fault[1])
            else:
                with self._lock:
                    self._faults.append(fault)

    def reject_param(self, name: str) -> None:
        """Answer 400 to every later request that carries ``name``."""
        with self._lock:
            self.rejected.add(name)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # -- responses ---------------------------------------------------------------------------

    def completion(self, body: dict[str, Any], reply: str | dict[str, Any]) -> dict[str, Any]:
        reply = {"content": reply} if isinstance(reply, str) else dict(reply)
        text = reply.get("content") or ""
        reasoning = reply.get("reasoning_content")
        prompt_tokens = sum(_words(m.get("content", "")) for m in body.get("messages", []))
        thinking = reply.get("reasoning_tokens")
        completion_tokens = len(text.split()) + (thinking or len((reasoning or "").split()))
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens,
                                 "completion_tokens": completion_tokens,
                                 "total_tokens": prompt_tokens + completion_tokens}
        if thinking is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": thinking}
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": reply.get("finish_reason", "stop"),
                         "message": message}],
            "usage": usage,
        }


def _error_body(message: str, kind: str, param: str | None = None,
                code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            pass  # keep test output clean

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None,
                  content_type: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode("utf-8"), headers)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            self._json(404, _error_body(f"no route GET {self.path}", "invalid_request_error"))

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._json(404, _error_body(f"no route POST {self.path}",
                                            "invalid_request_error"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, _error_body("request body is not JSON", "invalid_request_error"))
                return
            with fake._lock:
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                rejected = sorted(fake.rejected & set(body))
            if rejected:
                param = rejected[0]
                self._json(400, _error_body(
                    f"Unsupported parameter: '{param}' is not supported with this model.",
                    "invalid_request_error", param=param, code="unsupported_parameter"))
                return
            fault = fake._next_fault()
            if fault is not None:
                if fault[0] == "status":
                    status = int(fault[1])
                    headers = fault[2] if len(fault) > 2 else None
                    message = fault[3] if len(fault) > 3 else f"fake error {status}"
                    kind = {429: "rate_limit_error", 401: "invalid_request_error"}.get(
                        status, "server_error" if status >= 500 else "invalid_request_error")
                    self._json(status, _error_body(message, kind), headers)
                    return
                if fault[0] == "delay":
                    if fake._stopped.wait(float(fault[1])):
                        return
                elif fault[0] == "truncated":
                    payload = json.dumps(fake.completion(body, fake.answer(body))).encode()
                    self._send(200, payload[: len(payload) // 2])
                    return
                elif fault[0] == "no_choices":
                    data = fake.completion(body, "")
                    data["choices"] = []
                    self._json(200, data)
                    return
            self._json(200, fake.completion(body, fake.answer(body)))

    return Handler
