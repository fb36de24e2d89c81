"""LlamaCppBackend: error paths and request mapping with a fake ``llama_cpp`` module (fast), then
the real SmolLM2 bundle in-process and behind ``python -m llama_cpp.server`` (slow).

The slow tests need the ``local`` extra (``llama-cpp-python``) and the ``smollm2`` bundle; the
server test also needs the server's own dependencies (``llama-cpp-python[server]``) and
``openai``. Each skips cleanly when what it needs is absent.
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nutrireason.errors import NutriReasonError
from nutrireason.models.errors import MissingDependency, ModelError
from nutrireason.models.llamacpp import LlamaCppBackend, f16_copy, usable_cores
from nutrireason.models.registry import get_backend
from nutrireason.models.types import (
    ChatRequest,
    GenerationSettings,
    ImagePart,
    ImageURL,
    Message,
    TextPart,
    system,
    user,
)
from tests.conftest import real_bundle

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_RUN = "SmolLM2-135M-Instruct.Q4_1.F16.gguf"  # the F16 copy the backend runs


def ask(text: str = "Is rice gluten free? Answer Yes or No.", **settings: Any) -> ChatRequest:
    return ChatRequest(messages=[user(text)], settings=GenerationSettings(**settings))


def run(backend: LlamaCppBackend, request: ChatRequest) -> Any:
    return asyncio.run(backend.generate(request))


# -- a fake llama_cpp module (fast tests) ----------------------------------------------------


class FakeLlama:
    """Records what it is given; answers like ``create_chat_completion`` does."""

    instances: list[FakeLlama] = []

    def __init__(self, **kwargs: Any) -> None:
        if kwargs.get("n_ctx") == 13:
            raise ValueError("Failed to load model from file")
        self.kwargs = kwargs
        self.model = "model pointer"
        self.calls: list[dict[str, Any]] = []
        self.closed = False
        self.active = 0
        self.max_active = 0
        FakeLlama.instances.append(self)

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(0.02)
            self.calls.append(kwargs)
            text = kwargs["messages"][-1]["content"]
            if text == "overflow":
                raise ValueError("Requested tokens (5000) exceed context window of 2048")
            return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                    "model": self.kwargs["model_path"],
                    "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text.upper()}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}}
        finally:
            self.active -= 1

    def close(self) -> None:
        self.closed = True


class FakeGrammar:
    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def from_string(cls, text: str, verbose: bool = True) -> FakeGrammar:
        return cls(text)


def _fake_init_grammar(vocab: str, text: bytes, root: bytes) -> int | None:
    assert vocab == "vocab of model pointer" and root == b"root"
    return None if b"broken" in text else 1


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    """A file that passes the path checks (the fake Llama never reads it)."""
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 8192)  # 2 MiB + 4 bytes
    return path


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    module.LlamaGrammar = FakeGrammar  # type: ignore[attr-defined]
    module.__version__ = "0.0.fake"  # type: ignore[attr-defined]
    module.llama_model_get_vocab = lambda model: f"vocab of {model}"  # type: ignore[attr-defined]
    module.llama_sampler_init_grammar = _fake_init_grammar  # type: ignore[attr-defined]
    module.llama_sampler_free = lambda sampler: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    FakeLlama.instances.clear()
    return module


def _fake_quantize(calls: list[tuple[bytes, bytes, int]], fail: bool = False):
    def quantize(source: bytes, target: bytes, params: Any) -> int:
        calls.append((source, target, params._obj.ftype))
        if fail:
            return 1
        Path(target.decode()).write_bytes(b"GGUF f16 " + Path(source.decode()).read_bytes())
        return 0
    return quantize


class _QuantizeParams(ctypes.Structure):
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int), ("allow_requantize",
                                                                        ctypes.c_bool)]


def _quantize_params() -> _QuantizeParams:
    return _QuantizeParams()


@pytest.mark.parametrize("fail", [False, True])
def test_the_bundle_runs_from_an_f16_copy_written_once(fake_llama_cpp: Any, gguf: Path,
                                                       fail: bool) -> None:
    calls: list[tuple[bytes, bytes, int]] = []
    fake_llama_cpp.llama_model_quantize = _fake_quantize(calls, fail)
    fake_llama_cpp.llama_model_quantize_default_params = _quantize_params
    fake_llama_cpp.LLAMA_FTYPE_MOSTLY_F16 = 1
    first, second = f16_copy(gguf), f16_copy(gguf)
    if fail:  # a data home where the copy cannot be written: the original runs
        assert first == second == gguf and len(calls) == 2
    else:
        assert first == second == gguf.with_name("tiny-model.F16.gguf") and len(calls) == 1
        assert first.read_bytes().startswith(b"GGUF f16 GGUF")
        assert calls[0][0] == str(gguf).encode() and calls[0][2] == 1
    assert sorted(p.name for p in gguf.parent.iterdir()) == sorted(
        {gguf.name, first.name})  # no partial file left behind


def test_a_newer_original_rewrites_the_copy(fake_llama_cpp: Any, gguf: Path) -> None:
    calls: list[tuple[bytes, bytes, int]] = []
    fake_llama_cpp.llama_model_quantize = _fake_quantize(calls)
    fake_llama_cpp.llama_model_quantize_default_params = _quantize_params
    fake_llama_cpp.LLAMA_FTYPE_MOSTLY_F16 = 1
    copy = f16_copy(gguf)
    os.utime(copy, (1, 1))  # the original is now newer than its copy
    assert f16_copy(gguf) == copy and len(calls) == 2 and copy.stat().st_mtime > 1


# -- errors that need no model ---------------------------------------------------------------


def test_missing_gguf_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ModelError) as info:
        get_backend(f"llamacpp/{missing}")
    assert info.value.kind == "not_found" and not info.value.retryable
    assert str(missing) in str(info.value)


def test_a_path_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"x")
    with pytest.raises(NutriReasonError, match=r"\.gguf") as info:
        LlamaCppBackend.from_name(str(path))
    assert str(path) in str(info.value)


def test_unknown_option_is_named(gguf: Path) -> None:
    with pytest.raises(NutriReasonError, match="n_gpu_layer'") as info:
        get_backend(f"llamacpp/{gguf}?n_ctx=512&n_gpu_layer=1")
    assert "n_ctx" in str(info.value)  # the message lists the valid ones


@pytest.mark.parametrize("query", ["n_ctx=0", "n_ctx=big", "n_threads=-1", "n_gpu_layers=1.5",
                                   "verbose=perhaps"])
def test_bad_option_values_are_refused(gguf: Path, query: str) -> None:
    with pytest.raises(NutriReasonError, match=query.split("=")[0]):
        get_backend(f"llamacpp/{gguf}?{query}")


def test_missing_bundle_says_how_to_pull_it(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("NUTRIREASON_HOME", str(tmp_path))
    with pytest.raises(ModelError) as info:
        get_backend("llamacpp/smollm2")
    assert info.value.kind == "not_found"
    assert "nutrireason data pull --only smollm2" in str(info.value)


def test_missing_llama_cpp_names_the_local_extra(monkeypatch: pytest.MonkeyPatch,
                                                  gguf: Path) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp -> ImportError
    with pytest.raises(MissingDependency, match=r"nutrireason\[local\]") as info:
        get_backend(f"llamacpp/{gguf}")
    assert "llama-cpp-python" in str(info.value)


# -- request mapping and plumbing, on a fake llama_cpp ---------------------------------------


def test_identity_is_a_cheap_fingerprint_without_paths(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    head = hashlib.sha256(gguf.read_bytes()[: 1 << 20]).hexdigest()
    assert backend.identity() == {"provider": "llamacpp", "model": "tiny-model.gguf",
                                  "size_bytes": gguf.stat().st_size, "sha256_1mb": head}
    assert backend.name == "llamacpp/tiny-model.gguf"
    described = backend.describe()
    assert described["path"] == str(gguf.resolve()) and described["load_s"] is None
    assert described["llama_cpp_version"] == "0.0.fake"
    assert FakeLlama.instances == []  # nothing loaded until the first call


def test_options_reach_llama_and_load_is_lazy_and_once(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = get_backend(f"llamacpp/{gguf}?n_ctx=4096&n_threads=2&n_gpu_layers=-1&verbose=0")
    assert isinstance(backend, LlamaCppBackend)
    run(backend, ask("a"))
    run(backend, ask("b"))
    assert len(FakeLlama.instances) == 1
    assert FakeLlama.instances[0].kwargs == {"model_path": str(gguf.resolve()), "n_ctx": 4096,
                                             "n_threads": 2, "n_threads_batch": 2,
                                             "n_gpu_layers": -1, "flash_attn": True,
                                             "verbose": False}
    assert backend.load_s is not None and backend.load_s >= 0


def test_by_default_every_usable_core_and_flash_attention(fake_llama_cpp: Any, gguf: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUTRIREASON_LLAMA_THREADS", raising=False)
    run(get_backend(f"llamacpp/{gguf}"), ask("a"))
    run(get_backend(f"llamacpp/{gguf}?flash_attn=0"), ask("a"))
    default, off = (instance.kwargs for instance in FakeLlama.instances)
    assert default["n_threads"] == default["n_threads_batch"] == usable_cores() >= 1
    assert default["flash_attn"] is True and off["flash_attn"] is False


def test_the_thread_default_can_come_from_the_environment(fake_llama_cpp: Any, gguf: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUTRIREASON_LLAMA_THREADS", "3")
    assert LlamaCppBackend(gguf).n_threads == 3
    assert LlamaCppBackend(gguf, n_threads=1).n_threads == 1  # the provider string wins
    monkeypatch.setenv("NUTRIREASON_LLAMA_THREADS", "many")
    with pytest.raises(NutriReasonError, match="NUTRIREASON_LLAMA_THREADS='many'"):
        LlamaCppBackend(gguf)


def test_settings_map_to_create_chat_completion(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    message = Message(role="user", content=[TextPart(text="one"), TextPart(text="two")])
    request = ChatRequest(messages=[system("be brief"), message],
                          settings=GenerationSettings(temperature=0.5, max_tokens=9, stop=["\n"],
                                                      seed=3, json_mode=True))
    response = run(backend, request)
    call = FakeLlama.instances[0].calls[0]
    assert call == {"messages": [{"role": "system", "content": "be brief"},
                                 {"role": "user", "content": "one\ntwo"}],
                    "temperature": 0.5, "max_tokens": 9, "stop": ["\n"], "seed": 3,
                    "response_format": {"type": "json_object"}}
    assert response.text == "ONE\nTWO"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (7, 2)
    assert response.finish_reason == "stop" and response.model == "tiny-model.gguf"
    assert response.latency_s > 0
    assert response.raw["model"] == "tiny-model.gguf"  # no absolute path in records
    json.dumps(response.raw)


def test_none_settings_are_left_to_llama_cpp(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    run(backend, ask("a", temperature=None, max_tokens=None))
    assert set(FakeLlama.instances[0].calls[0]) == {"messages"}


def test_grammar_wins_over_json_mode(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    run(backend, ask("a", grammar='root ::= "Yes" | "No"', json_mode=True))
    call = FakeLlama.instances[0].calls[0]
    assert "response_format" not in call
    assert call["grammar"].text == 'root ::= "Yes" | "No"'


def test_a_bad_grammar_is_a_bad_request_not_a_crash(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    with pytest.raises(ModelError, match="invalid GBNF grammar") as info:
        run(backend, ask("a", grammar="root ::= = broken"))
    assert info.value.kind == "bad_request" and not info.value.retryable
    assert FakeLlama.instances[0].calls == []


def test_image_parts_are_unsupported(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    image = ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo="))
    request = ChatRequest(messages=[Message(role="user", content=[TextPart(text="dish?"), image])])
    with pytest.raises(ModelError, match="text-only") as info:
        run(backend, request)
    assert info.value.kind == "unsupported" and not info.value.retryable
    assert FakeLlama.instances == []


def test_llama_cpp_errors_are_bad_requests(fake_llama_cpp: Any, gguf: Path) -> None:
    with pytest.raises(ModelError, match="exceed context window") as info:
        run(LlamaCppBackend(gguf), ask("overflow"))
    assert info.value.kind == "bad_request" and not info.value.retryable


def test_a_model_that_does_not_load_is_unsupported(fake_llama_cpp: Any, gguf: Path) -> None:
    with pytest.raises(ModelError, match="could not load") as info:
        run(LlamaCppBackend(gguf, n_ctx=13), ask())
    assert info.value.kind == "unsupported" and not info.value.retryable


def test_calls_run_one_at_a_time_off_the_event_loop(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)

    async def go() -> tuple[list[Any], int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        task = asyncio.create_task(ticker())
        results = await asyncio.gather(*(backend.generate(ask(f"q{i}")) for i in range(5)))
        task.cancel()
        return results, ticks

    results, ticks = asyncio.run(go())
    assert [r.text for r in results] == [f"Q{i}" for i in range(5)]
    assert FakeLlama.instances[0].max_active == 1
    assert ticks > 5  # the loop kept running while llama.cpp "computed" (5 x 20 ms)


def test_a_backend_can_be_shared_between_event_loops(fake_llama_cpp: Any, gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)

    async def burst() -> None:
        await asyncio.gather(*(backend.generate(ask(f"q{i}")) for i in range(3)))

    asyncio.run(burst())
    thread = threading.Thread(target=lambda: asyncio.run(burst()))
    thread.start()
    asyncio.run(burst())
    thread.join()
    assert len(FakeLlama.instances[0].calls) == 9 and FakeLlama.instances[0].max_active == 1


def test_aclose_frees_the_model_and_a_later_call_reloads(fake_llama_cpp: Any,
                                                          gguf: Path) -> None:
    backend = LlamaCppBackend(gguf)
    run(backend, ask())
    asyncio.run(backend.aclose())
    assert FakeLlama.instances[0].closed
    run(backend, ask())
    assert len(FakeLlama.instances) == 2
    asyncio.run(backend.aclose())
    asyncio.run(backend.aclose())  # closing twice is harmless


# -- the real SmolLM2 bundle, in-process (slow) ----------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LlamaCppBackend]:
    pytest.importorskip("llama_cpp")
    real_bundle("smollm2")
    backend = get_backend("llamacpp/smollm2?n_ctx=2048&n_threads=2")
    assert isinstance(backend, LlamaCppBackend)
    yield backend
    asyncio.run(backend.aclose())


@pytest.mark.slow
def test_smollm2_plain_generation(smollm2: LlamaCppBackend) -> None:
    assert smollm2.identity()["model"] == SMOLLM2_RUN
    assert smollm2.identity()["size_bytes"] > 50_000_000
    response = run(smollm2, ask(max_tokens=8))
    assert response.text.strip()
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.usage.completion_tokens <= 8
    assert response.latency_s > 0 and response.finish_reason in ("stop", "length")
    assert response.model == SMOLLM2_RUN and response.raw["model"] == SMOLLM2_RUN
    assert smollm2.load_s is not None
    json.dumps(response.raw)


@pytest.mark.slow
def test_smollm2_json_mode_gives_json(smollm2: LlamaCppBackend) -> None:
    request = ChatRequest(messages=[
        system("Reply in JSON."),
        user('Is rice gluten free? Reply as {"answer": "Yes"} or {"answer": "No"}.')],
        settings=GenerationSettings(json_mode=True, max_tokens=16))
    response = run(smollm2, request)
    # A 16-token cap can cut an object short; llama.cpp's JSON grammar keeps the prefix valid.
    if response.finish_reason == "stop":
        json.loads(response.text)
    else:
        assert response.text.lstrip().startswith(("{", "["))


@pytest.mark.slow
def test_smollm2_grammar_gives_exactly_yes_or_no(smollm2: LlamaCppBackend) -> None:
    response = run(smollm2, ask(grammar='root ::= "Yes" | "No"', max_tokens=8))
    assert response.text in ("Yes", "No")


@pytest.mark.slow
@pytest.mark.parametrize("grammar", ["root ::= = broken", 'start ::= "Yes"'])
def test_smollm2_bad_grammar_is_a_bad_request(smollm2: LlamaCppBackend, grammar: str) -> None:
    # llama-cpp-python 0.3.36 segfaults on these unless the backend checks them first.
    with pytest.raises(ModelError, match="invalid GBNF grammar") as info:
        run(smollm2, ask(grammar=grammar, max_tokens=4))
    assert info.value.kind == "bad_request"
    assert run(smollm2, ask(grammar='root ::= "Yes" | "No"', max_tokens=4)).text in ("Yes", "No")


@pytest.mark.slow
def test_smollm2_temperature_zero_is_repeatable(smollm2: LlamaCppBackend) -> None:
    request = ask("Name one food that is high in fibre.", temperature=0.0, max_tokens=16)
    assert run(smollm2, request).text == run(smollm2, request).text


@pytest.mark.slow
def test_smollm2_seed_makes_sampling_repeatable(smollm2: LlamaCppBackend) -> None:
    request = ask("Name one food that is high in fibre.", temperature=1.0, max_tokens=16, seed=11)
    assert run(smollm2, request).text == run(smollm2, request).text


@pytest.mark.slow
def test_smollm2_context_overflow_is_a_bad_request(smollm2: LlamaCppBackend) -> None:
    with pytest.raises(ModelError) as info:
        run(smollm2, ask("rice " * 3000, max_tokens=4))
    assert info.value.kind == "bad_request" and not info.value.retryable


@pytest.mark.slow
def test_smollm2_concurrent_calls_are_serialised(smollm2: LlamaCppBackend) -> None:
    async def go() -> list[Any]:
        return await asyncio.gather(*(smollm2.generate(ask(max_tokens=4)) for _ in range(3)))

    texts = {r.text for r in asyncio.run(go())}
    assert len(texts) == 1  # same request at temperature 0: same answer, no corruption


# -- SmolLM2 behind `python -m llama_cpp.server`, through the OpenAI-compatible backend (slow) --

SERVER_LIFETIME_S = 180  # the server process stops itself after this, whatever happens here
SERVER_READY_S = 60
_SERVER_MAIN = (
    "import runpy, signal, sys; signal.alarm(int(sys.argv.pop(1))); "
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)"
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_ready(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited ({process.returncode}):\n"
                        f"{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    pytest.fail(f"llama_cpp.server not ready after {SERVER_READY_S} s:\n"
                f"{log.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a llama.cpp server running SmolLM2."""
    if not hasattr(__import__("signal"), "SIGALRM"):
        pytest.skip("the server watchdog needs SIGALRM (POSIX)")
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                   "pydantic_settings", "openai"):
        pytest.importorskip(module)
    model = real_bundle("smollm2") / SMOLLM2_FILE
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    command = [sys.executable, "-c", _SERVER_MAIN, str(SERVER_LIFETIME_S),
               "--host", "127.0.0.1", "--port", str(port), "--model", str(model),
               "--model_alias", "smollm2", "--n_ctx", "2048", "--n_threads", "2"]
    env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "HOST", "PORT")}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        _wait_ready(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.slow
def test_smollm2_behind_llama_cpp_server(llama_server: str) -> None:
    backend = get_backend(f"openai-compatible/smollm2@{llama_server}")

    async def go() -> Any:
        try:
            return await backend.generate(ask(max_tokens=8))
        finally:
            await backend.aclose()

    response = asyncio.run(go())
    assert response.text.strip()
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.latency_s > 0 and response.finish_reason in ("stop", "length")
