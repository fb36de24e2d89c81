"""A new NGQA method in one file: the question with no graph at all.

What a model answers from its own knowledge is the baseline every Graph-RAG method should beat.
Importing this file registers ``question-only`` for ``nutrireason run --method`` and
:func:`nutrireason.methods.get_method`.
"""

from __future__ import annotations

from typing import Any

from nutrireason.methods.base import register_method
from nutrireason.methods.ngqa import GraphRagMethod
from nutrireason.methods.ngqa_prompts import Triple


@register_method("question-only")
class QuestionOnly(GraphRagMethod):
    """NGQA's prompt and answer parsing (Plain's), with an empty graph."""

    name = "question-only"

    def retrieve(self, item: dict[str, Any]) -> list[Triple]:
        return []
