"""The shapes every backend speaks: chat messages (OpenAI's shape), settings, responses."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPart(_Model):
    """A text part of a message."""

    type: Literal["text"] = "text"
    text: str


class ImageURL(_Model):
    url: str
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(_Model):
    """An image part: an http(s) URL or a ``data:image/...;base64,`` URL."""

    type: Literal["image_url"] = "image_url"
    image_url: ImageURL


class Message(_Model):
    """One chat message; ``content`` is plain text or a list of text and image parts."""

    role: Literal["system", "user", "assistant"]
    content: str | list[TextPart | ImagePart]

    def text(self) -> str:
        """The message's text, parts joined by newlines (images left out)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    def has_images(self) -> bool:
        return not isinstance(self.content, str) and any(
            isinstance(p, ImagePart) for p in self.content)


class GenerationSettings(_Model):
    """Decoding settings. ``None`` leaves a value to the provider's default.

    The optional sampling fields (``top_p`` ... ``min_p``) are left out of dumps while they are
    ``None``, so requests, cache keys and manifests that do not use them stay the same as those
    made without the fields.
    """

    temperature: float | None = Field(default=0.0, ge=0)
    max_tokens: int | None = Field(default=512, ge=1)
    stop: list[str] | None = None
    seed: int | None = None
    json_mode: bool = False
    grammar: str | None = Field(default=None, description="GBNF grammar (llama.cpp only)")
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0)
    repeat_penalty: float | None = Field(default=None, ge=0)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    min_p: float | None = Field(default=None, ge=0, le=1)

    @model_serializer(mode="wrap")
    def _omit_unused_sampling(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {k: v for k, v in data.items() if not (k in SAMPLING_SETTINGS and v is None)}


SAMPLING_SETTINGS = ("top_p", "top_k", "repeat_penalty", "presence_penalty",
                     "frequency_penalty", "min_p")
ALL_SETTINGS: frozenset[str] = frozenset(GenerationSettings.model_fields)
BASIC_SETTINGS: frozenset[str] = frozenset({"temperature", "max_tokens", "stop", "seed",
                                            "json_mode"})


class ChatRequest(_Model):
    """What a method sends: messages plus settings."""

    messages: list[Message]
    settings: GenerationSettings = Field(default_factory=GenerationSettings)

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of the whole request."""
        return _sha256(self.model_dump(mode="json"))


class Usage(_Model):
    """Token counts of one call; ``reasoning_tokens`` (part of ``completion_tokens``) as the
    server reports them, None when it does not."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelResponse(_Model):
    """What a backend returns for one successful call."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    reasoning: str | None = None  # the server's separate reasoning field, if any
    raw: dict[str, Any] | None = None
    cached: bool = False
    dropped_params: list[str] = Field(default_factory=list)


def canonical_json(data: Any) -> str:
    """Stable JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha256(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def cache_key(backend_identity: dict[str, Any], request: ChatRequest) -> str:
    """Cache key: sha256 over (backend identity, full request)."""
    return _sha256({"backend": backend_identity, "request": request.model_dump(mode="json")})


def user(text: str) -> Message:
    """Shorthand for a user text message."""
    return Message(role="user", content=text)


def system(text: str) -> Message:
    """Shorthand for a system message."""
    return Message(role="system", content=text)
