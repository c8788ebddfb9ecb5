"""Session 10's gaps in reading a changed claim (docs/contradictions.md "Signals of
remember"), each an example of a kind:

* a comma list whose items are not all one length ("numpy, scikit learn, torch",
  "python 3.10, 3.11, 3.12 dev") was read as no list at all: a dropped, added or
  replaced item raised no candidate, and the same items in another order were a new
  claim;
* a change of two words of meaning ("up to" / "at least"), or of one with a plain word
  added ("before the build" / "after the build step"), raised no candidate;
* a bound of a number written two ways ("up to 3" / "at most 3", "over 100" / "more
  than 100") was a ``changed comparison``, and "under 100 ms" / "below 100 ms" a
  ``changed relation``: before a number such phrases are read as the operator they mean;
* "lives under docs/" against "lives in docs/" was a ``changed relation``: ``under``,
  ``within`` and ``over`` before a place mean ``in`` (``via``), while the opposites
  (above/below, before/after, in/outside) and ``under 100 ms`` still change the claim.

Pure checks of ``is_near_duplicate`` / ``propose``, then the examples through a real store
(both engines) and the real CLI."""

from __future__ import annotations

import json

import pytest
from test_cli import ok, remember

from ledger.conflicts.duplicates import is_near_duplicate, propose, sequence
from ledger.conflicts.wording import CHANGED_LIST, SAME_LIST, list_change

# (stored, new, signal): a new claim and a candidate, in both orders.
CHANGED = [
    # lists of items of several lengths: an item dropped, added or replaced (the brief's examples first)
    ("supported: python 3.10, 3.11", "supported: python 3.10, 3.11, 3.12-dev", "changed list"),
    ("supported: python 3.10, 3.11", "supported: python 3.10, 3.11, 3.12 dev", "changed list"),
    ("deps: numpy, scikit-learn, torch", "deps: numpy, torch", "changed list"),
    ("deps: numpy, scikit learn, torch", "deps: numpy, torch", "changed list"),
    ("the deps are numpy, scikit learn and torch", "the deps are numpy and torch", "changed list"),
    ("The CI runs lint, unit tests, integration tests and docs", "The CI runs lint, unit tests and docs",
     "changed list"),
    ("The CI runs lint, unit tests, integration tests and docs", "The CI runs lint, unit tests, e2e tests and docs",
     "changed list"),
    ("targets: linux x86, linux arm, macos", "targets: linux x86, macos", "changed list"),
    ("We ship wheels for linux, macos, windows, freebsd", "We ship wheels for linux, apple silicon, windows",
     "changed list"),
    # two items, one replaced next to the comma
    ("deps: numpy, torch", "deps: numpy, pandas", "changed list"),
    ("deps: numpy, torch", "deps: numpy, scikit-learn, torch", "changed list"),
    # two words of meaning, or one and a plain word added
    ("Requests are retried up to 3 times", "Requests are retried at least 3 times", "changed comparison"),
    ("Requests are retried 3 times", "Requests are retried up to 3 times", "changed comparison"),
    ("The job runs before the build", "The job runs after the build step", "changed relation"),
    ("Tests must run before the merge", "Tests may run after the merge", "changed modality"),
    ("The cache is not only for tests", "The cache is only for tests", "negation on one side"),
    ("The cache is not only for tests", "The cache is not for tests", "changed quantifier"),
    ("The service is not only fast but also safe", "The service is only fast", "negation on one side"),
    # place words that do change the claim
    ("The config lives above docs/", "The config lives below docs/", "changed relation"),
    ("The config lives in docs/", "The config lives outside docs/", "changed relation"),
    ("The footer sits under the header", "The footer sits in the header", "changed relation"),
    ("Keep the p99 latency under 100 ms", "Keep the p99 latency at 100 ms", "changed comparison"),  # < N / at N
    ("The token is valid within one hour", "The token is valid in one hour", "changed relation"),
    ("The worker handles over 100 jobs", "The worker handles via 100 jobs", "changed comparison"),
    # bounds of a number: inclusive and strict stay apart
    ("Requests are retried up to 3 times", "Requests are retried fewer than 3 times", "changed comparison"),
    ("Keep the p99 latency under 100 ms", "Keep the p99 latency at most 100 ms", "changed comparison"),
]

