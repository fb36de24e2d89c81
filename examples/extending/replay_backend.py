"""A new backend in one file: replay answers recorded elsewhere.

``replay/<file.jsonl>``: each line ``{"prompt": ..., "response": ...}``, where ``prompt`` is the
text of the request's last message. A prompt the file does not hold is an error (recorded as
such by the run engine, never scored as an answer). Useful to score another tool's outputs
with NutriReason's parsers and metrics. Importing this file registers the provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.models.base import Backend
from nutrireason.models.errors import ModelError
from nutrireason.models.registry import register_backend
from nutrireason.models.types import ChatRequest, ModelResponse


class ReplayBackend(Backend):
    provider = "replay"

    def __init__(self, path: str) -> None:
        self.model = path
        self.answers: dict[str, str] = {}
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not {"prompt", "response"} <= row.keys():
                raise DataError(path, f"line {number} needs 'prompt' and 'response'")
            self.answers[row["prompt"]] = row["response"]

    async def generate(self, request: ChatRequest) -> ModelResponse:
        prompt = request.messages[-1].text()
        if prompt not in self.answers:
            raise ModelError("bad_request", f"replay/{self.model}: no recorded response for "
                             f"this prompt ({prompt[:60]!r}...)")
        return ModelResponse(text=self.answers[prompt], model=self.name)


@register_backend("replay")
def replay(model: str, options: dict[str, Any]) -> Backend:
    return ReplayBackend(model, **options)
