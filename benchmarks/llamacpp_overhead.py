"""Overhead of LlamaCppBackend over calling llama.cpp directly, on the same loaded model.

    python benchmarks/llamacpp_overhead.py [--model smollm2|PATH.gguf] [--max-tokens 128]
        [--reps 6] [--n-threads 2]

Loads the model once (through the backend), warms it up, then alternates
``await backend.generate(request)`` and ``llm.create_chat_completion(...)`` (the same ``Llama``
object, same messages, temperature 0, same ``max_tokens``), swapping which goes first in every
repetition. Each call is timed from the caller's side (for the backend: request mapping, the
worker thread, the locks, the response model). Prints generated tokens per second for both, and
the ratio backend / direct (target: at least 0.95), the median of the ratios of each
repetition's adjacent pair (less sensitive to load drifting on a shared machine) and the
backend's own time per call (caller's time minus the llama.cpp call's ``latency_s``). Not a
pass/fail test: the exit status is 0 unless something failed. Needs the ``local`` extra and,
for ``smollm2``, the pulled bundle.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from nutrireason.models.llamacpp import LlamaCppBackend
from nutrireason.models.types import ChatRequest, GenerationSettings, user

PROMPT = ("Write a detailed paragraph about the nutritional value of brown rice, oats and "
          "lentils: fibre, protein, minerals and how to cook them.")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2 or a path to a .gguf file")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--reps", type=int, default=6, help="repetitions of each (alternating)")
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=2048)
    return parser.parse_args(argv)


Sample = tuple[int, float, str]  # (completion tokens, seconds, text)


async def time_backend(backend: LlamaCppBackend, request: ChatRequest,
                       wrapper_s: list[float]) -> Sample:
    """One call through the backend; appends its own time (outside llama.cpp) to wrapper_s."""
    started = time.perf_counter()
    response = await backend.generate(request)
    elapsed = time.perf_counter() - started
    wrapper_s.append(elapsed - response.latency_s)
    return response.usage.completion_tokens, elapsed, response.text


def time_direct(llm: Any, kwargs: dict[str, Any]) -> Sample:
    """One direct ``create_chat_completion``."""
    started = time.perf_counter()
    completion = llm.create_chat_completion(**kwargs)
    elapsed = time.perf_counter() - started
    text = completion["choices"][0]["message"]["content"] or ""
    return completion["usage"]["completion_tokens"], elapsed, text


def rate(samples: list[Sample]) -> float:
    """Tokens per second over all samples (total tokens / total seconds)."""
    return sum(s[0] for s in samples) / sum(s[1] for s in samples)


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    backend = LlamaCppBackend.from_name(args.model, n_ctx=args.n_ctx, n_threads=args.n_threads)
    llm = backend.llm  # loads the model once; both sides use this object
    request = ChatRequest(messages=[user(PROMPT)],
                          settings=GenerationSettings(temperature=0.0, max_tokens=args.max_tokens))
    direct_kwargs = {"messages": [{"role": "user", "content": PROMPT}], "temperature": 0.0,
                     "max_tokens": args.max_tokens}
    wrapper_s: list[float] = []
    await time_backend(backend, request, [])  # warm-up (prompt cache, first-call allocations)
    time_direct(llm, direct_kwargs)
    via_backend: list[Sample] = []
    direct: list[Sample] = []
    for rep in range(args.reps):
        if rep % 2 == 0:
            via_backend.append(await time_backend(backend, request, wrapper_s))
            direct.append(time_direct(llm, direct_kwargs))
        else:
            direct.append(time_direct(llm, direct_kwargs))
            via_backend.append(await time_backend(backend, request, wrapper_s))
    info = {"load_s": backend.load_s, "model": backend.model, "backend": via_backend,
            "direct": direct, "wrapper_s": wrapper_s}
    await backend.aclose()
    return info


def report(info: dict[str, Any]) -> None:
    via_backend, direct = info["backend"], info["direct"]
    same = {s[2] for s in via_backend} == {s[2] for s in direct}
    backend_rate, direct_rate = rate(via_backend), rate(direct)
    print(f"model {info['model']}  load {info['load_s']:.2f} s  "
          f"tokens per call {sorted({s[0] for s in via_backend + direct})}  "
          f"same text both ways: {same}")
    for label, samples in (("backend", via_backend), ("direct", direct)):
        per_call = [s[0] / s[1] for s in samples]
        print(f"{label:8s} {rate(samples):7.1f} tok/s  (per call: median "
              f"{statistics.median(per_call):.1f}, min {min(per_call):.1f}, "
              f"max {max(per_call):.1f})")
    ratio = backend_rate / direct_rate
    pairs = zip(via_backend, direct, strict=True)
    paired = statistics.median((b[0] / b[1]) / (d[0] / d[1]) for b, d in pairs)
    print(f"ratio backend/direct {ratio:.3f}  ({(ratio - 1) * 100:+.1f} %; target >= 0.95: "
          f"{'met' if ratio >= 0.95 else 'NOT met'}); median of paired ratios {paired:.3f}")
    wrapper_ms = [1000 * s for s in info["wrapper_s"]]
    print(f"backend's own time per call: median {statistics.median(wrapper_ms):.2f} ms, "
          f"max {max(wrapper_ms):.2f} ms (thread hop, locks, mapping, response model)")


def main(argv: list[str] | None = None) -> None:
    report(asyncio.run(measure(parse_args(argv))))


if __name__ == "__main__":
    main()