# (stored, new): the same claim.
SAME = [
    # a place word for another (the brief's example first)
    ("The config lives under docs/", "The config lives in docs/"),
    ("The config lives under docs/", "The config lives inside docs/"),
    ("The ruff options live under the tool.ruff key", "The ruff options live in the tool.ruff key"),
    ("The toggle is under Settings > Advanced", "The toggle is in Settings > Advanced"),
    ("The code lives within the repo root", "The code lives in the repo root"),
    ("The generated files go under the build folder", "The generated files go in the build folder"),
    ("The agent talks to the API over HTTPS", "The agent talks to the API via HTTPS"),
    ("The agent talks to the API through HTTPS", "The agent talks to the API via HTTPS"),
    ("The worker runs on Linux", "The worker runs under Linux"),
    ("Uploads are scanned beneath the proxy", "Uploads are scanned below the proxy"),
    # one bound of a number written another way (before a number only)
    ("Requests are retried up to 3 times", "Requests are retried at most 3 times"),
    ("The worker handles over 100 jobs", "The worker handles more than 100 jobs"),
    ("Keep the p99 latency under 100 ms", "Keep the p99 latency below 100 ms"),
    ("Use at most 4 workers", "Use max 4 workers"),
    ("The project requires Python >= 3.10", "The project requires Python at least 3.10"),
    ("Keep at least two replicas", "Keep no fewer than two replicas"),
    # a list of items of several lengths in another order
    ("deps: numpy, scikit learn, torch", "deps: torch, numpy, scikit learn"),
    ("The CI runs lint, unit tests, integration tests and docs",
     "The CI runs unit tests, lint, docs and integration tests"),
    ("We ship wheels for linux, macos, windows on arm", "We ship wheels for windows on arm, linux, macos"),
    ("We lint with ruff, black, and mypy", "We lint with ruff, black and mypy"),  # the serial comma
]

# (stored, new): a new claim, and no candidate either.
NEITHER = [
    ("Guest checkout is forbidden", "Guest checkout is not allowed"),  # the state signals read these alike
    ("We use ruff, black, mypy and the CI caches them", "We use ruff, black, mypy and the CI stores them"),
    ("Yes, the CI caches pip downloads", "Yes, the CI stores pip downloads"),  # two clauses, no list
    ("deps: numpy and torch", "deps: numpy and pandas"),  # "and" alone makes no list
    ("The job runs before the build", "The job runs before the release build"),  # a plain word added
    # an item two words longer than the shortest one between commas is read as a clause
    # after the list, not as an item (a known limit: no candidate)
    ("We ship wheels for linux, macos, windows on arm", "We ship wheels for linux, macos, windows"),
]


@pytest.mark.parametrize("a, b, signal", CHANGED)
def test_a_changed_list_or_relation_is_a_new_claim_and_a_candidate(a, b, signal):
    for x, y in ((a, b), (b, a)):
        assert not is_near_duplicate(x, y), (x, y)
        s = propose(x, y)
        assert s is not None and s.signals == (signal,), (x, y, s)


@pytest.mark.parametrize("a, b", SAME)
def test_a_place_word_or_a_reordered_list_is_the_same_claim(a, b):
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)
    assert propose(a, b) is None and propose(b, a) is None


@pytest.mark.parametrize("a, b", NEITHER)
def test_a_plain_word_changed_is_neither_a_duplicate_nor_a_candidate(a, b):
    assert not is_near_duplicate(a, b) and not is_near_duplicate(b, a)
    assert propose(a, b) is None and propose(b, a) is None


