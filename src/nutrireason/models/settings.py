"""Generation settings by name: ``--gen KEY=VALUE`` parsing, and which settings a backend honours.

Every backend names the settings it passes on to its model in ``supported_settings``;
:func:`check_settings` refuses the others by name, before any call, so a setting is never
silently ignored. :func:`effective_settings` is what is sent, for manifests and records.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from nutrireason.errors import NutriReasonError
from nutrireason.models.base import Backend
from nutrireason.models.errors import ModelError
from nutrireason.models.types import ALL_SETTINGS, GenerationSettings

NONE_WORDS = ("none", "null")


def parse_gen(pairs: Iterable[str]) -> dict[str, Any]:
    """``["top_p=0.9", "stop=###", "stop=END"]`` -> ``{"top_p": 0.9, "stop": ["###", "END"]}``.

    Keys are :class:`GenerationSettings` fields (``-`` reads as ``_``); values are typed by the
    field; ``none`` or ``null`` leaves a field to the provider's default. ``stop`` may repeat or
    take a JSON list (``stop=["\\n\\n", "END"]``); any other key may appear once.
    """
    raw: dict[str, Any] = {}
    for pair in pairs:
        key, value = _split_pair(pair)
        if key == "stop":
            raw["stop"] = [*raw.get("stop", []), *_stop_values(value)]
        elif key in raw:
            raise NutriReasonError(f"--gen {key} is given twice")
        else:
            raw[key] = None if value.strip().lower() in NONE_WORDS else value
    return {key: _typed(key, value) for key, value in raw.items()}


def _split_pair(pair: str) -> tuple[str, str]:
    key, sep, value = pair.partition("=")
    key = key.strip().lower().replace("-", "_")
    if not sep or not key:
        raise NutriReasonError(f"--gen {pair!r}: expected KEY=VALUE, e.g. top_p=0.9")
    if key not in ALL_SETTINGS:
        raise NutriReasonError(f"--gen: unknown setting {key!r}; known settings: "
                               f"{', '.join(sorted(ALL_SETTINGS))}")
    return key, value


def _stop_values(value: str) -> list[str]:
    if not value.lstrip().startswith("["):
        return [value]
    try:
        values = json.loads(value)
    except json.JSONDecodeError:
        values = None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise NutriReasonError(f"--gen stop={value!r}: a value starting with '[' must be a JSON "
                               "list of strings")
    return values


def _typed(key: str, value: Any) -> Any:
    try:
        settings = GenerationSettings.model_validate({key: value})
    except ValidationError as error:
        reason = error.errors()[0]["msg"]
        raise NutriReasonError(f"--gen {key}={value!r}: {reason}") from None
    return getattr(settings, key)


def requested_settings(settings: GenerationSettings) -> list[str]:
    """The settings a request asks for: not None (``json_mode`` true, ``stop`` not empty)."""
    names = []
    for name in GenerationSettings.model_fields:
        value = getattr(settings, name)
        if value is None or (name in ("json_mode", "stop") and not value):
            continue
        names.append(name)
    return names


def unsupported_settings(backend: Backend, settings: GenerationSettings) -> list[str]:
    """The requested settings ``backend`` cannot honour, in field order."""
    return [n for n in requested_settings(settings) if n not in backend.supported_settings]


def check_settings(backend: Backend, settings: GenerationSettings) -> None:
    """Refuse, by name, settings ``backend`` cannot honour.

    Raises :class:`ModelError` of kind ``unsupported`` (a :class:`NutriReasonError`, never
    retried), so the same check serves a run's start and each ``generate`` call.
    """
    refused = unsupported_settings(backend, settings)
    if refused:
        honoured = ", ".join(sorted(backend.supported_settings))
        raise ModelError("unsupported", f"{backend.name} cannot honour the generation "
                         f"setting(s) {', '.join(refused)}; it honours: {honoured}")


def effective_settings(backend: Backend, settings: GenerationSettings) -> dict[str, Any]:
    """What ``backend`` sends for ``settings`` (the requested fields, JSON-ready); refuses
    unsupported ones as :func:`check_settings` does. Parameters a provider later rejects are
    reported apart, in ``describe()["dropped_params"]`` and each response's ``dropped_params``.
    """
    check_settings(backend, settings)
    data = settings.model_dump(mode="json")
    return {name: data[name] for name in requested_settings(settings)}
