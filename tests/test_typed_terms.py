"""Terms as people type them (issue 14, "Terms as people type them"; docs/search.md
"Terms"): a trailing ``*`` means "starts with", punctuation left at a word's ends does
not hide the word, and a query with nothing to search says so. On both engines (real
SQLite files, the shared PostgreSQL cluster), the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import BOTH_ENGINES, LEDGER_BIN

from ledger import terms as T
from ledger.service import Ledger

ENGINES = BOTH_ENGINES

DEPLOYS = ["Deployments run from the main branch", "We deploy with Jenkins every Friday"]
OTHERS = ["Never use git push --force on main", "force push only on your own branch", "The renderer is C++",
          "cache keys expire hourly", "cookie banner copy", "Objective-C is only in the old app",
          "Pass -v to see every request", "a v shaped graph"]


@pytest.fixture()
def led(store_target):
    with Ledger.open(store_target) as led:
        for t in DEPLOYS + OTHERS:
            led.remember(t, cluster="code", agent="a")
        yield led


def _texts(res):
    return sorted(m.text for m in res.hits)


# The user's examples first (deploy*, deploy-), then our own of the same kind.
@pytest.mark.parametrize("query", ["deploy*", "deploy-", "-deploy", "deploy.", "(deploy)", '"deploy",', "deploy:",
                                   "depl*", "DEPLOY*", "deploy**", "deploy*.", "(deploy*)", "-deploy-", "deploy/",
                                   "de*"])
def test_a_word_with_dangling_punctuation_or_a_star_finds_the_word(led, query):
    for mode in ("hybrid", "fuzzy"):
        res = led.search(query, mode=mode)
        assert _texts(res) == sorted(DEPLOYS), (query, mode)
        assert res.warnings() == []
    assert _texts(led.recall(query, agent="a")) == sorted(DEPLOYS)


@pytest.mark.parametrize("query", ["deploy*", "depl*", "-deploy*", "de*"])
def test_a_star_is_a_prefix_in_keyword_mode_too(led, query):
    # The user asked for "starts with": keyword mode (exact words) honours it.
    assert _texts(led.search(query, mode="keyword")) == sorted(DEPLOYS), query
    # Without the star keyword mode stays exact: "depl" and "de" are no words of the store.
    word = query.rstrip("*").lstrip("-")
    if word != "deploy":  # (whether deploy is deployments' stem is the engine's stemmer's business)
        assert led.search(word, mode="keyword").total == 0


def test_symbols_that_make_a_term_are_still_searched_as_written(led):
    # c++ is not the word c (Objective-C), -v is not the word v.
    assert _texts(led.search("C++")) == ["The renderer is C++"]
    assert _texts(led.search("-v")) == ["Pass -v to see every request"]
    # --force is searched as written and as the word: the text that writes it ranks first.
    order = [m.text for m in led.search("--force").hits]
    assert order == ["Never use git push --force on main", "force push only on your own branch"]
    assert [m.text for m in led.search("--force", mode="keyword").hits][0] == "Never use git push --force on main"


def test_a_star_on_a_short_word_or_a_compound(led):
    # One letter is searched as the word (every word starting with c is no question).
    # (the word c is in "C++" and "Objective-C"), never cache and cookie.
    assert _texts(led.search("c*")) == _texts(led.search("c")) == ["Objective-C is only in the old app",
                                                                    "The renderer is C++"]
    # A star after a compound around one letter is dropped too: c++* is c++.
    assert _texts(led.search("c++*")) == ["The renderer is C++"]
    # A star after a compound around a word of two is that word as a prefix, like py*.
    led.remember("pydantic models are validated on load", cluster="code", agent="a")
    assert _texts(led.search("-py*", mode="keyword")) == ["pydantic models are validated on load"]


# ------------------------------------------------------------- starred compounds
STARRED = [
    "runs on python 3.1", "CI runs python3.11 on every branch", "Python 3.12 is next", "Pinned to 3.1.4 for now",
    "Release 3.2 shipped", "Build 13.1 failed", "Pin the client to v2.4.1", "v2.41 broke the build", "v2.5 is out",
    "The web app runs on node.js 20", "Settings live in node.json", "Install @scope/pkg from the registry",
    "The ci.deployments job runs nightly",
]


@pytest.fixture()
def starred(store_target):
    with Ledger.open(store_target) as led:
        for t in DEPLOYS + OTHERS + STARRED:
            led.remember(t, cluster="code", agent="a")
        yield led


# The user's example first (3.1*, node.js*), then our own of the same kind.
@pytest.mark.parametrize("query, found", [
    ("3.1*", ["runs on python 3.1", "CI runs python3.11 on every branch", "Python 3.12 is next",
              "Pinned to 3.1.4 for now"]),
    ("node.js*", ["The web app runs on node.js 20", "Settings live in node.json"]),
    ("v2.4*", ["Pin the client to v2.4.1", "v2.41 broke the build"]),
    ("python3.1*", ["runs on python 3.1", "CI runs python3.11 on every branch", "Python 3.12 is next"]),
    ("@scope/pk*", ["Install @scope/pkg from the registry"]),
    ("ci.deploy*", ["The ci.deployments job runs nightly"]),  # porter's deploy -> deploi: the prefix extras
    ("(3.1*)", ["runs on python 3.1", "CI runs python3.11 on every branch", "Python 3.12 is next",
                "Pinned to 3.1.4 for now"]),
])
def test_a_starred_compound_is_a_prefix_at_its_last_word(starred, query, found):
    for mode in ("hybrid", "keyword", "fuzzy"):
        res = starred.search(query, mode=mode)
        assert _texts(res) == sorted(found), (query, mode)  # not 3.2, 13.1, v2.5
        assert res.warnings() == []
    assert _texts(starred.recall(query, agent="a")) == sorted(found)


def test_a_starred_compound_ranks_the_text_that_writes_it_first(starred):
    # The compound as written is still searched exactly in the side index.
    assert [m.text for m in starred.search("3.1*").hits][0] == "runs on python 3.1"
    assert [m.text for m in starred.search("node.js*").hits][0] == "The web app runs on node.js 20"
    # Without the star a compound stays exact: 3.1 is not 3.11 (its phrase "3 1" is in
    # 3.1.4, as before), 3.12 not 3.1.
    assert _texts(starred.search("3.1")) == ["Pinned to 3.1.4 for now", "runs on python 3.1"]
    assert "runs on python 3.1" not in _texts(starred.search("3.12"))


def test_split_query_of_starred_compounds():
    sq = T.split_query
    assert sq(["3.1*"]) == T.QueryTerms(phrases=["3 1"], compounds=["3.1"], starred=["3 1"])
    assert sq(["python3*"]) == T.QueryTerms(phrases=["python 3"], starred=["python 3"], versions=["python 3"])
    assert T.prefix_phrases(sq(["3.1*", "3.12"]), "keyword") == ["3 1"]
    assert T.prefix_phrases(sq(["python3", "v2", "3.12"]), "hybrid") == ["python 3"]
    assert T.prefix_phrases(sq(["python3", "v2", "3.12"]), "keyword") == []


# ------------------------------------------------------------- a star after one letter
@pytest.mark.parametrize("query, searched", [("d*", ["d"]), ("D* deploy", ["d"]), ("-v*", ["-v"]), ("c++*", ["c++"]),
                                             ("d* x*", ["d", "x"])])
def test_a_star_after_one_letter_says_it_was_searched_as_the_word(led, query, searched):
    for res in (led.search(query), led.search(query, mode="keyword"), led.recall(query, agent="a")):
        (w,) = res.warnings()
        assert w["kind"] == "short-prefix" and w["searched_as"] == searched and w["values"] == [t + "*" for t in searched]
        assert f"{searched[0]}* " in w["warning"] and "two or more letters before the *" in w["warning"]
        assert res.to_dict()["warnings"] == [w]
    assert led.query_warnings(query) == [w]
    if query == "d*":  # the user's example, in words
        assert w["warning"].startswith('d* was searched as the word "d", not as a prefix')
    # Two letters are a prefix, and no warning.
    assert led.search("de*").warnings() == [] and led.search("py*").warnings() == []


def test_a_star_after_one_letter_is_said_by_the_cli_and_the_web(led, store_target):
    rc, out, err = _cli("recall", "--agent", "a", "--", "c*", db=store_target)
    assert rc == 0 and "The renderer is C++" in out, err
    assert '⚠ c* was searched as the word "c", not as a prefix' in err, err
    rc, out, err = _cli("search", "--json", "--", "c*", db=store_target)
    assert rc == 0 and [w["kind"] for w in json.loads(out)["warnings"]] == ["short-prefix"], out
    rc, out, err = _cli("search", "--", "c*", db=store_target)
    assert rc == 0 and '⚠ c* was searched as the word "c"' in err, err
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from ledger.web.server import create_app

    with TestClient(create_app(str(store_target)), base_url="http://127.0.0.1:7444") as c:
        for api in ("/api/search", "/api/graph"):
            body = c.get(api, params={"q": "c*"}).json()
            assert [w["kind"] for w in body["warnings"]] == ["short-prefix"], (api, body)


def test_a_starred_stopword_is_searched():
    qt = T.split_query(["what", "for*", "deploy"], frozenset({"what", "for"}))
    assert qt.words == ("for", "deploy") and qt.starred == ("for",)
    assert T.prefix_words(qt, "keyword", frozenset({"what", "for"})) == ["for"]
    assert T.prefix_words(qt, "hybrid", frozenset({"what", "for"})) == ["for", "deploy"]


def test_split_query_of_typed_punctuation():
    sq = T.split_query
    assert sq(["deploy*"]) == T.QueryTerms(words=["deploy"], starred=["deploy"])
    assert sq(["deploy-"]) == T.QueryTerms(words=["deploy"], compounds=["deploy-"])
    assert sq(["-deploy"]) == T.QueryTerms(words=["deploy"], compounds=["-deploy"])
    assert sq(["--force"]) == T.QueryTerms(words=["force"], compounds=["--force"])
    assert sq(["c++", "-v", "c#", "50%"]) == T.QueryTerms(compounds=["c++", "-v", "c#", "50%"])
    assert sq(["*.py"]) == T.QueryTerms(compounds=["*.py"])  # a glob: as written, no word of 3
    assert sq(["node.js*"]) == T.QueryTerms(phrases=["node js"], compounds=["node.js"], starred=["node js"])
    assert sq(["d*"]) == T.QueryTerms(words=["d"], starred=["d"], short_stars=["d"])
    assert sq(["-v*", "c++*"]) == T.QueryTerms(compounds=["-v", "c++"], short_stars=["-v", "c++"])
    assert not sq(["*"]) and not sq(["---", "()", "**"])


@pytest.mark.parametrize("query", ["*", "---", "() **", "* cluster:code"])
def test_a_query_with_nothing_to_search_says_so(led, query):
    for res in (led.search(query), led.recall(query, agent="a")):
        assert res.total == 0
        (w,) = res.warnings()
        assert w["kind"] == "nothing-to-search" and "matches nothing" in w["warning"]
        assert res.to_dict()["warnings"] == [w]
    assert led.query_warnings(query) == [w]
    # A stopword alone is searched as typed: not nothing-to-search, but stopwords-only.
    assert [w["kind"] for w in led.search("the").warnings()] == ["stopwords-only"]


def _cli(verb, *args, db) -> tuple[int, str, str]:
    """``ledger <verb> --db <db> <args>`` (options first: args may hold ``--``)."""
    p = subprocess.run([LEDGER_BIN, verb, "--db", str(db), *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    return p.returncode, p.stdout, p.stderr


def test_cli_recall_of_typed_terms(led, store_target):
    for q in ("deploy*", "deploy-"):
        rc, out, err = _cli("recall", "--agent", "a", "--", q, db=store_target)
        assert rc == 0 and "Deployments run" in out and "We deploy with Jenkins" in out, (q, out, err)
    rc, out, err = _cli("recall", "--agent", "a", "--mode", "keyword", "deploy*", db=store_target)
    assert rc == 0 and "Deployments run" in out, err
    rc, out, err = _cli("recall", "--agent", "a", "--", "*", db=store_target)
    assert rc == 0 and "⚠ * has no letter, digit or symbol to search for" in err, err
    rc, out, err = _cli("search", "--json", "--", "---", db=store_target)
    assert rc == 0 and [w["kind"] for w in json.loads(out)["warnings"]] == ["nothing-to-search"], out
