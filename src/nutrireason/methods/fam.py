"""FAM-Bench methods (paper section 4.2): four prompting modes (and two KI variants) x three
input modes, and a rule-based reference.

Names: ``fam-baseline``, ``fam-cot``, ``fam-ki``, ``fam-cot-ki`` read the recipe as text (the
KI modes inject the condition's "recommend" / "not_recommend" food lists, paper Appendix L);
``fam-ki-limits`` and ``fam-cot-ki-limits`` also inject the condition's nutrient limits (our
addition, not a paper mode);
``fam-<mode>[text+image]`` adds the dish image(s), ``fam-<mode>[image]`` sends the image(s) and
the question only. Items are ``nutrireason fam build`` instances (task ``fam_dish`` or
``fam_rank``). A ranking sample makes one ranking call and then, for cross-task consistency, one
dish-level call per option with the same conditions, mode and input (5 calls per sample); the
option decisions go into ``parsed["option_decisions"]``.

Images are local files sent as ``data:`` URLs, read only from inside the build's images folder
(the item's ``images_root``); an item whose image is missing, a URL (never fetched), outside
that folder or not an image file is recorded as an error (kind "bad_request") naming the item
and the value, never answered without it. ``fam-reference`` answers from the
knowledge base and the instance's evidence without a model: it re-runs the annotation rules, so
it scores 100 % exactly when the benchmark agrees with its own gold.
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

from nutrireason.fam.annotate import Ingredient, Thresholds, decide, load_thresholds
from nutrireason.fam.dish import DishProfile
from nutrireason.fam.instances import ImageRefused, confined_image
from nutrireason.fam.judgement import NOT_REC, REC, Standing
from nutrireason.fam.kb import ConditionKB, load_kb
from nutrireason.fam.proposals import condition_names
from nutrireason.fam.spec import INPUTS, PAPER_MODES, TASK_DISH, TASK_RANK, method_name
from nutrireason.methods.answers import final_reader, option_titles
from nutrireason.methods.base import (
    Generator,
    Method,
    MethodInfo,
    Prediction,
    register_method,
)
from nutrireason.methods.fam_prompts import (
    LETTERS,
    PROPOSE_SYSTEM,
    condition_question,
    condition_reference,
    dish_value,
    parse_proposal,
    payload_text,
    rank_value,
    read_dish,
    system_prompt,
)
from nutrireason.methods.reading import final_text, parse_mode, read_response
from nutrireason.models.errors import ModelError
from nutrireason.models.types import (
    ChatRequest,
    GenerationSettings,
    ImagePart,
    ImageURL,
    Message,
    TextPart,
)


class Mode(NamedTuple):
    """What a prompting mode adds: a reasoning trace, the knowledge reference, and (KI only)
    the nutrient limits in that reference."""

    cot: bool
    ki: bool
    limits: bool = False


MODES = {"baseline": Mode(False, False), "cot": Mode(True, False), "ki": Mode(False, True),
         "cot-ki": Mode(True, True), "ki-limits": Mode(False, True, True),
         "cot-ki-limits": Mode(True, True, True)}
PAPER = PAPER_MODES
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_MAGIC = ((b"\xff\xd8\xff", "image/jpeg"), (b"\x89PNG\r\n\x1a\n", "image/png"),
          (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


def image_mime(head: bytes) -> str | None:
    """The image type the first bytes of a file show (JPEG, PNG, WebP, GIF), or None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if head.startswith(magic)), None)


def image_url(path: str | None, what: str, root: str | None = None) -> str:
    """A ``data:`` URL for an instance's local image file inside its images folder ``root``
    (the build's ``images_root``). No file, a URL (never fetched), a path leading outside the
    folder (``..``, a symlink) or a file that is not an image is a non-retryable error naming
    ``what`` (the item) and the value; nothing outside the folder is read."""
    try:
        resolved = confined_image(path, root)
    except ImageRefused as exc:
        if str(exc) == "no local image file":
            raise ModelError("bad_request", f"{what}: no local image file ({path!r}); build the "
                             "instances with `fam build --images DIR` or use text input") from None
        raise ModelError("bad_request", f"{what}: image {path!r} refused: {exc}") from None
    if resolved.stat().st_size > MAX_IMAGE_BYTES:
        raise ModelError("bad_request", f"{what}: image {path!r} is over "
                         f"{MAX_IMAGE_BYTES // 2**20} MiB")
    data = resolved.read_bytes()
    mime = image_mime(data[:16])
    if mime is None:
        raise ModelError("bad_request", f"{what}: image {path!r} refused: not a JPEG, PNG, WebP "
                         "or GIF file")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def json_mode(settings: GenerationSettings | None) -> GenerationSettings:
    """``settings`` with JSON mode on (FAM-Bench answers are JSON, as in Appendix J)."""
    return (settings or GenerationSettings()).model_copy(update={"json_mode": True})


