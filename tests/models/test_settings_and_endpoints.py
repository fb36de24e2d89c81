"""Generation settings by name (parse_gen, check_settings, what reaches each API), model labels
without the URL, and one backend over several OpenAI-compatible endpoints."""

from __future__ import annotations

import asyncio
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from nutrireason.errors import NutriReasonError  # noqa: E402
from nutrireason.models.errors import ModelError  # noqa: E402
from nutrireason.models.llamacpp import LlamaCppBackend  # noqa: E402
from nutrireason.models.openai_compat import OpenAICompatBackend  # noqa: E402
from nutrireason.models.registry import get_backend, model_label  # noqa: E402
from nutrireason.models.scripted import ScriptedBackend  # noqa: E402
from nutrireason.models.settings import (  # noqa: E402
    check_settings,
    effective_settings,
    parse_gen,
)
from nutrireason.models.types import (  # noqa: E402
    ChatRequest,
    GenerationSettings,
    cache_key,
    user,
)
from tests.models import fake_openai  # noqa: E402
from tests.models.fake_openai import FakeOpenAI, echo  # noqa: E402

SAMPLING = {"top_p": 0.9, "top_k": 20, "min_p": 0.05, "repeat_penalty": 1.1,
            "presence_penalty": 0.5, "frequency_penalty": 0.25}


def ask(text: str = "hello", **settings: Any) -> ChatRequest:
    return ChatRequest(messages=[user(text)], settings=GenerationSettings(**settings))


def run_all(backend: Any, requests: list[ChatRequest]) -> list[Any]:
    """Run the requests concurrently on one event loop, closing the backend afterwards."""

    async def go() -> list[Any]:
        try:
            return await asyncio.gather(*(backend.generate(r) for r in requests))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def openai_backend(base_url: str | None = None) -> OpenAICompatBackend:
    return OpenAICompatBackend("gpt-4o-mini", base_url=base_url, provider="openai",
                               api_key="sk-test")


# -- parse_gen -------------------------------------------------------------------------------


def test_parse_gen_types_values_by_field() -> None:
    parsed = parse_gen(["top_p=0.9", "top_k=40", "seed=7", "json_mode=true", "max-tokens=64",
                        "repeat_penalty=1.1", "temperature=none", "grammar=root ::= \"a\""])
    assert parsed == {"top_p": 0.9, "top_k": 40, "seed": 7, "json_mode": True, "max_tokens": 64,
                      "repeat_penalty": 1.1, "temperature": None, "grammar": 'root ::= "a"'}
    assert isinstance(parsed["top_k"], int) and isinstance(parsed["top_p"], float)
    GenerationSettings(**parsed)  # ready to build settings from


def test_parse_gen_stop_repeats_or_takes_a_json_list() -> None:
    assert parse_gen(["stop=###", "stop=END"]) == {"stop": ["###", "END"]}
    assert parse_gen(['stop=["\\n\\n", "END"]', "stop=x"]) == {"stop": ["\n\n", "END", "x"]}
    assert parse_gen([]) == {}


def test_parse_gen_names_an_unknown_key_and_lists_the_known_ones() -> None:
    with pytest.raises(NutriReasonError, match="'top_q'") as info:
        parse_gen(["top_q=0.9"])
    assert "top_p" in str(info.value) and "repeat_penalty" in str(info.value)


@pytest.mark.parametrize("pair", ["top_k=1.5", "top_p=2", "seed=abc", "json_mode=maybe",
                                  "max_tokens=0"])
def test_parse_gen_names_a_bad_value(pair: str) -> None:
    key, _, value = pair.partition("=")
    with pytest.raises(NutriReasonError) as info:
        parse_gen([pair])
    assert key in str(info.value) and repr(value) in str(info.value)


