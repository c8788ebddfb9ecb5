"""A swap of two adjacent letters is the commonest typo (docs/search.md "Fuzzy
neighbours"): ``deplyo`` must find ``deploy`` as ``deplpy`` does, in ``hybrid`` and
``fuzzy`` mode, on both engines, while ``keyword`` mode stays exact and a word that
is a swap of a real word is not widened when it is a real word itself."""

from __future__ import annotations

import pytest
from conftest import BOTH_ENGINES

ENGINES = BOTH_ENGINES

TEXTS = ["We deploy from the main branch", "Staging needs the VPN", "The recieve queue drains hourly",
         "Kubernetes restarts the pod on failure", "The form has a from field"]


@pytest.fixture()
def led(ledger):
    for t in TEXTS:
        ledger.remember(t, cluster="code", agent="a")
    return ledger


def _texts(led, q, mode="hybrid"):
    return [m.text for m in led.search(q, limit=10, mode=mode).hits]


# The user's example first, then our own: a swap at the start, in the middle, at the end,
# in a long word (two edits allowed there anyway), and a swap plus nothing else.
@pytest.mark.parametrize(("typo", "text"), [
    ("deplyo", TEXTS[0]), ("edploy", TEXTS[0]), ("satging", TEXTS[1]), ("stagign", TEXTS[1]),
    ("kubernetse", TEXTS[3]), ("kuberentes", TEXTS[3]), ("receive", TEXTS[2]),
])
@pytest.mark.parametrize("mode", ["hybrid", "fuzzy"])
def test_a_swap_of_adjacent_letters_finds_the_word(led, typo, text, mode):
    assert _texts(led, typo, mode)[:1] == [text]


def test_keyword_mode_stays_exact(led):
    assert _texts(led, "deplyo", "keyword") == []


def test_a_real_word_is_not_widened_to_its_swaps_in_hybrid_mode(led):
    # "form" and "from" are one swap apart; both are words of the store, so each finds
    # only itself in hybrid mode (it is widened only when no vocabulary word starts with it).
    assert _texts(led, "form") == ["The form has a from field"]
    assert "We deploy from the main branch" not in _texts(led, "form")


def test_two_swaps_in_a_short_word_are_too_far(led):
    assert _texts(led, "edplyo") == []  # two swaps: four edits, past a 6-letter word's budget
