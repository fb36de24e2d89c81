"""A light OpenAI-compatible chat server for throughput benchmarks: asyncio, HTTP/1.1 with
keep-alive, one fixed answer after a fixed latency, on 127.0.0.1 only.

It runs in its own process (so the benchmark's client and the server do not share one
interpreter) and stops by itself after ``lifetime`` seconds. The tests' fake server
(``tests/models/fake_openai.py``, one thread per connection, faults, request log) is for
correctness; this one only answers, as fast as asyncio allows.

    servers = LoopbackServers(count=4, latency=0.2).start()
    ... servers.urls ...; servers.requests() -> requests answered per server
    servers.close()
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import socket
import time
from typing import Any


def _reply(answer: str) -> bytes:
    body = json.dumps({
        "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
        "model": "loopback",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": answer}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()
    head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode()
    return head + body


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                  reply: bytes, latency: float, counts: list[int], index: int) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            await asyncio.sleep(latency)
            counts[index] += 1
            writer.write(reply)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.CancelledError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(sockets: list[socket.socket], latency: float, lifetime: float,
                 answer: str, counts_out: Any) -> None:
    reply = _reply(answer)
    counts = [0] * len(sockets)
    servers = []
    for index, sock in enumerate(sockets):
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         index: int = index) -> None:
            await _handle(reader, writer, reply, latency, counts, index)
        servers.append(await asyncio.start_server(handle, sock=sock, backlog=4096))
    deadline = time.monotonic() + lifetime
    while time.monotonic() < deadline and not counts_out.stop.is_set():
        await asyncio.sleep(0.05)
        for index, count in enumerate(counts):
            counts_out.counts[index] = count
    for server in servers:
        server.close()


class _Shared:
    def __init__(self, count: int) -> None:
        self.counts = multiprocessing.Array("q", count)
        self.stop = multiprocessing.Event()


def _main(sockets: list[socket.socket], latency: float, lifetime: float, answer: str,
          shared: _Shared) -> None:
    asyncio.run(_serve(sockets, latency, lifetime, answer, shared))


class LoopbackServers:
    """``count`` servers in one child process, each on its own 127.0.0.1 port."""

    def __init__(self, count: int = 4, latency: float = 0.2, lifetime: float = 600.0,
                 answer: str = "No") -> None:
        self.sockets = []
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen(4096)
            self.sockets.append(sock)
        self.urls = [f"http://127.0.0.1:{s.getsockname()[1]}/v1" for s in self.sockets]
        self.shared = _Shared(count)
        self.process = multiprocessing.get_context("fork").Process(
            target=_main, args=(self.sockets, latency, lifetime, answer, self.shared),
            daemon=True)

    def start(self) -> LoopbackServers:
        self.process.start()
        return self

    def requests(self) -> list[int]:
        """Requests answered per server (updated every 50 ms)."""
        time.sleep(0.1)
        return list(self.shared.counts)

    def close(self) -> None:
        self.shared.stop.set()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
        for sock in self.sockets:
            sock.close()
