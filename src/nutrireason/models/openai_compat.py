"""OpenAI and OpenAI-compatible chat backends (vLLM, Ollama, llama.cpp server) via ``openai``.

The SDK never retries on its own (``max_retries=0``): retries belong to the run engine
(:mod:`nutrireason.models.retry`), so every failure comes back as a classified
:class:`~nutrireason.models.errors.ModelError`. Three parameter fallbacks follow FAM-Bench
(Appendix J): when a provider rejects ``temperature`` or ``max_tokens`` the field is dropped;
when it rejects ``response_format`` the field is dropped and the JSON contract is carried by a
system instruction alone. A dropped parameter stays dropped for the backend's lifetime.

``openai-compatible/<model>@<url>,<url>,...`` puts several servers of one model behind one
backend: each request goes to the endpoint with the fewest requests in flight (ties: the first
listed). The endpoints are not part of the model's identity, so moving a server keeps its cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import json
import math
import os
import time
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend
from nutrireason.models.errors import ErrorKind, MissingDependency, ModelError
from nutrireason.models.settings import check_settings
from nutrireason.models.types import (
    BASIC_SETTINGS,
    ChatRequest,
    Message,
    ModelResponse,
    TextPart,
    Usage,
)

FALLBACK_PARAMS = ("temperature", "max_tokens", "response_format")
OPENAI_PARAMS = ("top_p", "presence_penalty", "frequency_penalty")
# Sampling settings outside OpenAI's API, sent in the body for vLLM and llama.cpp servers.
EXTRA_BODY_PARAMS = ("top_k", "min_p", "repeat_penalty")
OPENAI_SETTINGS = BASIC_SETTINGS | frozenset(OPENAI_PARAMS)
COMPATIBLE_SETTINGS = OPENAI_SETTINGS | frozenset(EXTRA_BODY_PARAMS)
PROPS_TIMEOUT_S = 2.0
JSON_INSTRUCTION = "Respond with a single JSON object and nothing else."
PROVIDERS = ("openai", "openai-compatible")
LOCAL_API_KEY = "not-needed"
_MAX_MESSAGE = 1000


class Endpoint:
    """One server of a backend: its URL, its client (one per event loop) and request counts."""

    def __init__(self, url: str | None, new_client: Callable[[str | None], Any]) -> None:
        self._url_arg = url  # None: the SDK's choice (OPENAI_BASE_URL, then OpenAI's own)
        self._new_client = new_client
        self.client = new_client(url)
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.url = url or str(self.client.base_url).rstrip("/")
        self.in_flight = 0
        self.requests = 0
        self.errors = 0

    def loop_client(self) -> Any:
        """The client for the running event loop.

        An async HTTP client's connections belong to the loop that opened them; a backend used
        from a second ``asyncio.run`` gets a fresh client instead of "Event loop is closed".
        """
        loop = asyncio.get_running_loop()
        if self.client.is_closed() or self._client_loop not in (None, loop):
            self.client = self._new_client(self._url_arg)
        self._client_loop = loop
        return self.client

    async def create(self, kwargs: dict[str, Any]) -> tuple[Any, float]:
        """One chat completion call, counted while in flight; (response, latency in s)."""
        self.in_flight += 1
        self.requests += 1
        started = time.perf_counter()
        try:
            response = await self.loop_client().chat.completions.create(**kwargs)
        except Exception:
            self.errors += 1
            raise
        finally:
            self.in_flight -= 1
        return response, time.perf_counter() - started

    def describe(self) -> dict[str, Any]:
        return {"url": self.url, "requests": self.requests, "errors": self.errors}


class OpenAICompatBackend(Backend):
    """One chat model behind one or more OpenAI-compatible ``/chat/completions`` endpoints.

    ``provider="openai"`` talks to OpenAI (key from ``OPENAI_API_KEY``, required);
    ``provider="openai-compatible"`` talks to ``base_url`` (key from ``NUTRIREASON_API_KEY`` or
    ``OPENAI_API_KEY``, else a placeholder that local servers ignore). ``base_url`` may list
    several servers of the same model, comma-separated or as a list; each request goes to the
    one with the fewest requests in flight.

    Settings: OpenAI takes ``top_p`` and the presence/frequency penalties besides the basic
    ones; ``openai-compatible`` servers also get ``top_k``, ``min_p`` and ``repeat_penalty`` in
    the request body (``repeat_penalty`` twice: as itself for llama.cpp and as
    ``repetition_penalty`` for vLLM). GBNF grammars are refused for both.
    """

    def __init__(self, model: str, *, base_url: str | list[str] | None = None,
                 provider: str = "openai", api_key: str | None = None, timeout: float = 120.0,
                 **options: Any) -> None:
        if options:
            raise NutriReasonError(
                f"{provider}/{model}: unknown backend option(s) {sorted(options)}; "
                "expected: timeout (seconds)")
        if provider not in PROVIDERS:
            raise NutriReasonError(f"provider {provider!r} is not one of {PROVIDERS}")
        if provider == "openai-compatible" and not base_url:
            raise NutriReasonError(f"openai-compatible/{model}: a base_url is required "
                                   "(openai-compatible/<model>@http://host:port/v1)")
        urls: list[str | None] = [*parse_endpoints(base_url, f"{provider}/{model}")] \
            if base_url else [None]
        self.timeout = _timeout(timeout, f"{provider}/{model}")
        try:
            import openai
        except ImportError:
            raise MissingDependency("openai", "openai") from None

        self.provider = provider
        self.model = model
        self.supported_settings = OPENAI_SETTINGS if provider == "openai" \
            else COMPATIBLE_SETTINGS
        self._api_key = api_key or _api_key_from_env(provider)
        self._openai = openai
        self.endpoints = [Endpoint(url, self._new_client) for url in urls]
        self.base_url = ",".join(e.url for e in self.endpoints)
        self._dropped: list[str] = []

    def _new_client(self, base_url: str | None) -> Any:
        # max_retries=0: retries are the run engine's job (nutrireason.models.retry).
        return self._openai.AsyncOpenAI(base_url=base_url, api_key=self._api_key,
                                        max_retries=0, timeout=self.timeout)

    @property
    def _client(self) -> Any:
        """The first endpoint's client."""
        return self.endpoints[0].client

    # -- description -------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Provider and model; OpenAI's URL too (kept for stable cache keys), but not a local
        server's: the same model moved to another host or port keeps its cache."""
        if self.provider == "openai":
            return {"provider": self.provider, "model": self.model, "base_url": self.base_url}
        return {"provider": self.provider, "model": self.model}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {
            "base_url": self.base_url, "endpoints": [e.describe() for e in self.endpoints],
            "timeout": self.timeout, "dropped_params": list(self._dropped)}

    @property
    def dropped_params(self) -> list[str]:
        """Parameters this backend has stopped sending because the provider rejected them."""
        return list(self._dropped)

    def server_defaults(self) -> dict[str, Any] | None:
        """Per endpoint URL, the ``default_generation_settings`` a llama.cpp server reports at
        ``GET /props``; None for OpenAI, or when no endpoint reports any (vLLM has no such
        route). Each endpoint gets a short timeout."""
        if self.provider == "openai":
            return None
        found = {}
        for endpoint in self.endpoints:
            defaults = _props_defaults(endpoint.url, self._api_key)
            if defaults is not None:
                found[endpoint.url] = defaults
        return found or None

    # -- the call ----------------------------------------------------------------------------

    async def generate(self, request: ChatRequest) -> ModelResponse:
        check_settings(self, request.settings)
        while True:
            kwargs = self._request_kwargs(request)
            endpoint = self._least_busy()
            try:
                response, latency = await endpoint.create(kwargs)
            except self._openai.APIStatusError as error:
                param = self._rejected_param(error, kwargs)
                if param is None:
                    raise self._model_error(error, endpoint.url) from None
                if param not in self._dropped:  # a concurrent call may have dropped it already
                    self._dropped.append(param)
                continue  # at once, without it: not a failed attempt
            except Exception as error:
                raise self._model_error(error, endpoint.url) from None
            return self._to_response(response, latency, endpoint.url)

    def _least_busy(self) -> Endpoint:
        """The endpoint with the fewest requests in flight (ties: the first listed)."""
        return min(self.endpoints, key=lambda e: e.in_flight)

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        settings = request.settings
        messages = list(request.messages)
        kwargs: dict[str, Any] = {"model": self.model}
        if settings.temperature is not None and "temperature" not in self._dropped:
            kwargs["temperature"] = settings.temperature
        if settings.max_tokens is not None and "max_tokens" not in self._dropped:
            kwargs["max_tokens"] = settings.max_tokens
        if settings.stop:
            kwargs["stop"] = list(settings.stop)
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        kwargs |= _present(settings, OPENAI_PARAMS)
        extra = _present(settings, EXTRA_BODY_PARAMS)
        if "repeat_penalty" in extra:
            extra["repetition_penalty"] = extra["repeat_penalty"]
        if extra:
            kwargs["extra_body"] = extra
        if settings.json_mode:
            if "response_format" in self._dropped:
                messages = _with_json_instruction(messages)
            else:
                kwargs["response_format"] = {"type": "json_object"}
        kwargs["messages"] = [m.model_dump(mode="json", exclude_none=True) for m in messages]
        return kwargs

    def _rejected_param(self, error: Exception, sent: dict[str, Any]) -> str | None:
        """The fallback parameter a 400/422 rejects, if it names one that was sent."""
        if not isinstance(error, (self._openai.BadRequestError,
                                  self._openai.UnprocessableEntityError)):
            return None
        candidates = [p for p in FALLBACK_PARAMS if p in sent]
        param = getattr(error, "param", None)
        if isinstance(param, str):
            for name in candidates:
                if param == name or param.startswith(f"{name}.") or param.startswith(f"{name}["):
                    return name
        # The error's message (the SDK puts the body's "message" in it); the whole body only
        # when it has no message (plain text, or FastAPI-style {"detail": [...]} from a 422).
        body = getattr(error, "body", None)
        has_message = isinstance(body, dict) and isinstance(body.get("message"), str)
        text = str(error) if has_message else f"{error} {_body_text(body)}"
        for name in candidates:
            if name in text:
                return name
        return None

    def _to_response(self, response: Any, latency: float, url: str) -> ModelResponse:
        if not isinstance(response, self._openai.BaseModel):
            # The SDK hands back the body as text when the content type is not JSON.
            raise self._error("malformed", "response is not a chat completion JSON object: "
                              f"{str(response)[:200]!r}", url, status=200)
        choices = getattr(response, "choices", None)
        if not choices:
            raise self._error("malformed", "response has no choices", url, status=200)
        try:
            choice = choices[0]
            message = choice.message
            text = (message.content if message is not None else None) or ""
            reasoning = _reasoning_field(message)
            finish_reason = getattr(choice, "finish_reason", None)
            usage = getattr(response, "usage", None)
            raw = json.loads(json.dumps(response.model_dump(mode="json"), default=str))
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            raise self._error("malformed", f"response is not a chat completion: {error}",
                              url, status=200) from None
        if not isinstance(text, str):
            raise self._error("malformed", "message content is not text", url, status=200)
        return ModelResponse(
            text=text,
            usage=Usage(prompt_tokens=_int(getattr(usage, "prompt_tokens", 0)),
                        completion_tokens=_int(getattr(usage, "completion_tokens", 0)),
                        reasoning_tokens=_reasoning_tokens(usage)),
            latency_s=latency,
            model=str(getattr(response, "model", None) or self.model),
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            reasoning=reasoning,
            raw=raw,
            dropped_params=list(self._dropped),
        )

    # -- errors ------------------------------------------------------------------------------

    def _model_error(self, error: Exception, url: str) -> ModelError:
        """Classify an SDK (or decoding) error for the retry policy."""
        openai = self._openai
        status = getattr(error, "status_code", None)
        if not isinstance(status, int):
            status = None
        detail = str(error) or type(error).__name__
        kind: ErrorKind
        retry_after = None
        if isinstance(error, openai.APITimeoutError):
            kind = "timeout"
        elif isinstance(error, openai.APIConnectionError):
            kind = "connection"
        elif isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError)):
            kind = "malformed"
            detail = f"response body is not a valid chat completion ({type(error).__name__}: " \
                     f"{detail})"
        elif isinstance(error, openai.APIStatusError):
            retry_after = _retry_after(error.response.headers)
            if isinstance(error, openai.RateLimitError):
                kind = "rate_limit"
            elif isinstance(error, openai.InternalServerError) or (status or 0) >= 500:
                kind = "server"
            elif isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
                kind = "auth"
            elif isinstance(error, openai.NotFoundError):
                kind = "not_found"
            elif isinstance(error, (openai.BadRequestError, openai.UnprocessableEntityError)):
                kind = "bad_request"
            elif status == 408:
                kind = "timeout"
            else:
                kind = "unknown"
        else:
            kind = "unknown"
            detail = f"{type(error).__name__}: {detail}"
        return self._error(kind, detail, url, status=status, retry_after=retry_after)

    def _error(self, kind: ErrorKind, detail: str, url: str, *, status: int | None = None,
               retry_after: float | None = None) -> ModelError:
        message = self._scrub(f"{self.name} at {url}: {kind}: {detail}")
        if len(message) > _MAX_MESSAGE:
            message = message[:_MAX_MESSAGE] + "..."
        return ModelError(kind, message, status=status, retry_after=retry_after)

    def _scrub(self, text: str) -> str:
        key = self._api_key
        if key and key != LOCAL_API_KEY and len(key) >= 4:
            text = text.replace(key, "[api key]")
        return text

    async def aclose(self) -> None:
        """Close the HTTP clients (a later call opens new ones)."""
        for endpoint in self.endpoints:
            with contextlib.suppress(RuntimeError):  # its event loop is gone, and its connections
                await endpoint.client.close()