def test_a_bound_is_read_as_an_operator_only_before_a_number():
    assert sequence("retried up to 3 times") == sequence("retried at most 3 times") == sequence("retried <= 3 times")
    for words in ("the docs are up to date", "set the max pool size", "above the fold", "at least once"):
        assert not {"lte", "gte", "gt", "lt"} & set(sequence(words)), words


def test_under_means_in_only_before_a_place():
    assert sequence("lives under docs/") == sequence("lives in docs/")
    assert sequence("lives under the docs folder") == sequence("lives in the docs folder")
    for bound in ("under 100 ms", "under the header", "under load", "within one hour", "over 100 jobs"):
        assert "at" not in sequence(bound) and "through" not in sequence(bound), bound


def test_list_change_reads_items_between_the_shared_words():
    from ledger.conflicts.duplicates import units

    def change(a, b):
        return list_change(units(a), units(b))

    assert change("runs lint, unit tests, docs daily", "runs docs, lint, unit tests daily") == SAME_LIST
    assert change("runs lint, unit tests, docs daily", "runs lint, docs daily") == CHANGED_LIST
    # items that trade words are not the same items
    assert change("runs lint, unit tests, docs", "runs unit, lint tests, docs") == CHANGED_LIST
    # a clause after the list is no item
    assert change("uses ruff, black, mypy and the CI runs them nightly",
                  "uses ruff, black, mypy and the CI runs them daily") is None
    # "and" for "or" is no reorder
    assert change("needs the key, the host and the box", "needs the box, the key or the host") is None
    # two items in another order are no list: the sentence keeps its order
    assert change("Reads go to the replica, writes go to the primary",
                  "Writes go to the primary, reads go to the replica") is None
    assert not is_near_duplicate("deps: numpy, scikit learn", "deps: scikit learn, numpy")
    # a number beside the comma of two items is the signals' to compare
    assert change("standup at 11:00, in room 4", "standup at 44:33, in room 4") is None


# ------------------------------------------------------------------ a real store, both engines


def _changed(*news: str) -> list[tuple[str, str, str]]:
    """The CHANGED rows whose new text is one of ``news``, in that order."""
    return [next(row for row in CHANGED if row[1] == new) for new in news]


BRIEF = _changed("supported: python 3.10, 3.11, 3.12-dev", "deps: numpy, torch",
                 "Requests are retried at least 3 times", "The job runs after the build step")


@pytest.mark.parametrize("a, b, signal", BRIEF)
def test_the_store_keeps_the_changed_claim_and_proposes_the_pair(ledger, a, b, signal):
    first = ledger.remember(a, cluster="code", agent="alice")
    second = ledger.remember(b, cluster="code", agent="alice")
    assert not second.duplicate and second.memory.id != first.memory.id and second.memory.text == b
    (cand,) = ledger.candidates()
    assert cand.signals == (signal,)
    assert {cand.a.id, cand.b.id} == {first.memory.id, second.memory.id}


@pytest.mark.parametrize("a, b", [SAME[0], SAME[6], next(r for r in SAME if r[0].startswith("deps:"))])
def test_the_store_counts_a_place_word_or_a_reordered_list_as_corroboration(ledger, a, b):
    first = ledger.remember(a, cluster="code", agent="alice")
    again = ledger.remember(b, cluster="code", agent="bob")
    assert again.duplicate and again.memory.id == first.memory.id and again.new_reader
    assert ledger.candidate_count() == 0


def test_the_cli_keeps_the_briefs_examples(cli):
    for (a, b, _), cluster in zip(BRIEF, ("projects", "code", "proc", "reading")):
        first = remember(cli, a, cluster)
        res = json.loads(ok(*cli("remember", b, "--cluster", cluster, "--json")))
        assert not res["duplicate"] and res["id"] != first and res["text"] == b, (a, b, res)
        assert len(res["proposed"]) == 1, (a, b, res)
    first = remember(cli, "The config lives under docs/", "prefs")
    res = json.loads(ok(*cli("remember", "The config lives in docs/", "--cluster", "prefs", "--json")))
    assert res["duplicate"] and res["id"] == first and res["proposed"] == []
