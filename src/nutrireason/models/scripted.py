"""A scripted backend for tests, demos and harness benchmarks: no model, full control.

Answers come from a table (prompt text -> answer), a function of the request, or a built-in
behaviour; latency, errors and malformed output are configurable and seeded.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

from nutrireason.models.base import Backend
from nutrireason.models.errors import ModelError
from nutrireason.models.types import ALL_SETTINGS, ChatRequest, ModelResponse, Usage

Responder = Callable[[ChatRequest], str]

BUILTIN: dict[str, Responder] = {
    "echo": lambda request: request.messages[-1].text(),
    "yes": lambda request: "Yes",
    "no": lambda request: "No",
    "none": lambda request: _refuse(),
}


def _refuse() -> str:
    raise ModelError("unsupported", "scripted/none answers nothing: it stands in for the model "
                     "of methods that need none (oracle, fam-reference)")
_REGISTERED: dict[str, Responder] = {}


def register(name: str, responder: Responder) -> None:
    """Make ``scripted/<name>`` answer with ``responder`` (tests register their own)."""
    _REGISTERED[name] = responder


class ScriptedBackend(Backend):
    """Answers without a model.

    ``latency`` seconds per call; ``error_rate`` share of calls failing with ``error_kind``;
    ``malformed_rate`` share of answers replaced by ``"<<malformed>>"``; ``fail_first`` makes the
    first N calls for each distinct request fail (to exercise retries deterministically).
    Every generation setting is accepted and ignored (there is no model to pass it to).
    """

    provider = "scripted"
    supported_settings = ALL_SETTINGS

    def __init__(self, name: str = "echo", *, table: dict[str, str] | None = None,
                 responder: Responder | None = None, latency: float = 0.0,
                 error_rate: float = 0.0, error_kind: str = "server",
                 malformed_rate: float = 0.0, fail_first: int = 0, seed: int = 0) -> None:
        self.model = name
        self.responder = responder or _REGISTERED.get(name) or BUILTIN.get(name)
        self.table = table
        if self.responder is None and table is None:
            raise ModelError("not_found", f"no scripted behaviour named {name!r}; built-ins: "
                             f"{sorted(BUILTIN)}")
        self.latency = latency
        self.error_rate = error_rate
        self.error_kind = error_kind
        self.malformed_rate = malformed_rate
        self.fail_first = fail_first
        self.rng = random.Random(seed)
        self.calls = 0
        self._failures: dict[str, int] = {}

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model,
                "malformed_rate": self.malformed_rate}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {"latency": self.latency, "error_rate": self.error_rate,
                                  "error_kind": self.error_kind, "fail_first": self.fail_first}

    async def generate(self, request: ChatRequest) -> ModelResponse:
        self.calls += 1
        started = time.perf_counter()
        if self.latency:
            await asyncio.sleep(self.latency)
        self._maybe_fail(request)
        text = self._answer(request)
        if self.malformed_rate and self.rng.random() < self.malformed_rate:
            text = "<<malformed>>"
        prompt_tokens = sum(len(m.text().split()) for m in request.messages)
        return ModelResponse(text=text, model=self.model, finish_reason="stop",
                             usage=Usage(prompt_tokens=prompt_tokens,
                                         completion_tokens=len(text.split())),
                             latency_s=time.perf_counter() - started)

    def _maybe_fail(self, request: ChatRequest) -> None:
        if self.fail_first:
            key = request.fingerprint()
            seen = self._failures.get(key, 0)
            if seen < self.fail_first:
                self._failures[key] = seen + 1
                raise ModelError(self.error_kind, f"scripted failure {seen + 1}", status=500)
        if self.error_rate and self.rng.random() < self.error_rate:
            raise ModelError(self.error_kind, "scripted failure", status=500)

    def _answer(self, request: ChatRequest) -> str:
        if self.table is not None:
            prompt = request.messages[-1].text()
            if prompt in self.table:
                return self.table[prompt]
            if self.responder is None:
                raise ModelError("bad_request", f"scripted table has no answer for {prompt!r:.80}")
        return self.responder(request)
