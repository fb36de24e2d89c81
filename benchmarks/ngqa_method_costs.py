"""Model calls and prompt tokens per question for each NGQA method on 100 standard questions.

Runs every method through the run engine against a scripted backend (final answers "No",
pruning answers "1, 2, 3"), then counts the prompt tokens of every request the records hold
with SmolLM2's tokenizer (llama.cpp, vocabulary only; the `local` extra and the smollm2 bundle).
Token counts are of the message texts, without the chat template's few extra tokens.

    python benchmarks/ngqa_method_costs.py [--questions 100] [--task binary]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from nutrireason.models.scripted import register
from nutrireason.paths import builds_dir
from nutrireason.runs import RunConfig, read_records, run
from nutrireason.sources.bundles import require

METHODS = ["plain", "kaping", "cot-zero", "cot-bag", "tog", "oracle"]


def responder(request) -> str:
    text = request.messages[-1].text()
    return "1, 2, 3" if "Choose" in text or "choose" in text else "No"


def tokenizer():
    from llama_cpp import Llama

    model = require("smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    llm = Llama(str(model), vocab_only=True, verbose=False)
    return lambda text: len(llm.tokenize(text.encode("utf-8"), add_bos=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--task", default="binary")
    args = parser.parse_args()
    register("costs", responder)
    bench = builds_dir() / "ngqa" / "benchmark" / "standard" / f"{args.task}.jsonl"
    count = tokenizer()
    print(f"{args.questions} standard {args.task} questions from {bench}")
    print(f"{'method':10} {'calls/q':>8} {'max':>4} {'prompt tokens/q':>16} {'max':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for method in METHODS:
            out = Path(tmp) / method
            run(RunConfig(benchmark=bench, out=out, methods=[method], models=["scripted/costs"],
                          limit=args.questions, cache=False, progress=False))
            records = read_records(out)
            calls = [r.n_calls for r in records]
            tokens = [sum(count(m["content"] if isinstance(m["content"], str) else
                                " ".join(p.get("text", "") for p in m["content"]))
                          for q in r.requests for m in q["messages"]) for r in records]
            print(f"{method:10} {statistics.mean(calls):8.2f} {max(calls):4d} "
                  f"{statistics.mean(tokens):16.1f} {max(tokens):6d}")


if __name__ == "__main__":
    main()
