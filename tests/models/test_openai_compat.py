"""OpenAICompatBackend against a real local HTTP server through the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import pytest

pytest.importorskip("openai")

from nutrireason.errors import NutriReasonError  # noqa: E402
from nutrireason.models.errors import MissingDependency, ModelError  # noqa: E402
from nutrireason.models.openai_compat import (  # noqa: E402
    JSON_INSTRUCTION,
    OpenAICompatBackend,
    _retry_after,
)
from nutrireason.models.registry import get_backend  # noqa: E402
from nutrireason.models.retry import RetriesExhausted, RetryPolicy, call_with_retry  # noqa: E402
from nutrireason.models.types import (  # noqa: E402
    ChatRequest,
    GenerationSettings,
    ImagePart,
    ImageURL,
    Message,
    TextPart,
    system,
    user,
)
from tests.models.fake_openai import FakeOpenAI  # noqa: E402

SECRET = "sk-test-SECRET"


def make(server: FakeOpenAI, **options: Any) -> OpenAICompatBackend:
    return OpenAICompatBackend("fake-model", base_url=server.url, provider="openai-compatible",
                               **options)


def run(backend: OpenAICompatBackend, request: ChatRequest) -> Any:
    """One generate call, closing the client afterwards (each asyncio.run is its own loop)."""

    async def go() -> Any:
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def fails(backend: OpenAICompatBackend, request: ChatRequest) -> ModelError:
    with pytest.raises(ModelError) as info:
        run(backend, request)
    return info.value


def ask(text: str = "hello there", **settings: Any) -> ChatRequest:
    return ChatRequest(messages=[user(text)], settings=GenerationSettings(**settings))


# -- success ---------------------------------------------------------------------------------


def test_success_carries_text_usage_latency_model_and_raw(server: FakeOpenAI) -> None:
    response = run(make(server), ask("is rice gluten free", seed=7, stop=["\n\n"]))
    assert response.text == "is rice gluten free"
    assert response.model == "fake-model"
    assert response.finish_reason == "stop"
    assert response.usage.prompt_tokens == 4 and response.usage.completion_tokens == 4
    assert response.latency_s > 0
    assert response.dropped_params == []
    assert response.raw["choices"][0]["message"]["content"] == "is rice gluten free"
    json.dumps(response.raw)  # JSON-serialisable as records need
    body = server.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == [{"role": "user", "content": "is rice gluten free"}]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 512
    assert body["seed"] == 7 and body["stop"] == ["\n\n"]
    assert "response_format" not in body


def test_none_settings_are_left_to_the_provider(server: FakeOpenAI) -> None:
    run(make(server), ask(temperature=None, max_tokens=None))
    assert not {"temperature", "max_tokens", "seed", "stop"} & set(server.requests[0])


def test_json_mode_sends_response_format(server: FakeOpenAI) -> None:
    run(make(server), ask('{"a": 1}', json_mode=True))
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert server.requests[0]["messages"] == [{"role": "user", "content": '{"a": 1}'}]


def test_image_parts_are_sent_in_openai_shape(server: FakeOpenAI) -> None:
    url = "data:image/png;base64,iVBORw0KGgo="
    message = Message(role="user", content=[TextPart(text="what dish is this"),
                                            ImagePart(image_url=ImageURL(url=url))])
    response = run(make(server), ChatRequest(messages=[system("be brief"), message]))
    assert response.text == "what dish is this"
    assert server.requests[0]["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "what dish is this"},
                                     {"type": "image_url", "image_url": {"url": url}}]},
    ]


# -- faults ----------------------------------------------------------------------------------


def test_rate_limit_carries_status_and_retry_after(server: FakeOpenAI) -> None:
    server.push(("status", 429, {"Retry-After": "0.05"}))
    error = fails(make(server), ask())
    assert (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 0.05)
    assert error.retryable


def test_server_error(server: FakeOpenAI) -> None:
    server.push(("status", 503))
    error = fails(make(server), ask())
    assert (error.kind, error.status, error.retryable) == ("server", 503, True)


def test_timeout(server: FakeOpenAI) -> None:
    server.push(("delay", 1.0))
    error = fails(make(server, timeout=0.2), ask())
    assert error.kind == "timeout" and error.retryable


def test_truncated_json_is_malformed(server: FakeOpenAI) -> None:
    server.push(("truncated",))
    error = fails(make(server), ask())
    assert error.kind == "malformed" and error.retryable


def test_no_choices_is_malformed(server: FakeOpenAI) -> None:
    server.push(("no_choices",))
    error = fails(make(server), ask())
    assert error.kind == "malformed" and error.retryable


@pytest.mark.parametrize(("status", "kind"), [(400, "bad_request"), (401, "auth"),
                                              (403, "auth"), (404, "not_found"),
                                              (409, "unknown")])
def test_client_errors_are_not_retryable(server: FakeOpenAI, status: int, kind: str) -> None:
    server.push(("status", status))
    error = fails(make(server), ask())
    assert (error.kind, error.status, error.retryable) == (kind, status, False)
    assert len(server.requests) == 1  # the SDK did not retry on its own


def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = OpenAICompatBackend("m", base_url=f"http://127.0.0.1:{port}/v1",
                                  provider="openai-compatible", timeout=2)
    error = fails(backend, ask())
    assert error.kind == "connection" and error.retryable


def test_retry_after_forms() -> None:
    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after": "inf"}) is None
    assert _retry_after({}) is None
    assert _retry_after({"retry-after": "soon"}) is None
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < _retry_after({"retry-after": later}) <= 30
    earlier = format_datetime(datetime.now(timezone.utc) - timedelta(seconds=30), usegmt=True)
    assert _retry_after({"retry-after": earlier}) == 0.0


def test_grammar_is_unsupported(server: FakeOpenAI) -> None:
    error = fails(make(server), ask(grammar='root ::= "yes" | "no"'))
    assert error.kind == "unsupported" and not error.retryable
    assert server.requests == []


# -- fallbacks (FAM-Bench Appendix J) --------------------------------------------------------


@pytest.mark.parametrize("param", ["temperature", "max_tokens", "response_format"])
def test_rejected_param_is_dropped_for_good(server: FakeOpenAI, param: str) -> None:
    server.push(("reject_param", param))
    backend = make(server)
    request = ask('{"q": 1}', json_mode=True)

    async def twice() -> tuple[Any, Any]:
        try:
            return await backend.generate(request), await backend.generate(request)
        finally:
            await backend.aclose()

    first, second = asyncio.run(twice())
    assert param in server.requests[0]
    assert all(param not in body for body in server.requests[1:])
    assert len(server.requests) == 3  # the second call skipped the failed round trip
    assert first.text == second.text == '{"q": 1}'
    assert first.dropped_params == second.dropped_params == [param]
    assert backend.describe()["dropped_params"] == [param]
    others = {"temperature", "max_tokens", "response_format"} - {param}
    assert others <= set(server.requests[2])
    messages = server.requests[2]["messages"]
    if param == "response_format":
        assert messages[0] == {"role": "system", "content": JSON_INSTRUCTION}
        assert messages[1] == {"role": "user", "content": '{"q": 1}'}
    else:
        assert messages == [{"role": "user", "content": '{"q": 1}'}]


def test_concurrent_calls_share_one_fallback(server: FakeOpenAI) -> None:
    server.reject_param("temperature")
    backend = make(server)

    async def go() -> list[Any]:
        try:
            return await asyncio.gather(*(backend.generate(ask(f"q{i}")) for i in range(4)))
        finally:
            await backend.aclose()

    responses = asyncio.run(go())
    assert [r.text for r in responses] == ["q0", "q1", "q2", "q3"]
    assert backend.dropped_params == ["temperature"]


def test_json_instruction_joins_an_existing_system_prompt(server: FakeOpenAI) -> None:
    server.push(("reject_param", "response_format"))
    request = ChatRequest(messages=[system("You rate dishes."), user("x")],
                          settings=GenerationSettings(json_mode=True))
    run(make(server), request)
    assert server.requests[1]["messages"][0] == {
        "role": "system", "content": f"You rate dishes.\n\n{JSON_INSTRUCTION}"}
    assert len(server.requests[1]["messages"]) == 2


def test_all_three_fallbacks_in_one_call(server: FakeOpenAI) -> None:
    for param in ("temperature", "max_tokens", "response_format"):
        server.reject_param(param)
    response = run(make(server), ask(json_mode=True))
    assert sorted(response.dropped_params) == ["max_tokens", "response_format", "temperature"]
    assert len(server.requests) == 4


def test_unrelated_bad_request_is_not_a_fallback(server: FakeOpenAI) -> None:
    server.push(("status", 400, None, "messages must not be empty"))
    error = fails(make(server), ask(json_mode=True))
    assert (error.kind, error.status, error.retryable) == ("bad_request", 400, False)
    assert len(server.requests) == 1
    assert "messages must not be empty" in str(error)


def test_rejected_param_that_was_not_sent_is_a_bad_request(server: FakeOpenAI) -> None:
    server.push(("status", 400, None, "Unsupported parameter: 'temperature'"))
    error = fails(make(server), ask(temperature=None))
    assert error.kind == "bad_request" and error.status == 400
    assert len(server.requests) == 1


# -- with the retry policy -------------------------------------------------------------------


def test_retry_policy_recovers_after_429_and_500(server: FakeOpenAI) -> None:
    server.push(("status", 429, {"Retry-After": "0.05"}), ("status", 500))
    backend = make(server)

    async def go() -> tuple[Any, int]:
        try:
            return await call_with_retry(lambda: backend.generate(ask("ok")),
                                         RetryPolicy(base_delay=0.01))
        finally:
            await backend.aclose()

    response, attempts = asyncio.run(go())
    assert attempts == 3 and response.text == "ok"
    assert len(server.requests) == 3


def test_retry_policy_gives_up_after_max_attempts(server: FakeOpenAI) -> None:
    server.push(*[("status", 500)] * 5)
    backend = make(server)

    async def go() -> None:
        try:
            await call_with_retry(lambda: backend.generate(ask()),
                                  RetryPolicy(max_attempts=3, base_delay=0.01))
        finally:
            await backend.aclose()

    with pytest.raises(RetriesExhausted) as info:
        asyncio.run(go())
    assert (info.value.attempts, info.value.kind, info.value.status) == (3, "server", 500)
    assert len(server.requests) == 3


# -- construction, keys, secrecy -------------------------------------------------------------


def test_openai_without_key_says_to_set_it() -> None:
    with pytest.raises(NutriReasonError, match="OPENAI_API_KEY"):
        OpenAICompatBackend("gpt-4o-mini")
    with pytest.raises(NutriReasonError, match="OPENAI_API_KEY"):
        get_backend("openai/gpt-4o-mini")


def test_openai_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = get_backend("openai/gpt-4o-mini?timeout=30")
    assert backend.identity() == {"provider": "openai", "model": "gpt-4o-mini",
                                  "base_url": "https://api.openai.com/v1"}
    assert backend.describe()["timeout"] == 30.0
    assert SECRET not in json.dumps(backend.describe())


def test_unknown_option_is_named(server: FakeOpenAI) -> None:
    with pytest.raises(NutriReasonError, match="bogus"):
        get_backend(f"openai-compatible/foo@{server.url}?bogus=1")


def test_missing_openai_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingDependency, match=r"nutrireason\[openai\]"):
        OpenAICompatBackend("m", base_url="http://127.0.0.1:9/v1", provider="openai-compatible")


def test_local_server_key_placeholder(server: FakeOpenAI) -> None:
    run(make(server), ask())
    assert server.headers[0]["authorization"] == "Bearer not-needed"


def test_api_key_never_leaks(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUTRIREASON_API_KEY", SECRET)
    backend = make(server)
    response = run(backend, ask())
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"  # the key was really used
    shown = json.dumps([backend.identity(), backend.describe(), response.model_dump()])
    assert SECRET not in shown
    server.push(("status", 401, None, f"Incorrect API key provided: {SECRET}."))
    error = fails(make(server), ask())
    assert error.kind == "auth"
    assert SECRET not in str(error) and SECRET not in json.dumps(error.to_record())
    assert "[api key]" in str(error)


def test_registry_end_to_end(server: FakeOpenAI) -> None:
    backend = get_backend(f"openai-compatible/foo@{server.url}?timeout=5")
    assert isinstance(backend, OpenAICompatBackend)
    assert backend.identity() == {"provider": "openai-compatible", "model": "foo"}
    assert backend.describe()["base_url"] == server.url
    assert backend.name == "openai-compatible/foo"
    response = run(backend, ask("registry works"))
    assert response.text == "registry works" and response.model == "foo"
    assert server.requests[0]["model"] == "foo"


def test_aclose_closes_the_client(server: FakeOpenAI) -> None:
    backend = make(server)
    asyncio.run(backend.aclose())
    assert backend._client.is_closed()


def test_backend_outlives_aclose_and_its_event_loop(server: FakeOpenAI) -> None:
    backend = make(server)
    assert run(backend, ask("one")).text == "one"  # closes the client at the end
    assert run(backend, ask("two")).text == "two"  # a new loop and a new client

    async def same_loop() -> str:
        await backend.aclose()
        try:
            return (await backend.generate(ask("three"))).text
        finally:
            await backend.aclose()

    assert asyncio.run(same_loop()) == "three"
