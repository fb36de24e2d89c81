"""Answers that are a number: hand-labelled model outputs, each with the reason for its
reading (the rules of :mod:`nutrireason.methods.quantity`, through the same layer that sets
reasoning apart and refuses cut-off output)."""

from __future__ import annotations

import pytest

from nutrireason.methods.answers import read_whole

# (output, amount or None, why)
CASES = [
    ('{"carbohydrates": 45}', 45.0, "a JSON object's only number"),
    ('{"value": 32.5, "unit": "g"}', 32.5, "the value key"),
    ('Estimate: {"total_carbohydrates": 60, "protein": 12}', None,
     "two numbers and no value key: no one amount"),
    ("Answer: 45 g", 45.0, "an answer marker"),
    ("**Total carbohydrates:** about 52 grams per serving.", 52.0, "a marker in markdown"),
    ("Each serving has roughly 40-50 g of carbohydrate.", 45.0, "a range reads as its middle"),
    ("Between 300 and 350 kcal.", 325.0, "a range said in words"),
    ("The dish has 1,250 kcal in all.", 1250.0, "a thousands separator"),
    ("\\boxed{38}", 38.0, "a boxed answer"),
    ("<think>Rice is 28 g per 100 g, so 150 g is 42 g.</think>\n\nAnswer: 42 g", 42.0,
     "the reasoning's numbers are set apart; the final answer gives one"),
    ("Rice gives 42 g and the beans 18 g, so about 60 g.", None,
     "several numbers and no marker: not read"),
    ("Answer: 45 g (about 180 kcal)", None, "the marker's answer gives two amounts"),
    ("I cannot estimate that without the portion sizes.", None, "no number: a refusal"),
    ("-5 g", None, "a negative amount is no amount"),
    ('{"carbohydrates": -3}', None, "nor in JSON"),
]


@pytest.mark.parametrize(("output", "amount", "why"), CASES)
def test_a_quantity_answer_reads_as_a_careful_grader_would(output, amount, why):
    reading = read_whole("quantity", output)
    assert (reading.value if reading.ok else None) == amount, why


def test_an_answer_cut_off_is_not_read():
    reading = read_whole("quantity", "Answer: 4", finish_reason="length")
    assert not reading.ok and reading.reason == "truncated"
