"""A claim that changes a word of meaning is a new claim and a conflict candidate, never
corroboration (found by a review: the duplicate check took prepositions and tense as
filler, so "works for the EU region" then "works with the EU region", or "The cache is
enabled" then "The cache was enabled", counted as the same claim and the change was
lost). A reordered comma list is the same claim, not a "swapped words" candidate; a list
that gains, loses or replaces an item is a change. Numbers, units and versions glued to
CJK text are read like numbers in spaced text.

Pure checks of ``is_near_duplicate`` / ``propose``, then the same pairs through a real
store (both engines), the real CLI and the watcher's distiller, which writes its
findings through ``remember``."""

from __future__ import annotations

import json
import time

import pytest
from conftest import T0
from fakes.hooks import cfg_with, post_bash
from test_cli import ok, remember

from ledger.conflicts.duplicates import is_near_duplicate, propose, sequence, swapped_words
from ledger.conflicts.wording import FILLER, SIGNALS
from ledger.filekeys import file_key
from ledger.store import watch as W
from ledger.watcher.distill import distill_session

# (stored, new, the signal the proposer must give): the same sentence but for one word
# that changes what it says.
CHANGED = [
    # the review's examples
    ("The billing service works for the EU region", "The billing service works with the EU region", "changed relation"),
    ("The cache is enabled", "The cache was enabled", "changed tense"),
    # relations
    ("Migrations run before the deploy", "Migrations run after the deploy", "changed relation"),
    ("Keep the p99 latency above 100 ms", "Keep the p99 latency below 100 ms", "changed comparison"),  # > / <
    ("Errors are logged to stderr", "Errors are logged from stderr", "changed relation"),
    ("Backups are stored in S3", "Backups are stored outside S3", "changed relation"),
    ("The token is valid for one hour", "The token is valid within one hour", "changed relation"),
    # tense and aspect
    ("The cache is enabled", "The cache will be enabled", "changed tense"),
    ("The cache is enabled", "The cache has been enabled", "changed tense"),
    ("Releases are tagged by the CI", "Releases were tagged by CI", "changed tense"),
    ("The nightly job did run on the big worker", "The nightly job will run on the big worker", "changed tense"),
    ("The build uses a shared cache", "The build used a shared cache", "changed tense"),  # an inflection, too
    ("The API returns JSON errors", "The API returned JSON errors", "changed tense"),
    # modality
    ("Deploys must run the smoke tests", "Deploys may run the smoke tests", "changed modality"),
    ("Deploys must run the smoke tests", "Deploys should run the smoke tests", "changed modality"),
    ("Reviewers can merge to main", "Reviewers must merge to main", "changed modality"),
    # quantifiers
    ("All tests run in CI", "Some tests run in CI", "changed quantifier"),
    ("All tests run in CI", "No tests run in CI", "changed quantifier"),
    ("Admins can delete projects", "Only admins can delete projects", "changed quantifier"),
    ("Yes, the CI caches pip downloads", "No, the CI caches pip downloads", "changed quantifier"),
    # comparisons and operators
    ("Set the min pool size to 10", "Set the max pool size to 10", "changed comparison"),
    ("Requests are retried at most 3 times", "Requests are retried at least 3 times", "changed comparison"),
    ("The worker handles more than 10 jobs", "The worker handles fewer than 10 jobs", "changed comparison"),
    ("The project requires Python >= 3.10", "The project requires Python <= 3.10", "changed comparison"),
    ("The project requires python>=3.10", "The project requires python<3.10", "changed comparison"),
    ("The retry count must be > 3", "The retry count must be < 3", "changed comparison"),
    ("The project requires Python 3.12 or newer", "The project requires Python 3.12 or older", "changed comparison"),
    # truth values, opposite verbs, negations
    ("The strict flag is true", "The strict flag is false", "changed truth value"),
    ("Cache keys include the user id", "Cache keys exclude the user id", "changed action"),
    ("The sidecar pushes metrics to the gateway", "The sidecar pulls metrics to the gateway", "changed action"),
    ("Admins can delete projects", "Admins can't delete projects", "negation on one side"),
    ("Tests never touch the network", "Tests always touch the network", "negation on one side"),
    # a value word the signals do not read
    ("The job queue is FIFO", "The job queue is LIFO", "changed value"),
    # lists that gain, lose or replace an item
    ("We lint with ruff, black, mypy", "We lint with ruff, flake8, mypy", "changed list"),
    ("We lint with ruff, black, mypy", "We lint with ruff, black", "changed list"),
    ("We lint with ruff, black, mypy", "We lint with ruff, black, mypy, isort", "changed list"),
    ("We lint with ruff, black and mypy before each commit", "We lint with ruff, pylint and mypy before each commit",
     "changed list"),
    ("Deploys go to eu west, us east, ap south", "Deploys go to eu west, us east, ap north", "changed list"),
    # CJK: a number, a size, a version glued to the text
    ("服务端口是8080", "服务端口是9090", "divergent numbers"),
    ("ポートは8080です", "ポートは9090です", "divergent numbers"),
    ("缓存大小是512MB", "缓存大小是2GB", "divergent numbers"),
    ("超时时间是30秒", "超时时间是60秒", "divergent numbers"),
    ("タイムアウトは30秒です", "タイムアウトは2分钟です", "divergent numbers"),
    ("缓存保留7天", "缓存保留2周", "divergent numbers"),
    ("我们使用Python3.11", "我们使用Python3.12", "divergent numbers"),
    ("APIのバージョンはv2です", "APIのバージョンはv3です", "divergent numbers"),
    # versions glued to their name in spaced text too
    ("The scripts need python3", "The scripts need python2", "divergent numbers"),
    ("The public API is v2", "The public API is v3", "divergent numbers"),
]

