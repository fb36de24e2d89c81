"""Long ingredient lines: the matcher's sub-phrase search does work linear in a name's words
(no phrase longer than the longest reviewed name is looked up), and a 10,000-word line is a
named problem while the other recipes build. Timings live in benchmarks/line_length.py."""

from __future__ import annotations

import json
import random

import pytest

from nutrireason.recipes import match
from tests.recipes.test_bad_inputs import build, corpus, record

WORDS = ["fresh", "chopped", "green", "onion", "and", "grated", "cheese", "with", "more",
         "flour", "sugar"]


def long_name(words: int) -> str:
    chooser = random.Random(words)
    return " ".join(chooser.choice(WORDS) for _ in range(words))


def work(matcher, name: str, monkeypatch) -> tuple[int, int]:
    """(reviewed-map lookups, word stems) one sub-phrase search makes."""
    counts = [0, 0]
    looked_up, stemmed = matcher._reviewed, match.stem

    def lookup(phrase):
        counts[0] += 1
        return looked_up(phrase)

    def stem(word):
        counts[1] += 1
        return stemmed(word)

    with monkeypatch.context() as patch:
        patch.setattr(matcher, "_reviewed", lookup)
        patch.setattr(match, "stem", stem)
        matcher._subphrase(name)
    return counts[0], counts[1]


def test_the_sub_phrase_search_grows_linearly_with_the_name(resolver, monkeypatch):
    matcher = resolver.matcher
    assert matcher.longest == max(len(name.split()) for name in matcher.reviewed)
    small = work(matcher, long_name(1_000), monkeypatch)
    large = work(matcher, long_name(10_000), monkeypatch)
    # every start position is tried with at most `longest` lengths, twice (the phrase and the
    # phrase with the word before it), and each word's food check is made once: linear, where
    # every sub-phrase (and every word after each) would be hundreds of millions
    assert large[0] <= 2 * matcher.longest * 10_000
    assert large[1] <= 4 * matcher.longest * 10_000
    assert large[0] / small[0] < 11 and large[1] / small[1] < 11


@pytest.mark.usefixtures("sr28")
def test_a_ten_thousand_word_line_is_a_named_problem(tmp_path):
    line = "1 cup " + long_name(10_000)
    path = corpus(tmp_path, record("long", [line, "2 eggs"]),
                  record("fine", ["2 cups flour", "1 cup sugar", "2 eggs"]))
    result = build(path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    quality = json.loads((tmp_path / "out" / "quality.json").read_text())
    excluded = {e["id"]: e["reason"] for e in quality["recipes_excluded"]}
    assert "not an ingredient line" in excluded["long"] and "fine" not in excluded
