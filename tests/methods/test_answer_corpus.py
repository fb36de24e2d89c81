"""The graded corpora: realistic outputs of current models, each read as a careful grader reads
it (the grader's reason beside each case, in ``why``).

Each file was written independently of the parsers, by a hand that saw neither the rules nor
the other files (``answer_corpus_holdout.yaml`` was written beside ``answer_corpus.yaml`` with
other wording and items). A misreading is fixed in the rule behind its class of outputs, never
for the one case. Each case is a test (its id and the grader's reason
in the test name and message); the shares the issue asks for are checked over each file: at
least 97 % read as the grader reads, and no output cut off ever yields an answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nutrireason.methods.graded import agrees, grade, load_graded, read_case

HERE = Path(__file__).parent
FILES = [path for name in ("answer_corpus.yaml", "answer_corpus_extra.yaml",
                           "answer_corpus_holdout.yaml", "answer_corpus_fresh.yaml",
                           "answer_corpus_probe.yaml", "answer_corpus_messy.yaml",
                           "answer_corpus_check.yaml", "answer_corpus_confirm.yaml")
         if (path := HERE / name).exists()]
CASES = [(path.name, case) for path in FILES for case in load_graded(path)]


def test_the_corpora_are_there_and_large_enough():
    assert FILES and FILES[0].name == "answer_corpus.yaml"
    assert len(load_graded(FILES[0])) >= 150
    forms = {case["form"] for _, case in CASES}
    assert {"think_closed", "think_unclosed", "harmony", "reasoning_field", "length", "json",
            "markdown", "refusal", "hedge", "ranking_forms"} <= forms


@pytest.mark.parametrize(("source", "case"), CASES,
                         ids=[f"{source}:{case['id']}" for source, case in CASES])
def test_each_case_is_read_as_the_grader_reads_it(source, case):
    reading = read_case(case)
    same, detail = agrees(case, reading)
    assert same, f"{case['id']} ({case['form']}): {detail}; grader: {case.get('why')}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_agreement_over_each_file_is_at_least_97_percent(path):
    rows = grade(load_graded(path))
    share = sum(same for _, _, same, _ in rows) / len(rows)
    assert share >= 0.97, [detail for _, _, same, detail in rows if not same]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_cut_off_output_ever_yields_an_answer(path):
    cut = [(case, reading) for case, reading, _, _ in grade(load_graded(path))
           if case["expect"].get("reason") == "truncated"]
    assert len(cut) >= 8
    assert {case["task"] for case, _ in cut} == {"binary", "multi_label", "text_generation",
                                                  "fam_dish", "fam_rank"}
    for case, reading in cut:
        assert not reading.ok and reading.reason == "truncated", case["id"]