# (stored, new): the same claim again, up to true filler (articles, case, width,
# punctuation, the present tense of "be"), or a reordered list.
SAME = [
    ("The build uses a cache", "The build uses the cache"),
    ("Debug logging is on in staging", "Debug logging is on on staging"),  # in/on/at only place a thing
    ("Tests run in CI", "tests run on CI."),
    ("The model stores its weights in fp16", "The model stores weights in FP16"),
    ("Releases are tagged by the CI", "Releases are tagged by CI"),
    ("The CLI doesn't cache results", "The CLI does not cache results"),
    ("Admins cannot delete projects", "Admins can not delete projects"),
    ("Python >= 3.10 is required", "Python>=3.10 is required"),
    ("Python ≥ 3.10 is required", "Python >= 3.10 is required"),
    ("服务端口是8080", "服务端口是8080。"),
    ("ポートは8080です", "ポートは８０８０です"),  # fullwidth digits
    # a reordered list of the same items
    ("We lint with ruff, black, mypy", "We lint with black, ruff, mypy"),
    ("We lint with ruff, black and mypy", "We lint with mypy, black and ruff"),
    ("We lint with ruff, black, and mypy before each commit", "We lint with mypy, ruff, and black before each commit"),
    ("Deploys go to eu west, us east, ap south", "Deploys go to ap south, eu west, us east"),
    ("The service exposes ports 8080, 8081, 9090", "The service exposes ports 9090, 8080, 8081"),
]

# (stored, new): not the same claim, and no candidate either.
NEITHER = [
    ("All tests run in CI", "Tests run in CI"),  # a universal quantifier a plain claim already means
    ("Releases are tagged by CI", "Releases are tagged CI"),  # a relation word alone
    ("Telemetry can be enabled per project", "Telemetry can be disabled per project"),  # two possibilities
    ("The cache size is 512MB", "The cache size is 0.5GB"),  # one value written two ways
    ("缓存大小是512MB", "缓存大小是0.5GB"),
    ("超时时间是30秒", "超时时间是0.5分钟"),  # CJK units of time
    ("タイムアウトは30秒です", "タイムアウトは0.5分钟です"),
    ("缓存保留7天", "缓存保留1周"),
    ("The iOS app is slow", "The Android app is slow"),  # two subjects, not a changed value
]


@pytest.mark.parametrize("a, b, signal", CHANGED)
def test_a_changed_word_of_meaning_is_a_new_claim_and_a_candidate(a, b, signal):
    for x, y in ((a, b), (b, a)):
        assert not is_near_duplicate(x, y), (x, y)
        s = propose(x, y)
        assert s is not None and s.signals == (signal,), (x, y, s)


@pytest.mark.parametrize("a, b", SAME)
def test_true_filler_and_a_reordered_list_are_the_same_claim(a, b):
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)
    assert propose(a, b) is None and not swapped_words(a, b)


@pytest.mark.parametrize("a, b", NEITHER)
def test_an_added_neutral_word_is_neither_a_duplicate_nor_a_candidate(a, b):
    assert not is_near_duplicate(a, b) and not is_near_duplicate(b, a)
    assert propose(a, b) is None and propose(b, a) is None


def test_the_filler_is_only_articles_be_and_pointing_pronouns():
    assert FILLER == frozenset("a an the is are am be been being it its this that which".split())
    for word in "was were has have had will for with to from by of before after must may not no all some".split():
        assert word not in FILLER


@pytest.mark.parametrize("a, b", [
    ("We lint with ruff, black, mypy", "We lint with black, ruff, mypy"),  # the review's example
    ("We lint with ruff, black and mypy", "We lint with mypy, black and ruff"),
    ("Deploys need the VPN key, the bastion host or the jump box",
     "Deploys need the jump box, the VPN key or the bastion host"),
])
def test_a_reordered_list_is_no_swapped_words_candidate(a, b):
    assert not swapped_words(a, b) and propose(a, b) is None and propose(b, a) is None
    assert sequence(a) == sequence(b)


def test_two_words_joined_by_a_comma_are_no_list():
    """Two items are no list: the sentence keeps its order ("Yes, the CI" / "the CI, yes")."""
    assert sequence("Yes, the CI caches pip") != sequence("CI, yes the caches pip")
    assert not is_near_duplicate("Reads go to the replica, writes go to the primary",
                                 "Reads go to the primary, writes go to the replica")


def test_every_signal_name_is_one_the_docs_list():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "contradictions.md").read_text(encoding="utf-8")
    for name in SIGNALS:
        assert f"`{name}`" in doc, name


