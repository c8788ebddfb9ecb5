"""A version glued to its word is found by what people type (issue 14, "Terms as people
type them"; docs/search.md "Terms"): ``3.11`` finds ``python3.11``, ``18`` finds
``node18``, ``2.4.1`` finds ``v2.4.1``, ``2015`` finds ``es2015``. The word index holds
such a word as its letters and its number (``ledger.terms.split_versions``); migration
``m021_versions_apart`` indexes older stores again. Both engines, a real store, the CLI
as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import BOTH_ENGINES, LEDGER_BIN, iso, store_sql

from ledger import terms as T
from ledger.service import Ledger

ENGINES = BOTH_ENGINES

FOUND = {  # memory: queries that must find it (the user's example first, then ours)
    "CI runs python3.11 on every branch": ["3.11", "python3.11", "python", "python3", "python 3.11"],
    "The frontend builds with node18 only": ["18", "node18", "node", "node 18"],
    "Pin the client to v2.4.1 until March": ["2.4.1", "v2.4.1", "v2.4", "v2"],
    "Transpile to es2015 for the old kiosks": ["2015", "es2015"],
    "Ubuntu22.04 images are the base": ["22.04", "ubuntu", "ubuntu22.04"],
    "Python３．１２ is next": ["3.12", "python3.12"],  # fullwidth digits, after NFKC
}
# Words that stay whole: a letter and digits (a name), a stop word and digits, digits
# then letters, several letter-digit edges.
WHOLE = {"Store backups in s3 nightly": ["3"], "Encode h264 at 30 fps": ["264"], "Timeouts are 10ms": ["10"],
         "Patch log4j everywhere": ["4"], "Room on1 is booked": ["1"]}
NOISE = ["Python is the scripting language", "We have 3 environments and 11 services", "Node is pinned",
         "Release 2.4 shipped", "The 2016 budget", "Python 3.10 is gone"]


@pytest.fixture()
def led(store_target, clock):
    with Ledger.open(store_target, clock=clock) as led:
        for t in [*FOUND, *WHOLE, *NOISE]:
            led.remember(t, cluster="code", agent="a")
        yield led


def _found(led, q, mode="hybrid"):
    return [m.text for m in led.search(q, mode=mode, limit=50).hits]


@pytest.mark.parametrize("text", list(FOUND))
def test_the_typed_part_of_a_version_finds_it(led, text):
    for q in FOUND[text]:
        for mode in ("hybrid", "keyword", "fuzzy"):
            assert text in _found(led, q, mode), (q, mode)
    # The number alone ranks the memory that holds it first.
    assert _found(led, FOUND[text][0])[0] == text
    assert text in [m.text for m in led.recall(FOUND[text][0], agent="a").hits]


def test_a_version_is_not_another_number(led):
    assert "CI runs python3.11 on every branch" not in _found(led, "3.12")
    assert "Python３．１２ is next" not in _found(led, "3.11")
    assert "The frontend builds with node18 only" not in _found(led, "16")
    assert "Pin the client to v2.4.1 until March" not in _found(led, "2.4.2")
    assert "Transpile to es2015 for the old kiosks" not in _found(led, "2016")


def test_a_version_typed_glued_to_its_word_is_a_prefix_like_the_word(led):
    """The user's case: ``python3`` stopped finding ``python311`` when versions were set
    apart (held as "python 311"; the query was the exact phrase "python 3"). Outside
    keyword mode a typed word of 3+ characters is a prefix, and so is its number."""
    for t in ("The old image ships python311", "Our node16 runners are gone", "The v20 firmware is flaky"):
        led.remember(t, cluster="code", agent="a")
    for mode in ("hybrid", "fuzzy"):
        got = _found(led, "python3", mode)
        for text in ("The old image ships python311", "CI runs python3.11 on every branch", "Python３．１２ is next",
                     "Python 3.10 is gone"):
            assert text in got, (mode, text, got)
        assert "Python is the scripting language" not in got
        got = _found(led, "node1", mode)
        assert "The frontend builds with node18 only" in got and "Our node16 runners are gone" in got
    # keyword mode is exact: python311 does not hold the phrase "python 3"
    assert "The old image ships python311" not in _found(led, "python3", "keyword")
    assert "CI runs python3.11 on every branch" in _found(led, "python3", "keyword")
    # ...unless the user asks with a star, in any mode
    assert "The old image ships python311" in _found(led, "python3*", "keyword")
    # A word of two characters stays exact, and versions typed with dots too.
    assert "The v20 firmware is flaky" not in _found(led, "v2")
    assert "Pin the client to v2.4.1 until March" in _found(led, "v2")
    assert "CI runs python3.11 on every branch" not in _found(led, "python3.12")
    assert "The old image ships python311" in [m.text for m in led.recall("python3", agent="a").hits]


def test_names_made_of_a_letter_and_digits_stay_whole(led):
    for text, queries in WHOLE.items():
        for q in queries:
            assert text not in _found(led, q, "keyword"), (text, q)
        assert _found(led, text.split()[1 if text.startswith(("Store", "Encode", "Room")) else 2], "keyword")[0] == text


def test_split_versions():
    sv = T.split_versions
    assert sv("python3.11 node18 es2015 v2.4.1 V2") == "python 3.11 node 18 es 2015 v 2.4.1 V 2"
    assert sv("s3 h264 x86_64 on1 10ms 2fa log4j a1b2 e4") == "s3 h264 x86_64 on1 10ms 2fa log4j a1b2 e4"
    assert sv("my_python3 (node18)") == "my_python 3 (node 18)"  # _ separates words, as in the word index
    assert sv("café2 plain text") == "café 2 plain text"
    assert T.split_query(["python3"]).phrases == ("python 3",)
    assert T.split_query(["python3.11"]) == T.QueryTerms(phrases=["python 3 11"], compounds=["python3.11"])
    assert "python" in T.vocabulary_words("CI runs python3.11")


def _cli(verb, *args, db):
    p = subprocess.run([LEDGER_BIN, verb, "--db", str(db), *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    return p.returncode, p.stdout, p.stderr


def test_cli_recall_finds_a_version_by_its_number(led, store_target):
    rc, out, err = _cli("recall", "--agent", "a", "3.11", db=store_target)
    assert rc == 0 and "CI runs python3.11" in out.splitlines()[1], (out, err)
    rc, out, err = _cli("search", "--json", "18", db=store_target)
    assert rc == 0 and json.loads(out)["hits"][0]["text"] == "The frontend builds with node18 only"


def test_m021_indexes_older_stores_again(store_target, clock, monkeypatch):
    """A store indexed before m021 (texts, a chunk's neighbour context, a replaced text
    kept for asof:) finds the numbers after opening it once; only the rows whose indexed
    form changes are written again."""
    with monkeypatch.context() as mp:
        mp.setattr(T, "split_versions", lambda text: text)  # index as before m021
        led = Ledger.open(store_target, clock=clock)
        py = led.remember("CI runs python3.11 on every branch", cluster="code", agent="a").memory.id
        led.remember("We keep 3 replicas and 11 shards", cluster="code", agent="a").memory.id
        led.remember("Backups go to s3 at night", cluster="code", agent="a").memory.id
        res = led.ingest_chunks("notes.md", ["The cache is warm.", "Build with node18 please.", "Bye now."],
                                cluster="code", agent="a")
        old = led.remember("The kiosk runs es2015 bundles", cluster="code", agent="a").memory.id
        clock.advance(days=1)
        before = iso(clock())
        clock.advance(days=1)
        led.update(old, text="The kiosk runs modern bundles")
        assert led.search("3.11").total == 0  # ("3 replicas and 11 shards" does not hold the phrase "3 11")
        assert led.search("18").total == 0 and led.search(f"2015 asof:{before}").total == 0
        led.close()
    store_sql(store_target, "DELETE FROM _migrations WHERE name = 'm021_versions_apart'")
    rows = "SELECT m.seq, f.text || '|' || f.context FROM memories m JOIN memories_fts f ON f.{} = m.seq"
    key = "rowid" if str(store_target).endswith(".db") else "seq"
    before_rows = dict(store_sql(store_target, rows.format(key)))
    led = Ledger.open(store_target, clock=clock)
    try:
        assert [m.id for m in led.search("3.11").hits][0] == py
        node = [m for m in led.search("18", limit=50).hits]
        assert node and node[0].text == "Build with node18 please."
        assert [m.id for m in led.search(f"2015 asof:{before}").hits] == [old]
        assert [m.id for m in led.search("python", mode="keyword").hits] == [py]
        # exactly the memories with such a word in their text or neighbour context
        chunks = [m.id for m in led.source_detail(res.source_id)["chunks"]]
        seqs = dict(store_sql(store_target, "SELECT seq, id FROM memories"))
        after_rows = dict(store_sql(store_target, rows.format(key)))
        changed = [seqs[s] for s in after_rows if after_rows[s] != before_rows[s]]
        assert sorted(changed) == sorted([py, *chunks])
    finally:
        led.close()
    ctx = [c for (c,) in store_sql(store_target, "SELECT context FROM memories_fts") if "node" in c]
    assert len(ctx) == 2 and all("node 18" in c for c in ctx), ctx