def parse_endpoints(base_url: str | list[str], where: str) -> list[str]:
    """Comma-separated (or listed) http(s) URLs, each with a host; ``where`` names the spec in
    errors."""
    urls = base_url.split(",") if isinstance(base_url, str) else list(base_url)
    urls = [url.strip().rstrip("/") for url in urls]
    if any("@" in urlsplit(url).netloc for url in urls):
        raise NutriReasonError(f"{where}: an endpoint carries credentials; provider strings "
                               "are recorded, so pass keys in NUTRIREASON_API_KEY")
    spec = f"{where}@{','.join(urls)}"
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise NutriReasonError(f"{spec}: endpoint {url!r} is not an http(s) URL with a "
                                   "host, e.g. http://127.0.0.1:8000/v1")
        if urls.count(url) > 1:
            raise NutriReasonError(f"{spec}: endpoint {url!r} is listed twice")
    return urls


def _timeout(value: Any, where: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise NutriReasonError(f"{where}: timeout={value!r} is not a number of seconds") from None
    if seconds <= 0:
        raise NutriReasonError(f"{where}: timeout must be positive, got {seconds}")
    return seconds


def _present(settings: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The named settings that are not None."""
    return {n: getattr(settings, n) for n in names if getattr(settings, n) is not None}


def _props_defaults(url: str, api_key: str) -> dict[str, Any] | None:
    """``default_generation_settings`` from a llama.cpp server's ``GET /props``; None on any
    failure (no such route, not JSON, unreachable, slow)."""
    root = url[: -len("/v1")] if url.endswith("/v1") else url
    request = urllib.request.Request(f"{root}/props",
                                     headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=PROPS_TIMEOUT_S) as reply:
            data = json.loads(reply.read())
    except Exception:  # best effort: any failure means "not reported"
        return None
    defaults = data.get("default_generation_settings") if isinstance(data, dict) else None
    return defaults if isinstance(defaults, dict) else None


def _api_key_from_env(provider: str) -> str:
    if provider == "openai":
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise NutriReasonError("openai backend: no API key; set OPENAI_API_KEY (or use "
                                   "openai-compatible/<model>@<base_url> for a local server)")
        return key
    return os.environ.get("NUTRIREASON_API_KEY") or os.environ.get("OPENAI_API_KEY") \
        or LOCAL_API_KEY


def _with_json_instruction(messages: list[Message]) -> list[Message]:
    """Carry the JSON contract in the system prompt (for providers without JSON mode)."""
    if messages and messages[0].role == "system":
        first = messages[0]
        if isinstance(first.content, str):
            content: Any = f"{first.content}\n\n{JSON_INSTRUCTION}" if first.content \
                else JSON_INSTRUCTION
        else:
            content = [*first.content, TextPart(text=JSON_INSTRUCTION)]
        return [Message(role="system", content=content), *messages[1:]]
    return [Message(role="system", content=JSON_INSTRUCTION), *messages]


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date."""
    for header, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except (TypeError, ValueError):
            continue
        return max(0.0, seconds) if math.isfinite(seconds) else None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC with no claim about local time
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def _body_text(body: Any) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body)
    except (TypeError, ValueError):
        return ""


def _reasoning_field(message: Any) -> str | None:
    """The message's separate reasoning (``reasoning_content`` on vLLM, DeepSeek and
    llama.cpp's server; ``reasoning`` on others), or None."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None and isinstance(getattr(message, "model_extra", None), dict):
            value = message.model_extra.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _reasoning_tokens(usage: Any) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` when the server reports it."""
    details = getattr(usage, "completion_tokens_details", None)
    value = getattr(details, "reasoning_tokens", None)
    if value is None and isinstance(details, dict):
        value = details.get("reasoning_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
