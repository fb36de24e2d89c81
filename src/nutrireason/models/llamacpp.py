"""A GGUF model run in-process by llama.cpp (``llama-cpp-python``, the ``local`` extra).

``llamacpp/smollm2`` is the offline bundle (``nutrireason data pull --only smollm2``), run from
an F16 copy of its Q4_1 weights written next to it on first use (the same weights to f16
precision: llama.cpp's fast CPU matrix kernels do not take Q4_1); ``llamacpp/<path.gguf>`` is any
GGUF file, run as it is. Options come from the provider string:
``llamacpp/smollm2?n_ctx=4096&n_threads=2``. By default llama.cpp uses every core this process
may run on (``$NUTRIREASON_LLAMA_THREADS`` when set: for several processes sharing a machine),
for prompt reading and generation alike (llama-cpp-python's own default generates on half of
them), and flash attention (``flash_attn=0`` turns it off). On a 2-core machine
``benchmarks/llamacpp_threads.py`` measured the bundle run this way reading prompts 2.14 times
and generating 1.36 times as fast as its file with llama-cpp-python's defaults.

The model is loaded on the first call (SmolLM2-135M loads in about 0.2 s), in a worker thread,
so that building a backend (for a manifest, a cache lookup) costs nothing. One ``Llama`` object
is not thread-safe: calls run one at a time, in a worker thread (``asyncio.to_thread``), behind
an ``asyncio.Lock`` (queueing) and a ``threading.Lock`` (safety when a cancelled caller's thread
is still running, or when the backend is shared between event loops).
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import inspect
import json
import logging
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend
from nutrireason.models.errors import MissingDependency, ModelError
from nutrireason.models.settings import check_settings
from nutrireason.models.types import (
    ALL_SETTINGS,
    SAMPLING_SETTINGS,
    ChatRequest,
    GenerationSettings,
    ModelResponse,
    Usage,
)
from nutrireason.paths import bundles_dir

BUNDLES: dict[str, tuple[str, str]] = {
    "smollm2": ("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
FINGERPRINT_BYTES = 1 << 20
THREADS_VAR = "NUTRIREASON_LLAMA_THREADS"
OPTIONS = ("n_ctx", "n_threads", "n_gpu_layers", "flash_attn", "verbose")


class LlamaCppBackend(Backend):
    """One GGUF chat model run by llama.cpp in this process.

    ``json_mode`` sends ``response_format={"type": "json_object"}`` (llama.cpp constrains the
    output with its JSON grammar); ``settings.grammar`` (GBNF) constrains it with that grammar
    and wins over ``json_mode`` when both are given; it is checked with llama.cpp's own parser
    first (llama-cpp-python 0.3.36 segfaults on a grammar it cannot parse). ``seed`` makes a
    sampled call repeatable; without one, llama-cpp-python derives each call's seed from the
    previous one, so unseeded calls repeat only as a sequence from a fresh load. ``raw`` is the
    completion dict with its ``model`` field (llama.cpp puts the absolute path there) replaced by
    the file name. Every :class:`GenerationSettings` field is honoured: the sampling ones
    (``top_p``, ``top_k``, ``min_p``, ``repeat_penalty``, presence and frequency penalties) go to
    ``create_chat_completion`` under their own names.
    """

    provider = "llamacpp"
    supported_settings = ALL_SETTINGS

    def __init__(self, model_path: str | Path, *, n_ctx: int = 2048, n_threads: int | None = None,
                 n_gpu_layers: int = 0, flash_attn: bool = True, verbose: bool = False,
                 **options: Any) -> None:
        path = Path(model_path).expanduser()
        if options:
            raise NutriReasonError(
                f"llamacpp/{path.name}: unknown backend option(s) {sorted(options)}; "
                f"expected: {', '.join(OPTIONS)}")
        self.n_ctx = _positive_int("n_ctx", n_ctx)
        self.n_threads = default_threads() if n_threads is None else \
            _positive_int("n_threads", n_threads)
        self.flash_attn = _bool("flash_attn", flash_attn)
        self.n_gpu_layers = _int("n_gpu_layers", n_gpu_layers)
        self.verbose = _bool("verbose", verbose)
        self.path = _check_gguf(path)
        self.model = self.path.name
        self.size_bytes = self.path.stat().st_size
        self.sha256_1mb = _head_sha256(self.path)
        self._llama_cpp = import_llama_cpp()
        self._llm: Any = None
        self.load_s: float | None = None
        self._good_grammars: set[str] = set()
        self._thread_lock = threading.Lock()
        self._locks: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()

    @classmethod
    def from_name(cls, name: str, **options: Any) -> LlamaCppBackend:
        """``"smollm2"`` (the offline bundle) or a path to a ``.gguf`` file."""
        if name in BUNDLES:
            return cls(f16_copy(bundled_model_path(name)), **options)
        return cls(name, **options)

    # -- description -------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "size_bytes": self.size_bytes,
                "sha256_1mb": self.sha256_1mb}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {
            "path": str(self.path), "n_ctx": self.n_ctx, "n_threads": self.n_threads,
            "n_gpu_layers": self.n_gpu_layers, "flash_attn": self.flash_attn,
            "load_s": self.load_s,
            "llama_cpp_version": getattr(self._llama_cpp, "__version__", None)}

    def server_defaults(self) -> dict[str, Any] | None:
        """llama-cpp-python's defaults for the settings a request leaves unset (the keyword
        defaults of ``create_chat_completion``), read without loading the model."""
        try:
            signature = inspect.signature(self._llama_cpp.Llama.create_chat_completion)
        except (AttributeError, TypeError, ValueError):
            return None
        defaults = {}
        for name in GenerationSettings.model_fields:
            parameter = signature.parameters.get(name)
            if parameter is not None and parameter.default is not inspect.Parameter.empty:
                defaults[name] = parameter.default
        return defaults or None

    # -- loading -----------------------------------------------------------------------------

    @property
    def llm(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loads it if needed); for benchmarks and debugging."""
        with self._thread_lock:
            return self._load()

    def _load(self) -> Any:
        """Load the model once; the caller holds ``_thread_lock``."""
        if self._llm is None:
            started = time.perf_counter()
            kwargs: dict[str, Any] = {
                "model_path": str(self.path), "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "n_threads_batch": self.n_threads, "n_gpu_layers": self.n_gpu_layers,
                "flash_attn": self.flash_attn, "verbose": self.verbose}
            try:
                self._llm = self._llama_cpp.Llama(**kwargs)
            except Exception as error:
                raise ModelError("unsupported", f"{self.name}: llama.cpp could not load "
                                 f"{self.path}: {type(error).__name__}: {error}") from None
            self.load_s = time.perf_counter() - started
        return self._llm

    # -- the call ----------------------------------------------------------------------------

    async def generate(self, request: ChatRequest) -> ModelResponse:
        if any(m.has_images() for m in request.messages):
            raise ModelError("unsupported", f"{self.name} is a text-only model: the request "
                             "has image parts")
        check_settings(self, request.settings)
        kwargs = self._request_kwargs(request)
        async with self._lock():
            return await asyncio.to_thread(self._generate_sync, kwargs)

    def _lock(self) -> asyncio.Lock:
        """One asyncio.Lock per event loop (a lock is bound to the loop it first waits in)."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        settings = request.settings
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.text()} for m in request.messages]}
        if settings.temperature is not None:
            kwargs["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            kwargs["max_tokens"] = settings.max_tokens
        if settings.stop:
            kwargs["stop"] = list(settings.stop)
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        for name in SAMPLING_SETTINGS:
            if getattr(settings, name) is not None:
                kwargs[name] = getattr(settings, name)
        if settings.grammar is not None:
            kwargs["grammar"] = settings.grammar  # checked and compiled in the worker thread
        elif settings.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _grammar(self, llm: Any, text: str) -> Any:
        """A checked ``LlamaGrammar``: llama.cpp 0.3.x segfaults on a grammar it cannot parse."""
        if text not in self._good_grammars:
            lib = self._llama_cpp
            vocab = lib.llama_model_get_vocab(llm.model)
            sampler = lib.llama_sampler_init_grammar(vocab, text.encode("utf-8"), b"root")
            if not sampler:
                raise ModelError("bad_request", f"{self.name}: invalid GBNF grammar (llama.cpp "
                                 f"could not parse it or it has no root rule): {text[:200]!r}")
            lib.llama_sampler_free(sampler)
            self._good_grammars.add(text)
        return self._llama_cpp.LlamaGrammar.from_string(text, verbose=self.verbose)

    def _generate_sync(self, kwargs: dict[str, Any]) -> ModelResponse:
        with self._thread_lock:
            llm = self._load()
            if "grammar" in kwargs:
                kwargs = kwargs | {"grammar": self._grammar(llm, kwargs["grammar"])}
            started = time.perf_counter()
            try:
                completion = llm.create_chat_completion(**kwargs)
            except Exception as error:
                raise ModelError("bad_request", f"{self.name}: llama.cpp failed: "
                                 f"{type(error).__name__}: {error}") from None
            latency = time.perf_counter() - started
        return self._to_response(completion, latency)

    def _to_response(self, completion: dict[str, Any], latency: float) -> ModelResponse:
        raw = json.loads(json.dumps(completion, default=str))
        raw["model"] = self.model
        choice = raw["choices"][0]
        usage = raw.get("usage") or {}
        return ModelResponse(
            text=(choice.get("message") or {}).get("content") or "",
            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                        completion_tokens=int(usage.get("completion_tokens") or 0)),
            latency_s=latency,
            model=self.model,
            finish_reason=choice.get("finish_reason"),
            reasoning=(choice.get("message") or {}).get("reasoning_content") or None,
            raw=raw,
        )

    async def aclose(self) -> None:
        """Free the model's memory; a later call loads it again."""
        async with self._lock():
            await asyncio.to_thread(self._close_sync)

    def _close_sync(self) -> None:
        with self._thread_lock:
            llm, self._llm = self._llm, None
            close = getattr(llm, "close", None)
            if callable(close):
                close()


