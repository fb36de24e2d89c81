"""Fixtures shared by the model tests: no API key or base URL from the environment, and a
loopback fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.models.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "NUTRIREASON_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lifetime=60) as fake:
        yield fake
