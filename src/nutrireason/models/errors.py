"""Model-call errors, classified so the retry policy knows what to try again."""

from __future__ import annotations

from typing import Literal

from nutrireason.errors import MissingDependency, NutriReasonError

__all__ = ["RETRYABLE", "ErrorKind", "MissingDependency", "ModelError"]

ErrorKind = Literal[
    "rate_limit", "server", "timeout", "connection", "malformed", "bad_request", "auth",
    "not_found", "unsupported", "unknown",
]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection",
                                       "malformed"})


class ModelError(NutriReasonError):
    """A failed model call: its kind, HTTP status if any, and the server's Retry-After."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def to_record(self) -> dict:
        """What a per-sample record stores about this error."""
        return {"kind": self.kind, "status": self.status, "message": str(self)[:2000]}
