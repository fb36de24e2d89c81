"""Provider strings -> backends.

``openai/<model>``, ``openai-compatible/<model>@<base_url>``, ``llamacpp/smollm2`` or
``llamacpp/<path.gguf>``, ``scripted/<name>``. Options follow a ``?``:
``scripted/echo?latency=0.2&error_rate=0.1``, ``openai/gpt-4o-mini?timeout=30``.
SDKs are imported only when their backend is asked for.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend

PROVIDERS = ("openai", "openai-compatible", "llamacpp", "scripted")
SECRET_OPTIONS = ("key", "token", "secret", "password")


def parse_spec(spec: str) -> tuple[str, str, dict[str, Any]]:
    """Split ``provider/model?k=v&...`` into (provider, model, options with numbers parsed)."""
    head, _, query = spec.partition("?")
    provider, sep, model = head.partition("/")
    if not sep or not model or provider not in PROVIDERS:
        raise NutriReasonError(
            f"model {spec!r} is not a provider string; expected one of "
            "openai/<model>, openai-compatible/<model>@<base_url>, llamacpp/<name or .gguf path>, "
            "scripted/<name>")
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


def get_backend(spec: str, **overrides: Any) -> Backend:
    """Build the backend a provider string names."""
    provider, model, options = parse_spec(spec)
    options |= overrides
    if provider == "scripted":
        from nutrireason.models.scripted import ScriptedBackend

        try:
            return ScriptedBackend(model, **options)
        except TypeError as exc:
            raise NutriReasonError(f"model {spec!r}: unknown option ({exc})") from exc
    if provider in ("openai", "openai-compatible"):
        from nutrireason.models.openai_compat import OpenAICompatBackend

        base_url = None
        if provider == "openai-compatible":
            model, at, base_url = model.rpartition("@")
            if not at or not model or not base_url:
                raise NutriReasonError(f"model {spec!r}: expected openai-compatible/<model>@<url>")
        return OpenAICompatBackend(model, base_url=base_url, provider=provider, **options)
    from nutrireason.models.llamacpp import LlamaCppBackend

    return LlamaCppBackend.from_name(model, **options)
