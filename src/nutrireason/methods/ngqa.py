"""NGQA Graph-RAG methods (paper section 5.1, Appendix C): Plain, KAPING, CoT-Zero, CoT-BAG, and a
symbolic oracle. Think-on-Graph lives in :mod:`nutrireason.methods.tog`.

Items are NGQA task records (``nutrireason ngqa build``): ``task``, ``question``, ``triples``,
``edges``, ``answer``. Each method sends one request (system + user prompt) and parses the text;
the oracle answers from the graph's match/contradict edges without a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nutrireason.methods.base import (
    Generator,
    Method,
    MethodInfo,
    Prediction,
    register_method,
)
from nutrireason.methods.ngqa_prompts import (
    BASE_METHOD_PROMPT,
    COT_BAG_PROMPT,
    COT_ZERO_PROMPT,
    SYSTEM_PROMPT,
    Triple,
    edge_list_text,
    reader_for,
    triples_text,
    user_prompt,
)
from nutrireason.methods.reading import read_response
from nutrireason.models.errors import MissingDependency
from nutrireason.models.types import ChatRequest, GenerationSettings, Message
from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.ngqa.questions import USER_NODE, gold_answers

LINKS = ("match", "contradict", "need")
Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]


def item_triples(item: dict[str, Any]) -> list[Triple]:
    """The question graph's triples, as tuples."""
    return [tuple(t) for t in item["triples"]]  # type: ignore[misc]


class GraphRagMethod(Method):
    """One call: question + method prompt + textualised retrieved graph + task note."""

    method_prompt: str = BASE_METHOD_PROMPT

    def retrieve(self, item: dict[str, Any]) -> list[Triple]:
        """The triples this method gives the model (Plain: all of them)."""
        return item_triples(item)

    def graph_text(self, triples: list[Triple]) -> str:
        return triples_text(triples)

    def messages(self, item: dict[str, Any]) -> tuple[list[Message], list[Triple]]:
        """The chat messages for ``item`` and the triples they carry."""
        triples = self.retrieve(item)
        text = user_prompt(item["question"], self.method_prompt, self.graph_text(triples),
                           item["task"])
        return [Message(role="system", content=SYSTEM_PROMPT),
                Message(role="user", content=text)], triples

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        messages, triples = self.messages(item)
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        reading = read_response(response, reader_for(item["task"]))
        return Prediction(reading.value, reading.ok, retrieved=[list(t) for t in triples],
                          extra={"reading": reading.audit()})


class PlainMethod(GraphRagMethod):
    """All triples of the question's graph (a naive Graph-RAG pipeline)."""

    name = "plain"
    info = MethodInfo(benchmark="ngqa", demo=True, exported=True, default=True)


class KapingMethod(GraphRagMethod):
    """The subgraph induced by the question's entities (user, food) and their neighbours;
    optionally the ``top_k`` triples most similar to the question by MiniLM embeddings, as the
    original KAPING paper did (NGQA skipped this step)."""

    name = "kaping"
    info = MethodInfo(benchmark="ngqa", demo=True, exported=True)

    def __init__(self, settings: GenerationSettings | None = None, top_k: int | None = None,
                 embedder: Embedder | None = None) -> None:
        super().__init__(settings)
        self.top_k = top_k
        self.embedder = embedder

    def retrieve(self, item: dict[str, Any]) -> list[Triple]:
        triples = item_triples(item)
        entities = {USER_NODE, item["food"]}
        near = entities | {t for h, _, t in triples if h in entities} | {
            h for h, _, t in triples if t in entities}
        kept = [(h, r, t) for h, r, t in triples if h in near and t in near]
        if self.top_k is None or len(kept) <= self.top_k:
            return kept
        return self._top_k(item["question"], kept)

    def _top_k(self, question: str, triples: list[Triple]) -> list[Triple]:
        embed = self.embedder or minilm_embedder()
        vectors = embed([question, *(f"({h} {r} {t})" for h, r, t in triples)])
        query, rest = vectors[0], vectors[1:]
        scores = [sum(a * b for a, b in zip(query, v, strict=True)) for v in rest]
        best = sorted(range(len(triples)), key=lambda i: (-scores[i], i))[: self.top_k]
        return [triples[i] for i in sorted(best)]

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"top_k": self.top_k}


class CotZeroMethod(GraphRagMethod):
    """One-step zero-shot chain of thought with the final-output requirement."""

    name = "cot-zero"
    info = MethodInfo(benchmark="ngqa", demo=True, exported=True)
    method_prompt = f"{BASE_METHOD_PROMPT} {COT_ZERO_PROMPT}"


class CotBagMethod(GraphRagMethod):
    """Build-a-Graph prompting: the graph as attributed edges, then step-by-step reasoning."""

    name = "cot-bag"
    info = MethodInfo(benchmark="ngqa", demo=True, exported=True)
    method_prompt = f"{BASE_METHOD_PROMPT} {COT_BAG_PROMPT}"

    def graph_text(self, triples: list[Triple]) -> str:
        return edge_list_text(triples)


class OracleMethod(Method):
    """Answers exactly from the graph's match/contradict edges, without a model: the ceiling
    of the benchmark and a standing check that the gold answers are consistent."""

    name = "oracle"
    info = MethodInfo(needs_model=False, benchmark="ngqa", reference=True,
                      left_out="answers from the graph, no model")

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        edges = [(h, r, t) for h, r, t in item_triples(item) if r in LINKS]
        gold = gold_answers(edges, load_ngqa_config())
        return Prediction(gold[item["task"]], True, retrieved=[list(e) for e in edges])


def minilm_embedder() -> Embedder:
    """Sentence embeddings from the packaged all-MiniLM-L6-v2 (extra ``bertscore``)."""
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependency("torch and transformers", "bertscore") from exc
    from nutrireason.sources.bundles import require

    path = require("minilm") / "model"
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        batch = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(pooled, dim=1).tolist()

    return embed


for _method in (PlainMethod, KapingMethod, CotZeroMethod, CotBagMethod, OracleMethod):
    register_method(_method.name, _method)
