"""The one backend interface: ``await backend.generate(request) -> ModelResponse``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from nutrireason.models.types import ChatRequest, ModelResponse


class Backend(ABC):
    """A model behind one async call. Subclasses set ``provider`` and ``model``.

    ``generate`` raises :class:`~nutrireason.models.errors.ModelError` on failure, classified so
    the run engine can retry what is worth retrying; it never returns an error as text.
    """

    provider: str = ""
    model: str = ""

    @abstractmethod
    async def generate(self, request: ChatRequest) -> ModelResponse:
        """One model call."""

    def identity(self) -> dict[str, Any]:
        """What makes two backends answer alike (used in cache keys); never holds secrets."""
        return {"provider": self.provider, "model": self.model}

    def describe(self) -> dict[str, Any]:
        """For manifests: identity plus settings worth recording; never holds secrets."""
        return self.identity()

    @property
    def name(self) -> str:
        """``provider/model`` as a user would type it."""
        return f"{self.provider}/{self.model}"

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or model memory."""
