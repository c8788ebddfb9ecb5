"""A claim that reverses or extends a stored one is a new claim, never corroboration
(found by a fresh-user pass: the near-duplicate test compared sets of words, so a swap
of who/what or an added qualifier was "already remembered" and lost). True rewordings
still merge. Pure checks of ``is_near_duplicate`` and the real CLI on both engines."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import ok, remember

from ledger.conflicts.duplicates import FILLER, is_near_duplicate

# (stored, new): each pair says something the other does not.
NOT_DUPLICATES = [
    # the fresh-user pass's examples: names or values swapped between positions
    ("The new hire Carol reports to Dave", "The new hire Dave reports to Carol"),
    ("Alice reports to Bob in the platform team", "Bob reports to Alice in the platform team"),
    ("Enable the cache in staging but disable it in production",
     "Enable the cache in production but disable it in staging"),
    # ... and a qualifier added
    ("The deploy script for the payments service lives in ops/deploy.sh",
     "The deploy script for the billing payments service lives in ops/deploy.sh"),
    # ours: numbers, paths and plain words swapped
    ("Forward port 8080 to 9090", "Forward port 9090 to 8080"),
    ("Copy config/dev.toml over config/prod.toml", "Copy config/prod.toml over config/dev.toml"),
    ("Reads go to the replica and writes go to the primary",
     "Reads go to the primary and writes go to the replica"),
    # a stopword that says which way or which branch
    ("Migrate the data from Postgres to MySQL", "Migrate the data to Postgres from MySQL"),
    ("Tests need the fixtures and the network", "Tests need the fixtures or the network"),
    ("He approves releases for the mobile team", "She approves releases for the mobile team"),
    # a content word added, dropped or changed in a long sentence (Jaccard would pass)
    ("Password reset links sent by the account service are valid for 1 day",
     "Password reset links sent by the account service are valid for 1"),
    ("The nightly job that rebuilds the search index for the docs site runs on the big worker",
     "The nightly job that rebuilds the search index for the docs site runs on the worker"),
    ("The nightly job that rebuilds the search index for the docs site runs on the big worker",
     "The nightly job that rebuilds the search index for the blog site runs on the big worker"),
    # a one-letter name that is also an article
    ("Fall back to plan A when the mirror is down", "Fall back to plan when the mirror is down"),
]

# (stored, new): the same claim again.
DUPLICATES = [
    ("The build uses a cache", "The build uses the cache"),  # an article
    ("The parser lives in x.", "the parser lives in x"),  # case, trailing period
    ("Deploys go through the CI job", "deploys  go through the ci job!"),  # whitespace, punctuation
    ("The model stores its weights in fp16", "The model stores weights in FP16"),  # a filler stopword
    ("Debug logging is on in staging", "Debug logging is on on staging"),
    ("The API server runs tests with pytest", "The API server run tests with pytest"),  # inflection
    ("Alice reports to Bob", "Alice reports to Bob."),
    ("Releases are tagged by the CI", "Releases are tagged by CI"),  # ("were tagged" is another tense:
    # tests/test_duplicates_meaning.py)
]


@pytest.mark.parametrize("a, b", NOT_DUPLICATES)
def test_a_reversed_or_extended_claim_is_not_a_duplicate(a, b):
    assert not is_near_duplicate(a, b)
    assert not is_near_duplicate(b, a)


@pytest.mark.parametrize("a, b", DUPLICATES)
def test_a_rewording_by_case_punctuation_or_filler_is_a_duplicate(a, b):
    assert is_near_duplicate(a, b)
    assert is_near_duplicate(b, a)


_WORDS = st.sampled_from("cache deploy staging production Alice Bob port 8080 worker token queue".split())
_FILLER = st.sampled_from(sorted(FILLER))


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=3, max_size=9, unique=True), st.data())
def test_moving_or_adding_a_word_is_never_a_duplicate(words, data):
    text = " ".join(words)
    i = data.draw(st.integers(0, len(words) - 2))
    moved = words[:i] + [words[i + 1], words[i]] + words[i + 2:]
    assert not is_near_duplicate(text, " ".join(moved))
    added = data.draw(st.sampled_from(["billing", "mobile", "legacy"]))
    j = data.draw(st.integers(0, len(words)))
    assert not is_near_duplicate(text, " ".join(words[:j] + [added] + words[j:]))
    filler = data.draw(_FILLER)
    assert is_near_duplicate(text, " ".join(words[:j] + [filler] + words[j:]))


def test_the_cli_keeps_a_reversed_and_an_extended_claim(cli):
    """The fresh-user pass's steps through the real CLI: each second claim is stored
    beside the first, nothing is counted as corroboration."""
    for a, b in NOT_DUPLICATES[:4]:
        first = remember(cli, a, "people")
        out = ok(*cli("remember", b, "--cluster", "people", "--json"))
        res = json.loads(out)
        assert not res["duplicate"] and res["id"] != first, (a, b, out)
        assert res["text"] == b
    for a, b in DUPLICATES[:3]:
        first = remember(cli, a, "proc")
        out = ok(*cli("remember", b, "--cluster", "proc"))
        assert re.match(rf"already remembered {first} — ", out), out


@pytest.mark.parametrize("a, b", [NOT_DUPLICATES[i] for i in (0, 1, 2, 4, 5, 6, 7)])
def test_two_words_swapped_is_a_candidate(a, b):
    """A swap of who/what is a new claim the proposer flags: both cannot hold."""
    from ledger.conflicts.duplicates import SWAPPED_WORDS, propose

    for x, y in ((a, b), (b, a)):
        s = propose(x, y)
        assert s is not None and s.signals == (SWAPPED_WORDS,), (x, y)


@pytest.mark.parametrize("a, b", [
    ("Alice and Bob own the billing API", "Bob and Alice own the billing API"),  # a list's order
    ("Deploys need the VPN or the bastion host", "Deploys need the bastion host or the VPN"),
    ("Use the big red button to stop the line", "Use the red big button to stop the line"),  # neighbours
    ("Debug logging is on in staging", "Staging has debug logging on"),  # a rewording that moves a block
    ("The deploy script for the payments service lives in ops/deploy.sh",
     "The deploy script for the billing payments service lives in ops/deploy.sh"),
])
def test_a_reordered_list_or_a_reworded_sentence_is_no_swap(a, b):
    from ledger.conflicts.duplicates import swapped_words

    assert not swapped_words(a, b) and not swapped_words(b, a)


def test_the_cli_proposes_the_reversed_claim_as_a_candidate(cli):
    a = remember(cli, "The new hire Carol reports to Dave", "people")
    out = json.loads(ok(*cli("remember", "The new hire Dave reports to Carol", "--cluster", "people", "--json")))
    (cand,) = json.loads(ok(*cli("conflicts", "--json")))
    assert out["proposed"] == [cand["id"]] and cand["signals"] == ["swapped words"]
    assert {cand["a"]["id"], cand["b"]["id"]} == {a, out["id"]}


@pytest.mark.parametrize("a, b", [
    ("Port is 8080", "ＰＯＲＴ is ８０８０"),  # fullwidth, as a CJK input method types it
    ("Port is 8080", "Ｐｏｒｔ ｉｓ ８０８０"),
    ("ＰＯＲＴ is ８０８０", "Ｐｏｒｔ ｉｓ ８０８０"),
])
def test_fullwidth_text_is_the_same_claim(a, b):
    """Width is folded (NFKC) as search and agent ids fold it; the two fullwidth forms
    were proposed against each other as a changed value (second fresh-user pass)."""
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)
    assert not is_near_duplicate(a, "Port is ９０９０")


def test_a_claim_cannot_supersede_its_own_copy(cli):
    """remember --supersedes skipped the duplicate check: the same text opened a
    conflict with itself (second fresh-user pass). Refused; a changed fact still works."""
    a = remember(cli, "Carol reports to Dave", "people")
    for text in ("Carol reports to Dave", "carol reports to dave.", "Carol reports to  Dave"):
        rc, out, err = cli("remember", text, "--cluster", "people", "--supersedes", a)
        assert rc == 1 and "says the same as" in err and "Nothing was remembered" in err, (text, err)
    assert json.loads(ok(*cli("search", "carol dave", "--json")))["total"] == 1
    assert json.loads(ok(*cli("review", "--json")))["conflicts"] == []
    out = ok(*cli("remember", "Carol reports to Erin", "--cluster", "people", "--supersedes", a))
    assert "opened cf_" in out


# Clauses in another order: what happens first, or what causes what, changed (the
# duplicates helper's report: a comma run of clauses was read as a reordered list and
# the second claim counted as the first again).
CLAUSES_REORDERED = [
    ("if the cache misses, the job fails, and we retry", "if the job fails, the cache misses, and we retry"),
    ("when the build fails, the deploy stops, the pager fires",
     "when the deploy stops, the build fails, the pager fires"),
    ("once the lock is taken, the worker starts, the queue drains",
     "once the worker starts, the lock is taken, the queue drains"),
    ("the cache misses, we retry, we give up", "we retry, the cache misses, we give up"),
    ("before the release we tag, we build, we sign", "before the release we sign, we build, we tag"),
]
# Lists of names in another order stay one claim.
LISTS_REORDERED = [
    ("we lint with ruff, black, mypy before commits", "we lint with mypy, ruff, black before commits"),
    ("deps: numpy, scikit learn, torch", "deps: torch, numpy, scikit learn"),
    ("supported: python 3.10, 3.11, 3.12", "supported: python 3.12, 3.10, 3.11"),
]


@pytest.mark.parametrize("a, b", CLAUSES_REORDERED)
def test_clauses_in_another_order_are_another_claim(a, b):
    assert not is_near_duplicate(a, b) and not is_near_duplicate(b, a)


@pytest.mark.parametrize("a, b", LISTS_REORDERED)
def test_a_list_of_names_in_another_order_is_the_same_claim(a, b):
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)


def test_the_cli_keeps_clauses_in_another_order(cli):
    a, b = CLAUSES_REORDERED[1]
    first = remember(cli, a, "proc")
    res = json.loads(ok(*cli("remember", b, "--cluster", "proc", "--json")))
    assert not res["duplicate"] and res["id"] != first and res["text"] == b
