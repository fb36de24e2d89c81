"""The method contract: ``await method.answer(item, backend) -> Prediction``.

``backend`` is whatever has ``await generate(request)``; the run engine passes a proxy that adds
the cache, retries and call counting. Methods never catch model errors: a failed call propagates
and the engine records the sample as an error, never as an answer.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from nutrireason.errors import NutriReasonError
from nutrireason.models.types import ChatRequest, GenerationSettings, Message, ModelResponse


class Generator(Protocol):
    async def generate(self, request: ChatRequest) -> ModelResponse: ...


@dataclass
class Prediction:
    """A method's answer to one item: the parsed answer and whether parsing succeeded."""

    parsed: Any
    parse_ok: bool
    retrieved: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Method(ABC):
    """A prompting method. ``settings`` are the generation settings it sends."""

    name: str = ""

    def __init__(self, settings: GenerationSettings | None = None) -> None:
        self.settings = settings or GenerationSettings()

    @abstractmethod
    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        """Ask the model about ``item`` and parse what it says."""

    def gold(self, item: dict[str, Any]) -> Any:
        """The item's gold answer (``gold`` or ``answer`` field), or None."""
        return item.get("gold", item.get("answer"))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "settings": self.settings.model_dump(mode="json")}


class PromptMethod(Method):
    """Sends an item's own ``messages`` (or ``system`` + ``prompt``) and keeps the text answer.

    The generic method for any JSONL of prompts; benchmark-specific methods live beside it.
    """

    name = "prompt"

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        response = await backend.generate(ChatRequest(messages=self.messages(item),
                                                      settings=self.settings))
        text = response.text.strip()
        return Prediction(parsed=text, parse_ok=bool(text))

    @staticmethod
    def messages(item: dict[str, Any]) -> list[Message]:
        if "messages" in item:
            return [Message.model_validate(m) for m in item["messages"]]
        if "prompt" not in item:
            raise NutriReasonError(f"item {item.get('id')!r} has neither 'messages' nor 'prompt'")
        head = [Message(role="system", content=item["system"])] if item.get("system") else []
        return [*head, Message(role="user", content=str(item["prompt"]))]


_METHODS: dict[str, Callable[..., Method]] = {"prompt": PromptMethod}
# Modules whose import registers more methods; imported on first lookup.
_METHOD_MODULES = ("nutrireason.methods.ngqa", "nutrireason.methods.tog", "nutrireason.methods.fam")


def register_method(name: str, factory: Callable[..., Method]) -> None:
    """Make ``name`` available to ``get_method`` and ``nutrireason run --method``."""
    _METHODS[name] = factory


def get_method(name: str, settings: GenerationSettings | None = None) -> Method:
    """The method registered as ``name``."""
    if name not in _METHODS:
        for module in _METHOD_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
    if name not in _METHODS:
        raise NutriReasonError(f"unknown method {name!r}; known: {sorted(_METHODS)}")
    return _METHODS[name](settings)
