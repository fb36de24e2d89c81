"""The backend's llama.cpp defaults against llama-cpp-python's, on the same machine and model.

    python benchmarks/llamacpp_threads.py [--model smollm2|PATH.gguf] [--reps 3]
        [--prompt-words 300] [--max-tokens 128]

Loads the model three times: the bundle's file with llama-cpp-python's defaults (generation on
half the cores, prompt reading on all, no flash attention); the same file as
:class:`LlamaCppBackend` loads it by default (every usable core for both, flash attention); and
the backend's F16 copy of it (what ``llamacpp/smollm2`` runs). For each, it times reading a
prompt of ``--prompt-words`` words (the state reset before every repetition, so nothing is
reused) and generating ``--max-tokens`` tokens from a short prompt, rotating the order of the
loads in every repetition. Prints tokens per second and the ratio to llama-cpp-python's defaults
for prompt reading and generation (above 1: faster). Not a pass/fail test. Needs the ``local``
extra and, for ``smollm2``, the pulled bundle.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from nutrireason.models.llamacpp import (
    LlamaCppBackend,
    bundled_model_path,
    f16_copy,
    import_llama_cpp,
)

STORY = "Write a long story about a family cooking lentil soup together."


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2 or a path to a .gguf file")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--prompt-words", type=int, default=300)
    parser.add_argument("--max-tokens", type=int, default=128)
    return parser.parse_args(argv)


def read_rate(llm: Any, tokens: list[int]) -> float:
    """Prompt tokens read per second from an empty state."""
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    return len(tokens) / (time.perf_counter() - started)


def generate_rate(llm: Any, max_tokens: int) -> float:
    """Tokens generated per second (the short prompt's reading included)."""
    llm.reset()
    started = time.perf_counter()
    completion = llm.create_chat_completion(messages=[{"role": "user", "content": STORY}],
                                            max_tokens=max_tokens, temperature=0.0, seed=0)
    return completion["usage"]["completion_tokens"] / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    path = bundled_model_path(args.model) if not args.model.endswith(".gguf") else args.model
    loads = {"llama-cpp-python defaults": import_llama_cpp().Llama(
                 model_path=str(path), n_ctx=2048, verbose=False),
             "backend defaults, same file": LlamaCppBackend(path).llm,
             "backend defaults, F16 copy": LlamaCppBackend(f16_copy(Path(path))).llm}
    tokens = next(iter(loads.values())).tokenize(("lentils " * args.prompt_words).encode())
    rates: dict[str, dict[str, list[float]]] = {
        name: {"read": [], "generate": []} for name in loads}
    for rep in range(args.reps):
        names = list(loads)
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            rates[name]["read"].append(read_rate(loads[name], tokens))
            rates[name]["generate"].append(generate_rate(loads[name], args.max_tokens))
    base = "llama-cpp-python defaults"
    for kind in ("read", "generate"):
        mean = {name: sum(r[kind]) / len(r[kind]) for name, r in rates.items()}
        for name in loads:
            print(f"{kind:>8}  {name:<28} {mean[name]:7.1f} tok/s  ratio "
                  f"{mean[name] / mean[base]:.2f}")


if __name__ == "__main__":
    main()
