"""Provider strings -> backends, through a registry that other code extends by decorator.

``openai/<model>``, ``openai-compatible/<model>@<base_url>[,<base_url>...]``,
``llamacpp/smollm2`` or ``llamacpp/<path.gguf>``, ``scripted/<name>``. Options follow a ``?``:
``scripted/echo?latency=0.2&error_rate=0.1``, ``openai/gpt-4o-mini?timeout=30``.
SDKs are imported only when their backend is asked for.

A new provider is one function registered with :func:`register_backend`::

    @register_backend("replay")
    def replay(model: str, options: dict[str, Any]) -> Backend: ...

(or a ``nutrireason.backends`` entry point of another package that does so on import).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any
from urllib.parse import parse_qsl, urlencode

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend

Factory = Callable[[str, dict[str, Any]], Backend]
SECRET_OPTIONS = ("key", "token", "secret", "password")
_FACTORIES: dict[str, Factory] = {}
_plugins_loaded = False
_MODEL_AT_URL = re.compile(r"(.+?)@(https?://.*)\Z", re.DOTALL)


def register_backend(provider: str) -> Callable[[Factory], Factory]:
    """Decorator: ``factory(model, options) -> Backend`` builds the backends of ``provider``."""
    def wrap(factory: Factory) -> Factory:
        _FACTORIES[provider] = factory
        return factory
    return wrap


def providers() -> tuple[str, ...]:
    """Every registered provider (built-in ones first)."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        for entry in entry_points(group="nutrireason.backends"):
            entry.load()
    return tuple(_FACTORIES)


def parse_spec(spec: str) -> tuple[str, str, dict[str, Any]]:
    """Split ``provider/model?k=v&...`` into (provider, model, options with numbers parsed)."""
    head, _, query = spec.partition("?")
    provider, sep, model = head.partition("/")
    if not sep or not model or provider not in providers():
        raise NutriReasonError(
            f"model {spec!r} is not a provider string; expected one of "
            "openai/<model>, openai-compatible/<model>@<base_url>, llamacpp/<name or .gguf path>, "
            f"scripted/<name> (registered providers: {', '.join(providers())})")
    options = {k: _number(v) for k, v in parse_qsl(query, strict_parsing=False)}
    secret = [k for k in options if any(word in k.lower() for word in SECRET_OPTIONS)]
    if secret:
        raise NutriReasonError(
            f"option {secret[0]!r} looks like a secret; provider strings are recorded in "
            "manifests, so pass keys through environment variables (OPENAI_API_KEY, "
            "NUTRIREASON_API_KEY)")
    return provider, model, options


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def model_label(spec: str) -> str:
    """The model a spec names, without where it is served: ``provider/model`` and the spec's
    options, sorted. ``openai-compatible/Qwen2.5-7B@http://a:8000/v1,http://b:8000/v1?timeout=30``
    -> ``openai-compatible/Qwen2.5-7B?timeout=30``; other specs keep their model part whole."""
    provider, model, _ = parse_spec(spec)
    if provider == "openai-compatible":
        model = split_endpoints(model)[0] or model
    options = sorted(parse_qsl(spec.partition("?")[2]))
    label = f"{provider}/{model}"
    return f"{label}?{urlencode(options)}" if options else label


def split_endpoints(model: str) -> tuple[str, str]:
    """``"Qwen@http://a/v1,http://b/v1"`` -> ``("Qwen", "http://a/v1,http://b/v1")``: the
    model name ends at the first ``@`` that an http(s) URL follows (else at the last ``@``);
    ``("", "")`` when there is no ``@``."""
    found = _MODEL_AT_URL.match(model)
    if found:
        return found[1], found[2]
    name, at, urls = model.rpartition("@")
    return (name, urls) if at else ("", "")


def get_backend(spec: str, **overrides: Any) -> Backend:
    """Build the backend a provider string names."""
    provider, model, options = parse_spec(spec)
    return _FACTORIES[provider](model, options | overrides)


@register_backend("openai")
def _openai(model: str, options: dict[str, Any]) -> Backend:
    from nutrireason.models.openai_compat import OpenAICompatBackend

    return OpenAICompatBackend(model, base_url=None, provider="openai", **options)


@register_backend("openai-compatible")
def _openai_compatible(model: str, options: dict[str, Any]) -> Backend:
    from nutrireason.models.openai_compat import OpenAICompatBackend

    name, base_url = split_endpoints(model)
    if not name or not base_url:
        raise NutriReasonError(f"model {model!r}: expected openai-compatible/<model>@<url> "
                               "(several servers: @<url>,<url>)")
    return OpenAICompatBackend(name, base_url=base_url, provider="openai-compatible", **options)


@register_backend("llamacpp")
def _llamacpp(model: str, options: dict[str, Any]) -> Backend:
    from nutrireason.models.llamacpp import LlamaCppBackend

    return LlamaCppBackend.from_name(model, **options)


@register_backend("human")
def _human(model: str, options: dict[str, Any]) -> Backend:
    from nutrireason.models.participant import HumanBackend

    if options:
        raise NutriReasonError(f"model 'human/{model}' takes no options: {sorted(options)}")
    return HumanBackend(model)


@register_backend("scripted")
def _scripted(model: str, options: dict[str, Any]) -> Backend:
    from nutrireason.models.scripted import ScriptedBackend

    try:
        return ScriptedBackend(model, **options)
    except TypeError as exc:
        raise NutriReasonError(f"model 'scripted/{model}': unknown option ({exc})") from exc