def default_threads() -> int:
    """``$NUTRIREASON_LLAMA_THREADS`` (a positive integer) when set, else every usable core."""
    value = os.environ.get(THREADS_VAR, "").strip()
    if not value:
        return usable_cores()
    if not value.isdigit() or int(value) < 1:
        raise NutriReasonError(f"${THREADS_VAR}={value!r} is not a positive integer")
    return int(value)


def usable_cores() -> int:
    """The number of CPU cores this process may run on (its affinity mask where the platform
    has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


def import_llama_cpp() -> Any:
    """``llama_cpp``, or MissingDependency naming the ``local`` extra."""
    try:
        import llama_cpp
    except ImportError:
        raise MissingDependency("llama-cpp-python", "local") from None
    return llama_cpp


def bundled_model_path(name: str) -> Path:
    """The GGUF file of an offline bundle under the data home's ``bundles/`` (where
    ``nutrireason data pull`` unpacks it); a clear error when it has not been pulled."""
    bundle_id, filename = BUNDLES[name]
    path = bundles_dir() / bundle_id / filename
    if not path.is_file():
        raise ModelError("not_found", f"llamacpp/{name}: model file {path} not found; run "
                         f"`nutrireason data pull --only {bundle_id}`")
    return path


def f16_copy(path: Path) -> Path:
    """``<name>.F16.gguf`` beside a quantized GGUF file: its weights converted to f16 by
    llama.cpp (written once, atomically, so concurrent first uses are safe; again when the
    original is newer). The original when the copy cannot be written (a read-only data home)."""
    copy = path.with_name(f"{path.stem}.F16.gguf")
    if copy.is_file() and copy.stat().st_mtime >= path.stat().st_mtime:
        return copy
    llama_cpp = import_llama_cpp()
    partial = copy.with_name(f".{copy.name}.{os.getpid()}.partial")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype, params.allow_requantize = llama_cpp.LLAMA_FTYPE_MOSTLY_F16, True
    params.nthread = usable_cores()
    log = logging.getLogger("llama-cpp-python")  # llama.cpp's messages go through this logger
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        failed = llama_cpp.llama_model_quantize(str(path).encode(), str(partial).encode(),
                                                ctypes.byref(params))
        if not failed:
            os.replace(partial, copy)
    except OSError:
        failed = 1
    finally:
        log.setLevel(level)
        partial.unlink(missing_ok=True)
    return copy if not failed else path


def _check_gguf(path: Path) -> Path:
    if path.suffix.lower() != ".gguf":
        raise NutriReasonError(f"llamacpp/{path}: expected a bundled model name "
                               f"({', '.join(sorted(BUNDLES))}) or a path to a .gguf file")
    if not path.is_file():
        raise ModelError("not_found", f"llamacpp: model file {path} does not exist")
    return path.resolve()


def _head_sha256(path: Path) -> str:
    """sha256 of the first MiB: a cheap fingerprint that tells model files apart."""
    with path.open("rb") as handle:
        return hashlib.sha256(handle.read(FINGERPRINT_BYTES)).hexdigest()


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NutriReasonError(f"llamacpp option {name}={value!r} is not an integer")
    return value


def _positive_int(name: str, value: Any) -> int:
    if _int(name, value) <= 0:
        raise NutriReasonError(f"llamacpp option {name}={value!r} must be positive")
    return value


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise NutriReasonError(f"llamacpp option {name}={value!r} is not true/false")
