"""Model backends behind one async interface, a response cache and a retry policy."""

from nutrireason.models.base import Backend
from nutrireason.models.cache import ResponseCache
from nutrireason.models.errors import MissingDependency, ModelError
from nutrireason.models.registry import get_backend, model_label, parse_spec
from nutrireason.models.retry import RetriesExhausted, RetryPolicy, call_with_retry
from nutrireason.models.settings import check_settings, effective_settings, parse_gen
from nutrireason.models.types import (
    ChatRequest,
    GenerationSettings,
    ImagePart,
    Message,
    ModelResponse,
    TextPart,
    Usage,
    cache_key,
    system,
    user,
)

__all__ = [
    "Backend", "ChatRequest", "GenerationSettings", "ImagePart", "Message", "MissingDependency",
    "ModelError", "ModelResponse", "ResponseCache", "RetriesExhausted", "RetryPolicy", "TextPart",
    "Usage", "cache_key", "call_with_retry", "check_settings", "effective_settings",
    "get_backend", "model_label", "parse_gen", "parse_spec", "system", "user",
]
