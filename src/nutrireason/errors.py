"""Errors a user can act on: each names the file, the field and what was expected."""

from __future__ import annotations

from pathlib import Path


class NutriReasonError(Exception):
    """Base class for every error the toolkit raises on purpose."""


class DataError(NutriReasonError):
    """Bad or missing input data: names the file, the field (if any) and the problem."""

    def __init__(
        self,
        path: str | Path | None,
        problem: str,
        *,
        field: str | None = None,
        value: object = None,
        expected: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.field = field
        self.value = value
        self.expected = expected
        self.problem = problem
        super().__init__(self._message())

    def _message(self) -> str:
        parts = []
        if self.path:
            parts.append(self.path)
        if self.field:
            parts.append(f"field {self.field!r}")
        head = ": ".join([", ".join(parts), self.problem]) if parts else self.problem
        if self.value is not None:
            head += f" (got {self.value!r})"
        if self.expected:
            head += f"; expected {self.expected}"
        return head


class MissingDependency(NutriReasonError):
    """An optional dependency is not installed: names the extra that provides it."""

    def __init__(self, module: str, extra: str) -> None:
        self.module = module
        self.extra = extra
        super().__init__(f"{module} is not installed; install it with "
                         f"`pip install 'nutrireason[{extra}]'`")
