"""``human/<participant>``: a person answering through ``nutrireason human serve``. There is no
model to call: the ``human`` method takes each answer from the participant's browser, so the
backend only names the participant in the run's records (``model = human/<participant>``)."""

from __future__ import annotations

from typing import Any

from nutrireason.models.base import Backend
from nutrireason.models.errors import ModelError
from nutrireason.models.types import ALL_SETTINGS, ChatRequest, ModelResponse


class HumanBackend(Backend):
    """Names a human participant; refuses generation (only the ``human`` method fits it)."""

    provider = "human"
    supported_settings = ALL_SETTINGS  # nothing is sent anywhere

    def __init__(self, name: str) -> None:
        if not name.strip():
            raise ModelError("bad_request", "human/<participant> needs a participant name")
        self.model = name.strip()

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model}

    async def generate(self, request: ChatRequest) -> ModelResponse:
        raise ModelError("bad_request", f"human/{self.model} answers in the browser through "
                         "`nutrireason human serve` (method `human`), not by generated text")