@pytest.mark.parametrize("pairs", [["top_p"], ["=1"], ["seed=1", "seed=2"], ["stop=[1, 2]"]])
def test_parse_gen_refuses_malformed_input(pairs: list[str]) -> None:
    with pytest.raises(NutriReasonError):
        parse_gen(pairs)


# -- check_settings and effective_settings ---------------------------------------------------


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> LlamaCppBackend:
    """A llamacpp backend over a fake ``llama_cpp`` module that records its calls."""

    class Llama:
        calls: list[dict[str, Any]] = []

        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs

        def create_chat_completion(self, messages: list[Any], top_k: int = 40,
                                   repeat_penalty: float = 1.0, **kwargs: Any) -> dict[str, Any]:
            Llama.calls.append({"messages": messages, "top_k": top_k,
                                "repeat_penalty": repeat_penalty} | kwargs)
            return {"choices": [{"finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "ok"}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1}}

    module = types.ModuleType("llama_cpp")
    module.Llama = Llama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(64))
    return LlamaCppBackend(path)


def test_openai_refuses_settings_outside_its_api_by_name() -> None:
    backend = openai_backend()
    check_settings(backend, GenerationSettings(top_p=0.9, presence_penalty=0.1, seed=1))
    with pytest.raises(ModelError) as info:
        check_settings(backend, GenerationSettings(top_k=40, min_p=0.1))
    assert info.value.kind == "unsupported" and not info.value.retryable
    assert "top_k" in str(info.value) and "min_p" in str(info.value)
    assert "openai/gpt-4o-mini" in str(info.value)
    for name in ("repeat_penalty", "grammar"):
        with pytest.raises(NutriReasonError, match=name):
            check_settings(backend, GenerationSettings(**{name: "x" if name == "grammar"
                                                          else 1.1}))


def test_openai_refuses_before_sending(server: FakeOpenAI) -> None:
    with pytest.raises(ModelError, match="top_k"):
        run_all(openai_backend(server.url), [ask(top_k=5)])
    assert server.requests == []


def test_llamacpp_openai_compatible_and_scripted_accept_top_k(fake_llama: LlamaCppBackend,
                                                              server: FakeOpenAI) -> None:
    every = GenerationSettings(**SAMPLING, grammar='root ::= "a"', json_mode=True)
    check_settings(fake_llama, every)
    check_settings(ScriptedBackend("echo"), every)
    compatible = get_backend(f"openai-compatible/m@{server.url}")
    check_settings(compatible, GenerationSettings(**SAMPLING))
    with pytest.raises(ModelError, match="grammar"):
        check_settings(compatible, GenerationSettings(grammar='root ::= "a"'))


def test_effective_settings_are_what_is_sent() -> None:
    settings = GenerationSettings(top_p=0.9, stop=["END"])
    assert effective_settings(ScriptedBackend("echo"), settings) == {
        "temperature": 0.0, "max_tokens": 512, "stop": ["END"], "top_p": 0.9}
    assert effective_settings(openai_backend(), GenerationSettings(
        temperature=None, max_tokens=None, json_mode=True)) == {"json_mode": True}
    with pytest.raises(ModelError, match="top_k"):
        effective_settings(openai_backend(), GenerationSettings(top_k=1))


def test_unused_sampling_fields_keep_old_dumps_and_cache_keys() -> None:
    request = ask("hi", seed=3, stop=["x"])
    assert "top_p" not in request.model_dump()["settings"]
    identity = {"provider": "scripted", "model": "echo", "malformed_rate": 0.0}
    assert cache_key(identity, request) == \
        "be8c1d54a6c3de5ae44fd26440def077c76878fdc14b99864146cea1181b422f"
    assert request.fingerprint() == \
        "c52e49f8dd233f8a6600b625be62a96dbf6b7de4863428e4f78b03fa971ddd64"
    assert cache_key(identity, ask("hi", seed=3, stop=["x"], top_p=0.9)) != \
        cache_key(identity, request)


# -- the settings reach the wire -------------------------------------------------------------


def test_openai_compatible_sends_every_setting(server: FakeOpenAI) -> None:
    backend = get_backend(f"openai-compatible/m@{server.url}")
    run_all(backend, [ask(seed=7, stop=["\n\n"], **SAMPLING)])
    body = server.requests[0]
    assert (body["top_p"], body["seed"], body["stop"]) == (0.9, 7, ["\n\n"])
    assert (body["presence_penalty"], body["frequency_penalty"]) == (0.5, 0.25)
    assert (body["top_k"], body["min_p"], body["repeat_penalty"]) == (20, 0.05, 1.1)
    assert body["repetition_penalty"] == 1.1  # vLLM's name for it


def test_unset_sampling_settings_are_not_sent(server: FakeOpenAI) -> None:
    run_all(get_backend(f"openai-compatible/m@{server.url}"), [ask()])
    assert not set(SAMPLING) & set(server.requests[0])


def test_openai_sends_its_own_settings(server: FakeOpenAI) -> None:
    run_all(openai_backend(server.url), [ask(top_p=0.5, seed=1, frequency_penalty=0.1)])
    body = server.requests[0]
    assert (body["top_p"], body["seed"], body["frequency_penalty"]) == (0.5, 1, 0.1)
    assert "top_k" not in body


def test_llamacpp_passes_every_setting_to_create_chat_completion(
        fake_llama: LlamaCppBackend) -> None:
    run_all(fake_llama, [ask(seed=7, stop=["END"], **SAMPLING)])
    call = type(fake_llama.llm).calls[-1]
    assert {k: call[k] for k in SAMPLING} == SAMPLING
    assert (call["seed"], call["stop"], call["temperature"]) == (7, ["END"], 0.0)


def test_llamacpp_reports_its_defaults_without_loading(fake_llama: LlamaCppBackend) -> None:
    assert fake_llama.server_defaults() == {"top_k": 40, "repeat_penalty": 1.0}
    assert fake_llama._llm is None


def test_openai_compatible_server_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    original = fake_openai._make_handler

    def with_props(fake: FakeOpenAI) -> type:
        class Handler(original(fake)):  # type: ignore[misc]
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                if self.path == "/props":
                    self._json(200, {"default_generation_settings": {"top_k": 40}})
                else:
                    super().do_GET()
        return Handler

    with FakeOpenAI(lifetime=30) as plain:
        assert get_backend(f"openai-compatible/m@{plain.url}").server_defaults() is None
        monkeypatch.setattr(fake_openai, "_make_handler", with_props)
        with FakeOpenAI(lifetime=30) as llama_server:
            backend = get_backend(f"openai-compatible/m@{plain.url},{llama_server.url}")
            assert backend.server_defaults() == {llama_server.url: {"top_k": 40}}
    assert openai_backend().server_defaults() is None


# -- model identity without the URL ----------------------------------------------------------


def test_model_label_leaves_out_the_endpoints() -> None:
    assert model_label("openai-compatible/Qwen2.5-7B@http://a:8000/v1") == \
        "openai-compatible/Qwen2.5-7B"
    assert model_label("openai-compatible/Qwen2.5-7B@http://a:8000/v1,http://b:8000/v1"
                       "?timeout=30") == "openai-compatible/Qwen2.5-7B?timeout=30"
    assert model_label("scripted/echo?latency=0.2&error_rate=0.1") == \
        "scripted/echo?error_rate=0.1&latency=0.2"
    assert model_label("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert model_label("llamacpp/smollm2") == "llamacpp/smollm2"


def test_moving_a_server_keeps_label_identity_and_cache_key() -> None:
    first = "openai-compatible/Qwen2.5-7B@http://127.0.0.1:8000/v1"
    moved = "openai-compatible/Qwen2.5-7B@http://localhost:8000/v1,http://b:9000/v1"
    assert model_label(first) == model_label(moved)
    one, other = get_backend(first), get_backend(moved)
    assert one.identity() == other.identity() == {"provider": "openai-compatible",
                                                  "model": "Qwen2.5-7B"}
    assert cache_key(one.identity(), ask()) == cache_key(other.identity(), ask())


def test_openai_identity_is_unchanged() -> None:
    assert openai_backend().identity() == {"provider": "openai", "model": "gpt-4o-mini",
                                           "base_url": "https://api.openai.com/v1"}


@pytest.mark.parametrize("urls", ["ftp://a/v1", "http:///v1", "a:8000/v1",
                                  "http://a/v1,", "http://a/v1,http://a/v1"])
def test_bad_endpoints_are_named(urls: str) -> None:
    with pytest.raises(NutriReasonError, match="openai-compatible/m"):
        get_backend(f"openai-compatible/m@{urls}")


def test_credentials_in_an_endpoint_are_refused() -> None:
    for spec in ("openai-compatible/m@http://a/v1,http://user:pw@b/v1",
                 "openai-compatible/m@http://user:pw@b/v1"):
        with pytest.raises(NutriReasonError, match="credentials") as info:
            get_backend(spec)
        assert "pw" not in str(info.value)
    assert model_label("openai-compatible/m@http://user:pw@b/v1") == "openai-compatible/m"
    assert model_label("openai-compatible/org@rev@http://a/v1") == "openai-compatible/org@rev"


# -- several endpoints -----------------------------------------------------------------------


def slow_echo(body: dict[str, Any]) -> str:
    time.sleep(0.5 if echo(body) == "slow" else 0.05)
    return echo(body)


@pytest.fixture
def two_servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    with FakeOpenAI(slow_echo, lifetime=60) as a, FakeOpenAI(slow_echo, lifetime=60) as b:
        yield a, b


def test_concurrent_requests_are_spread_over_the_endpoints(
        two_servers: tuple[FakeOpenAI, FakeOpenAI]) -> None:
    a, b = two_servers
    backend = get_backend(f"openai-compatible/m@{a.url},{b.url}")
    responses = run_all(backend, [ask(f"q{i}") for i in range(20)])
    assert [r.text for r in responses] == [f"q{i}" for i in range(20)]
    assert len(a.requests) >= 6 and len(b.requests) >= 6
    assert len(a.requests) + len(b.requests) == 20
    endpoints = backend.describe()["endpoints"]
    assert [e["url"] for e in endpoints] == [a.url, b.url]
    assert [e["requests"] for e in endpoints] == [len(a.requests), len(b.requests)]
    assert backend.describe()["base_url"] == f"{a.url},{b.url}"


def test_the_next_request_goes_to_the_idle_endpoint(
        two_servers: tuple[FakeOpenAI, FakeOpenAI]) -> None:
    a, b = two_servers
    backend = get_backend(f"openai-compatible/m@{a.url},{b.url}")

    async def go() -> None:
        try:
            slow = asyncio.create_task(backend.generate(ask("slow")))
            await asyncio.sleep(0.05)  # the slow call is in flight at the first endpoint
            await backend.generate(ask("quick"))
            assert [echo(r) for r in b.requests] == ["quick"]
            await slow
            await backend.generate(ask("tie"))  # both idle: the first endpoint
        finally:
            await backend.aclose()

    asyncio.run(go())
    assert [echo(r) for r in a.requests] == ["slow", "tie"]


def test_a_failing_endpoint_error_propagates_and_names_it(
        two_servers: tuple[FakeOpenAI, FakeOpenAI]) -> None:
    a, b = two_servers
    a.push(("status", 503))
    backend = get_backend(f"openai-compatible/m@{a.url},{b.url}")
    with pytest.raises(ModelError) as info:
        run_all(backend, [ask()])
    assert info.value.kind == "server" and a.url in str(info.value)
    assert backend.describe()["endpoints"][0]["errors"] == 1