class FamMethod(Method):
    """One prompting mode with one input mode."""

    def __init__(self, mode: str, input_mode: str,
                 settings: GenerationSettings | None = None) -> None:
        super().__init__(json_mode(settings))
        self.mode, self.input_mode = mode, input_mode
        self.cot, self.ki, self.limits = MODES[mode]
        self.name = method_name(mode, input_mode)
        self._kb: dict[str, ConditionKB] | None = None

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"mode": self.mode, "input": self.input_mode}

    @property
    def kb(self) -> dict[str, ConditionKB]:
        if self._kb is None:
            self._kb = load_kb()
        return self._kb

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        if item["task"] == TASK_DISH:
            return await self._dish(item, backend)
        if item["task"] == TASK_RANK:
            return await self._rank(item, backend)
        raise ModelError("bad_request", f"item {item.get('id')!r} is not a FAM-Bench item")

    async def _dish(self, item: dict[str, Any], backend: Generator) -> Prediction:
        parsed, mode = await self.judge(item["dish"], item.get("image"), item["conditions"],
                                        item["condition_labels"], backend, item["id"],
                                        item.get("images_root"))
        return Prediction(parsed, parsed["decision"] is not None,
                          extra={"parse_mode": mode["parse_mode"], "reading": mode["reading"]})

    async def judge(self, dish: dict[str, Any], image: str | None, conditions: list[str],
                    labels: list[str], backend: Generator, what: str,
                    images_root: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """One dish-level call: ({"decision", "ingredients"}, {"parse_mode", "reading"}); the
        image, if the input mode shows one, must lie inside ``images_root`` (the build's
        images folder)."""
        payload = self._payload(conditions, labels, rank=False) | self._recipe(dish)
        images = [(None, image)] if self.input_mode != "text" else []
        messages = self._messages("dish", payload, images, what, images_root)
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        reading = read_response(response, read_dish)
        parsed = dish_value(reading)
        return parsed, {"parse_mode": parse_mode(reading), "reading": reading.audit()}

    async def _rank(self, item: dict[str, Any], backend: Generator) -> Prediction:
        payload = self._payload(item["conditions"], item["condition_labels"], rank=True)
        payload["dishes"] = {k: self._recipe(v) for k, v in item["dishes"].items()}
        images = [(k, item["images"].get(k)) for k in LETTERS] \
            if self.input_mode != "text" else []
        messages = self._messages("rank", payload, images, item["id"], item.get("images_root"))
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        reading = read_response(response, final_reader("ranking", option_titles(item)))
        parsed = rank_value(reading)
        decisions, modes, readings = {}, {}, {}
        for letter in LETTERS:
            answer, how = await self.judge(
                item["dishes"][letter], item["images"].get(letter), item["conditions"],
                item["condition_labels"], backend, f"{item['id']} option {letter}",
                item.get("images_root"))
            decisions[letter] = answer["decision"]
            modes[letter], readings[letter] = how["parse_mode"], how["reading"]
        parsed = dict(parsed, option_decisions=decisions)
        return Prediction(parsed, bool(parsed["ranking"]),
                          extra={"parse_mode": parse_mode(reading), "reading": reading.audit(),
                                 "option_parse_modes": modes, "option_readings": readings})

    def _payload(self, conditions: list[str], labels: list[str], rank: bool) -> dict[str, Any]:
        payload: dict[str, Any] = {"question": condition_question(labels, rank),
                                   "conditions": labels}
        if self.ki:
            payload["condition_reference"] = {
                self.kb[c].label: condition_reference(self.kb[c], self.limits)
                for c in conditions}
        return payload

    def _recipe(self, dish: dict[str, Any]) -> dict[str, Any]:
        """The recipe as shown: everything in text modes, nothing but the image otherwise."""
        if self.input_mode == "image":
            return {"recipe": "shown in the image"}
        return {"recipe": dish}

    def _messages(self, task: str, payload: dict[str, Any],
                  images: list[tuple[str | None, str | None]], what: str,
                  images_root: str | None = None) -> list[Message]:
        system = Message(role="system",
                         content=system_prompt(task, self.cot, self.ki, self.limits))
        text = payload_text(payload)
        if not images:
            return [system, Message(role="user", content=text)]
        parts: list[TextPart | ImagePart] = [TextPart(text=text)]
        for letter, path in images:
            if letter is not None:
                parts.append(TextPart(text=f"Image of dish {letter}:"))
            label = what if letter is None else f"{what} dish {letter}"
            parts.append(ImagePart(image_url=ImageURL(url=image_url(path, label, images_root))))
        return [system, Message(role="user", content=parts)]


class FamPropose(Method):
    """The LLM side of annotation (section 3.3, Appendix E). Task ``fam_propose``: a side
    (recommend / not_recommend / neutral) and the cited ingredients per condition for one
    recipe. Task ``fam_correct``: the same conversation continued once, with the model's first
    answer and the rule check's conflicts surfaced, asking for the full annotation again."""

    name = "fam-propose"
    info = MethodInfo(benchmark="fam")

    def __init__(self, settings: GenerationSettings | None = None) -> None:
        super().__init__(json_mode(settings))
        self._names: dict[str, str] | None = None

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        from nutrireason.fam.proposals import TASK_CORRECT, TASK_PROPOSE
        from nutrireason.methods.fam_prompts import correction_prompt

        task = item.get("task", TASK_PROPOSE)
        if task not in (TASK_PROPOSE, TASK_CORRECT):
            raise ModelError("bad_request", f"item {item.get('id')!r} is not a proposal item")
        if self._names is None:
            self._names = condition_names(load_kb())
        payload = {"conditions": item["condition_labels"], "recipe": item["dish"]}
        messages = [Message(role="system", content=PROPOSE_SYSTEM),
                    Message(role="user", content=payload_text(payload))]
        if task == TASK_CORRECT:
            messages += [Message(role="assistant", content=item["previous"]),
                         Message(role="user", content=correction_prompt(item["conflicts"]))]
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        parsed, mode = parse_proposal(final_text(response), self._names)
        return Prediction(parsed, bool(parsed["sides"]), extra={"parse_mode": mode})


class FamReference(Method):
    """Answers from the knowledge base and the instance's evidence, without a model."""

    name = "fam-reference"
    info = MethodInfo(needs_model=False, benchmark="fam", reference=True,
                      left_out="answers from the knowledge base, no model")

    def __init__(self, settings: GenerationSettings | None = None) -> None:
        super().__init__(settings)
        self._kb: dict[str, ConditionKB] | None = None
        self._thresholds: Thresholds | None = None

    def _standing(self, evidence: dict[str, Any], conditions: list[str]) -> Standing:
        if self._kb is None:
            self._kb, self._thresholds = load_kb(), load_thresholds()
        assert self._thresholds is not None
        items = [Ingredient.from_evidence(row) for row in evidence["ingredients"]]
        profile = DishProfile.from_evidence(evidence.get("profile"))
        sides: dict[str, list[dict[str, Any]]] = {"Rec": [], "NotRec": []}
        for condition in conditions:
            decision = decide(self._kb[condition], items, evidence["nutrition"],
                              self._thresholds, profile)
            if decision is not None and decision.side in sides:
                sides[decision.side].append(vars(decision))
        return Standing(sides["Rec"], sides["NotRec"])

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        if item["task"] == TASK_DISH:
            standing = self._standing(item["evidence"], item["conditions"])
            side = standing.side.get(item["condition"])
            parsed = {"decision": side,
                      "ingredients": standing.evidence.get(item["condition"], [])}
            return Prediction(parsed, side is not None)
        standings = {k: self._standing(item["evidence"][k], item["conditions"])
                     for k in LETTERS}
        ranking = sorted(LETTERS, key=lambda k: -standings[k].utility(item["conditions"]))
        decisions = {k: REC if s.label(item["conditions"]) == REC else NOT_REC
                     for k, s in standings.items()}
        return Prediction({"ranking": ranking, "option_decisions": decisions}, True)


def _register() -> None:
    for mode in MODES:
        for input_mode in INPUTS:
            paper = input_mode == "text" and mode in PAPER
            info = MethodInfo(benchmark="fam", demo=paper, exported=paper,
                              left_out="" if input_mode == "text" else "image input")
            register_method(method_name(mode, input_mode),
                            lambda settings=None, m=mode, i=input_mode: FamMethod(m, i, settings),
                            info)
    register_method(FamReference.name, FamReference)
    register_method(FamPropose.name, FamPropose)


_register()
