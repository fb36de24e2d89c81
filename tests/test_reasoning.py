"""Reasoning apart from the final answer, one rule per form (models.reasoning)."""

from __future__ import annotations

import pytest

from nutrireason.reasoning import split_reasoning


def test_plain_output_is_all_answer():
    split = split_reasoning("  No  ")
    assert (split.final, split.reasoning, split.form, split.truncated) == ("No", "", "plain",
                                                                           False)


def test_a_closed_think_block_is_reasoning():
    split = split_reasoning("<think>\nI have to answer Yes or No. Maybe yes.\n</think>\n\nNo")
    assert split.final == "No"
    assert split.reasoning == "I have to answer Yes or No. Maybe yes."
    assert split.form == "think"


@pytest.mark.parametrize("tag", ["think", "thinking", "reasoning", "THINK"])
def test_the_usual_tag_names(tag):
    split = split_reasoning(f"<{tag}>draft: Yes</{tag}>No")
    assert (split.final, split.reasoning) == ("No", "draft: Yes")


def test_an_empty_think_block():
    assert split_reasoning("<think>\n\n</think>\n\nYes").final == "Yes"


def test_repeated_blocks_the_answer_follows_the_last():
    text = "<think>a</think>Draft: Yes\n<think>wait, the sodium</think>\nNo"
    split = split_reasoning(text)
    assert split.final == "No"
    assert "a" in split.reasoning and "wait, the sodium" in split.reasoning


def test_text_between_blocks_is_the_answer_when_nothing_follows_the_last():
    assert split_reasoning("<think>a</think>No<think>checked</think>  ").final == "No"


def test_a_closing_tag_without_an_opening_one():
    split = split_reasoning("The user has hypertension... so no.\n</think>\n\nNo")
    assert (split.final, split.form) == ("No", "think_no_open")
    assert split.reasoning == "The user has hypertension... so no."


@pytest.mark.parametrize("text", [
    "<think>\nThe food is high in sodium, so it might be no. Let me double-check",
    "<think>a</think>Yes <think>on second thought",
    "<think>",
])
def test_an_unclosed_block_is_truncated(text):
    split = split_reasoning(text)
    assert split.truncated and split.form == "think_unclosed" and split.final == ""


def test_finish_reason_length_is_truncated_whatever_the_text():
    split = split_reasoning("No, because the food is high in sodium.", finish_reason="length")
    assert split.truncated and split.final == "" and split.form == "length"


def test_harmony_channels():
    text = ("<|channel|>analysis<|message|>User has CKD. Answer yes or no. Likely yes?<|end|>"
            "<|start|>assistant<|channel|>final<|message|>No<|return|>")
    split = split_reasoning(text)
    assert (split.final, split.form) == ("No", "harmony")
    assert "Likely yes?" in split.reasoning and "<|" not in split.reasoning


def test_harmony_with_the_special_tokens_stripped():
    split = split_reasoning("analysisThe user is diabetic. Yes? no.assistantfinalNo")
    assert (split.final, split.form) == ("No", "harmony")
    assert split.reasoning == "The user is diabetic. Yes? no."


def test_harmony_analysis_without_a_final_channel_is_truncated():
    split = split_reasoning("<|channel|>analysis<|message|>We need to decide. The food")
    assert split.truncated and split.form == "harmony_unfinished"


def test_a_separate_reasoning_field():
    split = split_reasoning("No", reasoning="Draft: Yes")
    assert (split.final, split.reasoning, split.form) == ("No", "Draft: Yes", "reasoning_field")


def test_a_reasoning_field_with_nothing_else_and_length_is_truncated():
    split = split_reasoning("", reasoning="Let me think about", finish_reason="length")
    assert split.truncated and split.reasoning == "Let me think about"


def test_a_reasoning_field_and_think_tags_together():
    split = split_reasoning("<think>more</think>Yes", reasoning="first")
    assert split.final == "Yes" and split.reasoning == "first\n\nmore"


def test_none_text():
    assert split_reasoning(None).final == ""
