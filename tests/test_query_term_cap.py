"""A query searches at most ``terms.MAX_QUERY_TERMS`` distinct terms (docs/search.md
"Terms"). Before, a 20,000-character query (a pasted page) took 1-2.5 s on a 2.7k-memory
store on every surface: each of its ~1,300 distinct words cost a vocabulary lookup
(fuzzy neighbours, a prefix's missed stems) and a phrase of one huge MATCH expression.
Now the first 64 are searched, exactly as a query of those terms alone, and the result
says so with a ``too-many-terms`` warning: the CLI (a real subprocess), the service on
both engines, the web API (a real ``ledger serve``). MCP carries the same warning list:
tests/test_mcp_warnings.py."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import T0, Cli
from liveserve import LiveServe

from ledger import terms as T
from ledger.clock import FixedClock
from ledger.service import Ledger
from ledger.text import QUERY_STOPWORDS

LIMIT = T.MAX_QUERY_TERMS
# 200 distinct made-up words, each a typo of others (fuzzy mode widens them)
WORDS = [f"z{a}{b}{c}x" for a in "bcdfg" for b in "aeiou" for c in "klmnprst"]


def _page(n_chars: int = 20_000) -> str:
    """The issue's example: a pasted page of 20,000 characters, its words repeating."""
    out = " ".join(WORDS[i % len(WORDS)] + " deploy" for i in range(n_chars // 8))
    return out[:n_chars].rsplit(" ", 1)[0]


# --------------------------------------------------------------- the split
def test_only_the_first_terms_are_kept_in_order():
    qt = T.split_query(WORDS, QUERY_STOPWORDS)
    assert qt.capped and qt.searched == LIMIT and qt.words == tuple(WORDS[:LIMIT]) and qt.last == WORDS[LIMIT - 1]
    # At the limit nothing is left out and nothing is said.
    qt = T.split_query(WORDS[:LIMIT], QUERY_STOPWORDS)
    assert not qt.capped and qt.searched == LIMIT and qt.last == ""
    # None: every term (the oracles of tests/test_retrieval.py compare with this).
    assert T.split_query(WORDS, QUERY_STOPWORDS, limit=None).words == tuple(WORDS)


def test_repeats_and_stopwords_take_no_place():
    terms = ["what", "is", *WORDS[: LIMIT - 1], "the", WORDS[0], WORDS[5], "how", WORDS[LIMIT - 1]]
    qt = T.split_query(terms, QUERY_STOPWORDS)
    assert not qt.capped and qt.words == tuple(WORDS[:LIMIT])


def test_a_term_is_what_one_token_brings():
    # node.js is one term (the compound and the phrase "node js"); a CJK run and a
    # symbol run one each; a version glued to its word one (the phrase "python 3").
    head = ["node.js", "連接池", "🔥🔥", "python3"]
    qt = T.split_query(head + WORDS, QUERY_STOPWORDS)
    assert qt.compounds == ("node.js",) and qt.phrases == ("node js", "python 3")
    assert qt.cjk == ("連接池",) and qt.symbols == ("🔥🔥",)
    assert qt.words == tuple(WORDS[: LIMIT - len(head)]) and qt.capped


def test_the_rest_of_the_text_is_not_read():
    """The work is bounded: once a term past the limit is found, no more is split."""
    read = []

    def pieces():
        for w in WORDS:
            read.append(w)
            yield w

    qt = T.split_query(pieces(), QUERY_STOPWORDS)
    assert qt.capped and len(read) == LIMIT + 1


def test_one_piece_without_spaces_is_capped_too():
    """Our own example: a list pasted without spaces is one piece of the parser and
    thousands of words of the split."""
    qt = T.split_query([",".join(WORDS * 20)], QUERY_STOPWORDS)
    assert qt.capped and qt.words == tuple(WORDS[:LIMIT])


def test_stopwords_alone_are_capped_as_well():
    stops = sorted(QUERY_STOPWORDS)
    assert len(stops) > LIMIT  # else this test says nothing
    qt = T.split_query(stops, QUERY_STOPWORDS)
    assert qt.words == tuple(stops[:LIMIT]) and qt.capped


# --------------------------------------------------------------- the search, both engines
@pytest.fixture()
def store(store_target):
    with _open(store_target) as led:
        for i, w in enumerate(WORDS):
            led.remember(f"Note {i}: the {w} service deploys on Fridays", cluster="proc", agent="claude")
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="claude")
    return store_target


def _open(store) -> Ledger:
    """The store at one fixed instant: both searches compared see the same strengths."""
    return Ledger.open(store, clock=FixedClock(T0))


def _searched_as(led: Ledger, long: str, short: str, mode: str = "hybrid"):
    a, b = led.search(long, limit=30, mode=mode), led.search(short, limit=30, mode=mode)
    assert [(m.id, m.score) for m in a.hits] == [(m.id, m.score) for m in b.hits]
    assert a.total == b.total
    return a


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "fuzzy"])
def test_a_long_query_is_searched_exactly_as_its_first_terms(store, mode):
    with _open(store) as led:
        res = _searched_as(led, " ".join(WORDS), " ".join(WORDS[:LIMIT]), mode)
        assert [w["kind"] for w in res.warnings()] == ["too-many-terms"]
        w = res.warnings()[0]
        assert w["searched"] == LIMIT and w["last"] == WORDS[LIMIT - 1]
        assert f"the first {LIMIT}" in w["warning"] and "Shorten the query" in w["warning"]
        # A memory that holds only a later word is not found: said, not hidden.
        assert WORDS[-1] not in " ".join(m.text for m in res.hits)
        # The example, 20,000 characters: "deploy" is its second word.
        page = _page()
        assert len(page) > 19_900
        res = _searched_as(led, page, " ".join(list(dict.fromkeys(page.split()))[:LIMIT]))
        assert [w["kind"] for w in res.warnings()] == ["too-many-terms"] and res.total > 0
        # A short query says nothing.
        assert led.search(" ".join(WORDS[:LIMIT])).warnings() == []


def test_a_long_recall_counts_what_it_returns(store):
    with Ledger.open(store) as led:
        res = led.recall(" ".join(WORDS), agent="claude", limit=5)
        assert res.not_counted is None and len(res.hits) == 5
        assert [w["kind"] for w in res.warnings()] == ["too-many-terms"]
        assert all(led.get(m.id).hits == 1 for m in res.hits)


# --------------------------------------------------------------- the surfaces
def test_the_cli_says_which_terms_were_searched(store):
    page = _page()
    rc, out, err = Cli(store)("search", "--json", page)
    assert rc == 0, err
    body = json.loads(out)
    assert [w["kind"] for w in body["warnings"]] == ["too-many-terms"] and body["total"] > 0
    rc, out, err = Cli(store)("recall", page)
    assert rc == 0 and f"the first {LIMIT}" in err and "Shorten the query" in err, err


def test_the_web_api_says_which_terms_were_searched(store):
    with LiveServe(store) as srv:
        r = httpx.get(srv.url + "api/search", params={"q": _page()}, timeout=60)
        assert r.status_code == 200, r.text[:300]
        assert [w["kind"] for w in r.json()["warnings"]] == ["too-many-terms"]
