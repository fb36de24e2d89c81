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
from importlib.metadata import entry_points
from typing import Any, Protocol

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.methods.reading import found, read_response
from nutrireason.models.types import ChatRequest, GenerationSettings, Message, ModelResponse
from nutrireason.schema import MethodSpec


class Generator(Protocol):
    async def generate(self, request: ChatRequest) -> ModelResponse: ...


@dataclass
class Prediction:
    """A method's answer to one item: the parsed answer and whether parsing succeeded."""

    parsed: Any
    parse_ok: bool
    retrieved: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # per-answer figures scoring pools per group (the record's ``method_stats``); the method's
    # ``MethodInfo.stats_note`` says them in a sentence
    stats: dict[str, float | int | bool] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodInfo:
    """What a method declares, so that no other module lists method names.

    ``needs_model``: it calls a model (False: it runs with ``--model none``); ``benchmark``:
    the registered benchmark whose items it answers ("" for any JSONL of prompts);
    ``reference``: it answers from the benchmark's own knowledge (the symbolic reference a
    report sets beside the models); ``demo``: one of the methods `nutrireason demo` runs;
    ``exported``: `export lm-eval` writes it as a task (one model call per sample, the prompt
    from the item alone); ``left_out``: why the export leaves it out, for its README.
    ``default``: a run of its benchmark uses it when no ``--method`` is given.
    ``stats_note``: the sentence a report writes per method and model from the method's
    pooled statistics (:attr:`Prediction.stats`, averaged by scoring), a ``str.format``
    template over their names ("" for none).
    """

    needs_model: bool = True
    benchmark: str = ""
    reference: bool = False
    demo: bool = False
    exported: bool = False
    left_out: str = ""
    default: bool = False
    stats_note: str = ""


class Method(ABC):
    """A prompting method. ``settings`` are the generation settings it sends; ``info`` what it
    declares (:class:`MethodInfo`)."""

    name: str = ""
    params: dict[str, Any] = {}  # noqa: RUF012 - set per instance by get_method
    info: MethodInfo = MethodInfo()

    def __init__(self, settings: GenerationSettings | None = None) -> None:
        self.settings = settings or GenerationSettings()

    @abstractmethod
    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        """Ask the model about ``item`` and parse what it says."""

    def gold(self, item: dict[str, Any]) -> Any:
        """The item's gold answer (``gold`` or ``answer`` field), or None."""
        return item.get("gold", item.get("answer"))

    def describe(self) -> dict[str, Any]:
        described = {"name": self.name, "settings": self.settings.model_dump(mode="json")}
        if self.params:
            described["params"] = dict(self.params)
        return described


class PromptMethod(Method):
    """Sends an item's own ``messages`` (or ``system`` + ``prompt``) and keeps the final answer
    as text (reasoning set apart; an answer cut off is unparseable, reason ``truncated``).

    The generic method for any JSONL of prompts; benchmark-specific methods live beside it.
    """

    name = "prompt"

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        response = await backend.generate(ChatRequest(messages=self.messages(item),
                                                      settings=self.settings))
        reading = read_response(response, lambda final: found(final.strip(), "final_text"))
        return Prediction(parsed=reading.value or "", parse_ok=reading.ok,
                          extra={"reading": reading.audit()})

    @staticmethod
    def messages(item: dict[str, Any]) -> list[Message]:
        if "messages" in item:
            return [Message.model_validate(m) for m in item["messages"]]
        if "prompt" not in item:
            raise NutriReasonError(f"item {item.get('id')!r} has neither 'messages' nor 'prompt'")
        head = [Message(role="system", content=item["system"])] if item.get("system") else []
        return [*head, Message(role="user", content=str(item["prompt"]))]


_METHODS: dict[str, Callable[..., Method]] = {"prompt": PromptMethod}
_INFO: dict[str, MethodInfo] = {"prompt": PromptMethod.info}
# Modules whose import registers more methods; imported on first lookup.
_METHOD_MODULES = ("nutrireason.methods.ngqa", "nutrireason.methods.tog", "nutrireason.methods.fam")


def register_method(name: str, factory: Callable[..., Method] | None = None,
                    info: MethodInfo | None = None) -> Any:
    """Make ``name`` available to ``get_method`` and ``nutrireason run --method``.

    ``register_method("name", factory)``, or as a class decorator ``@register_method("name")``.
    A factory is called as ``factory(settings, **params)`` with the parameters of
    ``--method name:key=value,...``. ``info``: what the method declares (default: the class's
    ``info``, or a model-asking method of no benchmark).
    """
    def add(made: Callable[..., Method]) -> Callable[..., Method]:
        _METHODS[name] = made
        _INFO[name] = info or getattr(made, "info", None) or MethodInfo()
        return made

    return add(factory) if factory is not None else add


_plugins_loaded = False


def _load_methods() -> None:
    """Import the built-in method modules, then (once) the ``nutrireason.methods`` entry
    points of other packages and the registered benchmarks' modules: a module there
    registers its methods on import."""
    global _plugins_loaded
    for module in _METHOD_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    if not _plugins_loaded:
        _plugins_loaded = True
        for entry in entry_points(group="nutrireason.methods"):
            entry.load()
        # a benchmark package registers its methods beside its spec: load the benchmarks
        from nutrireason.schema import benchmark_names

        benchmark_names()


def method_infos() -> dict[str, MethodInfo]:
    """Every registered method's declaration, in registration order."""
    _load_methods()
    return dict(_INFO)


def declared(benchmark: str, **wanted: bool) -> list[str]:
    """The methods of ``benchmark`` whose declaration has every ``wanted`` value
    (``declared("ngqa", demo=True)``), in registration order."""
    return [name for name, info in method_infos().items() if info.benchmark == benchmark
            and all(getattr(info, key) == value for key, value in wanted.items())]


def method_info(name: str) -> MethodInfo | None:
    """What method ``name`` (parameters allowed: ``tog:width=2``) declares, or None when no
    such method is registered."""
    base = MethodSpec.parse(name).name
    if base not in _INFO:
        _load_methods()
    return _INFO.get(base)


def get_method(name: str, settings: GenerationSettings | None = None) -> Method:
    """The method ``name`` (``tog`` or ``tog:width=3,depth=2``), with its parameters.

    A method given parameters is named by its spec (``tog:depth=2,width=3``, keys sorted), so
    its records, groups and resume keys never mix with the defaults'.
    """
    spec = MethodSpec.parse(name)
    if spec.name not in _METHODS:
        _load_methods()
    if spec.name not in _METHODS:
        raise NutriReasonError(f"unknown method {spec.name!r}; known: {sorted(_METHODS)}")
    try:
        method = _METHODS[spec.name](settings, **spec.params)
    except TypeError as exc:
        raise DataError(None, f"method {spec.name!r} does not take these parameters ({exc})",
                        field="--method", value=name) from None
    except ValueError as exc:
        raise DataError(None, f"method {spec.name!r}: {exc}", field="--method",
                        value=name) from None
    if spec.params:
        method.name = spec.label
        method.params = dict(spec.params)
    return method
