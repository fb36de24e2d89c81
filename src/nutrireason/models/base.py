"""The one backend interface: ``await backend.generate(request) -> ModelResponse``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from nutrireason.models.types import BASIC_SETTINGS, ChatRequest, ModelResponse


class Backend(ABC):
    """A model behind one async call. Subclasses set ``provider`` and ``model``.

    ``generate`` raises :class:`~nutrireason.models.errors.ModelError` on failure, classified so
    the run engine can retry what is worth retrying; it never returns an error as text.
    ``supported_settings`` names the :class:`GenerationSettings` fields the backend passes on to
    its model; :func:`nutrireason.models.settings.check_settings` refuses the others by name.
    """

    provider: str = ""
    model: str = ""
    supported_settings: frozenset[str] = BASIC_SETTINGS

    @abstractmethod
    async def generate(self, request: ChatRequest) -> ModelResponse:
        """One model call."""

    def identity(self) -> dict[str, Any]:
        """What makes two backends answer alike (used in cache keys); never holds secrets."""
        return {"provider": self.provider, "model": self.model}

    def describe(self) -> dict[str, Any]:
        """For manifests: identity plus settings worth recording; never holds secrets."""
        return self.identity()

    def server_defaults(self) -> dict[str, Any] | None:
        """The defaults the model applies to settings left unset, where it reports them; else
        None. Never raises."""
        return None

    @property
    def name(self) -> str:
        """``provider/model`` as a user would type it."""
        return f"{self.provider}/{self.model}"

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or model memory."""
