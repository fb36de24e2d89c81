"""Bounded retries with exponential backoff and jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from nutrireason.models.errors import ModelError

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """``max_attempts`` calls at most; delays grow as base * 2**(n-1), capped, with jitter."""

    max_attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5
    min_retry_after: float = 0.05
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def delay(self, attempt: int, error: ModelError) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        backoff *= 1 + self.jitter * (2 * self.rng.random() - 1)
        if error.retry_after is not None:
            return min(self.max_delay, max(error.retry_after, self.min_retry_after))
        return max(0.0, backoff)


class RetriesExhausted(ModelError):
    """The last error after every allowed attempt (or a non-retryable error)."""

    def __init__(self, last: ModelError, attempts: int) -> None:
        super().__init__(last.kind, str(last), status=last.status, retry_after=last.retry_after)
        self.attempts = attempts
        self.last = last


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run ``call`` until it succeeds; return (result, attempts). Raise RetriesExhausted."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call(), attempt
        except ModelError as error:
            if not error.retryable or attempt >= policy.max_attempts:
                raise RetriesExhausted(error, attempt) from error
            await sleep(policy.delay(attempt, error))
