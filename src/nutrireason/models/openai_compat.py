"""OpenAI and OpenAI-compatible chat backends (vLLM, Ollama, llama.cpp server) via ``openai``.

The SDK never retries on its own (``max_retries=0``): retries belong to the run engine
(:mod:`nutrireason.models.retry`), so every failure comes back as a classified
:class:`~nutrireason.models.errors.ModelError`. Three parameter fallbacks follow FAM-Bench
(Appendix J): when a provider rejects ``temperature`` or ``max_tokens`` the field is dropped;
when it rejects ``response_format`` the field is dropped and the JSON contract is carried by a
system instruction alone. A dropped parameter stays dropped for the backend's lifetime.
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
from typing import Any

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend
from nutrireason.models.errors import ErrorKind, MissingDependency, ModelError
from nutrireason.models.types import ChatRequest, Message, ModelResponse, TextPart, Usage

FALLBACK_PARAMS = ("temperature", "max_tokens", "response_format")
JSON_INSTRUCTION = "Respond with a single JSON object and nothing else."
PROVIDERS = ("openai", "openai-compatible")
LOCAL_API_KEY = "not-needed"
_MAX_MESSAGE = 1000


class OpenAICompatBackend(Backend):
    """One chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``provider="openai"`` talks to OpenAI (key from ``OPENAI_API_KEY``, required);
    ``provider="openai-compatible"`` talks to ``base_url`` (key from ``NUTRIREASON_API_KEY`` or
    ``OPENAI_API_KEY``, else a placeholder that local servers ignore).
    """

    def __init__(self, model: str, *, base_url: str | None = None, provider: str = "openai",
                 api_key: str | None = None, timeout: float = 120.0, **options: Any) -> None:
        if options:
            raise NutriReasonError(
                f"{provider}/{model}: unknown backend option(s) {sorted(options)}; "
                "expected: timeout (seconds)")
        if provider not in PROVIDERS:
            raise NutriReasonError(f"provider {provider!r} is not one of {PROVIDERS}")
        if provider == "openai-compatible" and not base_url:
            raise NutriReasonError(f"openai-compatible/{model}: a base_url is required "
                                   "(openai-compatible/<model>@http://host:port/v1)")
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            raise NutriReasonError(f"{provider}/{model}: timeout={timeout!r} is not a number of "
                                   "seconds") from None
        if timeout <= 0:
            raise NutriReasonError(f"{provider}/{model}: timeout must be positive, got {timeout}")
        try:
            import openai
        except ImportError:
            raise MissingDependency("openai", "openai") from None

        self.provider = provider
        self.model = model
        self.timeout = timeout
        self._api_key = api_key or _api_key_from_env(provider)
        self._openai = openai
        self._base_url_arg = base_url
        self._client = self._new_client()
        self._client_loop: asyncio.AbstractEventLoop | None = None
        # The URL actually used (the SDK falls back to OPENAI_BASE_URL, then OpenAI's own).
        self.base_url = base_url or str(self._client.base_url).rstrip("/")
        self._dropped: list[str] = []

    def _new_client(self) -> Any:
        # max_retries=0: retries are the run engine's job (nutrireason.models.retry).
        return self._openai.AsyncOpenAI(base_url=self._base_url_arg, api_key=self._api_key,
                                        max_retries=0, timeout=self.timeout)

    def _loop_client(self) -> Any:
        """The client for the running event loop.

        An async HTTP client's connections belong to the loop that opened them; a backend used
        from a second ``asyncio.run`` gets a fresh client instead of "Event loop is closed".
        """
        loop = asyncio.get_running_loop()
        if self._client.is_closed() or self._client_loop not in (None, loop):
            self._client = self._new_client()
        self._client_loop = loop
        return self._client

    # -- description -------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {"timeout": self.timeout, "dropped_params": list(self._dropped)}

    @property
    def dropped_params(self) -> list[str]:
        """Parameters this backend has stopped sending because the provider rejected them."""
        return list(self._dropped)

    # -- the call ----------------------------------------------------------------------------

    async def generate(self, request: ChatRequest) -> ModelResponse:
        if request.settings.grammar is not None:
            raise ModelError("unsupported", f"{self.name}: GBNF grammars are not supported by "
                             "OpenAI-compatible servers; use json_mode or a llamacpp backend")
        while True:
            kwargs = self._request_kwargs(request)
            started = time.perf_counter()
            try:
                response = await self._loop_client().chat.completions.create(**kwargs)
            except self._openai.APIStatusError as error:
                param = self._rejected_param(error, kwargs)
                if param is None:
                    raise self._model_error(error) from None
                if param not in self._dropped:  # a concurrent call may have dropped it already
                    self._dropped.append(param)
                continue  # at once, without it: not a failed attempt
            except Exception as error:
                raise self._model_error(error) from None
            latency = time.perf_counter() - started
            return self._to_response(response, latency)

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

    def _to_response(self, response: Any, latency: float) -> ModelResponse:
        if not isinstance(response, self._openai.BaseModel):
            # The SDK hands back the body as text when the content type is not JSON.
            raise self._error("malformed", "response is not a chat completion JSON object: "
                              f"{str(response)[:200]!r}", status=200)
        choices = getattr(response, "choices", None)
        if not choices:
            raise self._error("malformed", "response has no choices", status=200)
        try:
            choice = choices[0]
            message = choice.message
            text = (message.content if message is not None else None) or ""
            finish_reason = getattr(choice, "finish_reason", None)
            usage = getattr(response, "usage", None)
            raw = json.loads(json.dumps(response.model_dump(mode="json"), default=str))
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            raise self._error("malformed", f"response is not a chat completion: {error}",
                              status=200) from None
        if not isinstance(text, str):
            raise self._error("malformed", "message content is not text", status=200)
        return ModelResponse(
            text=text,
            usage=Usage(prompt_tokens=_int(getattr(usage, "prompt_tokens", 0)),
                        completion_tokens=_int(getattr(usage, "completion_tokens", 0))),
            latency_s=latency,
            model=str(getattr(response, "model", None) or self.model),
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            raw=raw,
            dropped_params=list(self._dropped),
        )

    # -- errors ------------------------------------------------------------------------------

    def _model_error(self, error: Exception) -> ModelError:
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
        return self._error(kind, detail, status=status, retry_after=retry_after)

    def _error(self, kind: ErrorKind, detail: str, *, status: int | None = None,
               retry_after: float | None = None) -> ModelError:
        where = f" at {self.base_url}" if self.base_url else ""
        message = self._scrub(f"{self.name}{where}: {kind}: {detail}")
        if len(message) > _MAX_MESSAGE:
            message = message[:_MAX_MESSAGE] + "..."
        return ModelError(kind, message, status=status, retry_after=retry_after)

    def _scrub(self, text: str) -> str:
        key = self._api_key
        if key and key != LOCAL_API_KEY and len(key) >= 4:
            text = text.replace(key, "[api key]")
        return text

    async def aclose(self) -> None:
        """Close the HTTP client (a later call opens a new one)."""
        with contextlib.suppress(RuntimeError):  # its event loop is gone, and its connections
            await self._client.close()


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


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