# ------------------------------------------------------------------ a real store, both engines


def _remember(led, text, cluster="code"):
    return led.remember(text, cluster=cluster, agent="alice")


def _changed(*news: str) -> list[tuple[str, str, str]]:
    """The CHANGED rows whose new text is one of ``news``, in that order."""
    return [next(row for row in CHANGED if row[1] == new) for new in news]


@pytest.mark.parametrize("a, b, signal", _changed(
    "The billing service works with the EU region", "The cache was enabled", "Deploys should run the smoke tests",
    "No tests run in CI", "The project requires Python <= 3.10", "We lint with ruff, flake8, mypy",
    "Deploys go to eu west, us east, ap north", "服务端口是9090", "The API returned JSON errors"))
def test_the_store_keeps_the_changed_claim_and_proposes_the_pair(ledger, a, b, signal):
    first = _remember(ledger, a)
    second = _remember(ledger, b)
    assert not second.duplicate and second.memory.id != first.memory.id and second.memory.text == b
    (cand,) = ledger.candidates()
    assert cand.signals == (signal,)
    assert {cand.a.id, cand.b.id} == {first.memory.id, second.memory.id}


@pytest.mark.parametrize("a, b", [SAME[i] for i in (0, 1, 9, 11, 12)])
def test_the_store_counts_a_true_rewording_as_corroboration(ledger, a, b):
    first = _remember(ledger, a)
    ledger_b = ledger.remember(b, cluster="code", agent="bob")
    assert ledger_b.duplicate and ledger_b.memory.id == first.memory.id and ledger_b.new_reader
    assert ledger.candidate_count() == 0


def test_the_cli_keeps_the_reviews_examples(cli):
    """The review's steps through the real CLI."""
    for a, b, _ in _changed("The billing service works with the EU region", "The cache was enabled", "服务端口是9090",
                            "ポートは9090です"):
        first = remember(cli, a, "projects")
        res = json.loads(ok(*cli("remember", b, "--cluster", "projects", "--json")))
        assert not res["duplicate"] and res["id"] != first and res["text"] == b, (a, b, res)
        assert len(res["proposed"]) == 1, (a, b, res)
    first = remember(cli, "We lint with ruff, black, mypy", "proc")
    res = json.loads(ok(*cli("remember", "We lint with black, ruff, mypy", "--cluster", "proc", "--json")))
    assert res["duplicate"] and res["id"] == first and res["proposed"] == []
    cands = json.loads(ok(*cli("conflicts", "--json")))
    assert sorted(c["signals"][0] for c in cands) == ["changed relation", "changed tense", "divergent numbers",
                                                      "divergent numbers"]


# ------------------------------------------------------------------ the watcher's distiller


@pytest.fixture
def proj(tmp_path):
    p = tmp_path / "proj"
    (p / "x").mkdir(parents=True)
    (p / "x" / "model.ckpt").write_bytes(b"\x89CKPT" + bytes(range(200)))
    return p


def _distill(ledger, store_target, proj, facts, n):
    from fakes.hooks import handle

    for i in range(n):
        handle(post_bash(f"xxd -l 16 x/model.ckpt # {i}", stdout="00000000: 8943 4b50", cwd=proj, session="s1"),
               db=store_target, now=T0 + 60_000 + 1000 * (n + i), cfg=None, spawn=None)
    owner = f"o{time.monotonic_ns()}"
    assert W.try_lease(ledger.store._conn, "claude-code:s1", owner, ledger.clock())
    return distill_session(ledger, "claude-code:s1", owner, cfg_with(), answer_fn=lambda prompt: (json.dumps(facts), 10, 5),
                           log=lambda m: None)


def test_the_watcher_adds_a_changed_finding_and_corroborates_a_reworded_one(ledger, store_target, proj):
    """The distiller's findings go through remember: a finding that changes a word of
    meaning of a known fact is added (and proposed), one that only rewords it corroborates."""
    ckpt = str(proj / "x" / "model.ckpt")
    known = ledger.remember("model.ckpt is loaded for the EU region", cluster="code", agent="alice",
                            files=[file_key(ckpt)]).memory.id
    cached = ledger.remember("The cache is enabled", cluster="code", agent="alice").memory.id
    r = _distill(ledger, store_target, proj, [
        {"fact": "model.ckpt is loaded with the EU region", "topic": "t", "files": [ckpt]},
        {"fact": "The cache was enabled", "topic": "t"},
    ], 2)
    assert (r["added"], r["corroborated"]) == (2, 0), r
    signals = sorted(c.signals[0] for c in ledger.candidates())
    assert signals == ["changed relation", "changed tense"]
    r = _distill(ledger, store_target, proj, [
        {"fact": "model.ckpt is loaded for the EU region.", "topic": "t", "files": [ckpt]},
        {"fact": "the cache is enabled", "topic": "t"},
    ], 1)
    assert (r["added"], r["corroborated"]) == (0, 2), r
    assert {"alice", "watcher"} <= set(ledger.get(known).readers) and "watcher" in ledger.get(cached).readers
