"""Retrieval (issues 2 and 14): ranking rules, chunking through ingest, and exactness: on
a store of a few thousand memories, ``search`` returns exactly what a brute-force Python
pass over every row computes from the definition in docs/search.md (fuzzy neighbours by
edit distance against every vocabulary word, BM25 from separate full FTS queries,
strength from strength.py, score = 0.75·relevance + 0.25·strength)."""

from __future__ import annotations

import math
import random
import re
import sqlite3
import unicodedata
import uuid

import pytest
from conftest import BOTH_ENGINES, T0, is_pg, iso, pg_schema_url

from ledger import strength as S
from ledger import terms as T
from ledger.clock import DAY_MS, FixedClock
from ledger.ingest import chunk_text, source_from_text
from ledger.query import parse
from ledger.service import Ledger
from ledger.text import QUERY_STOPWORDS

ENGINES = BOTH_ENGINES  # ranking rules on both engines; each engine's exactness against its own oracle


def ids(res) -> list[str]:
    return [m.id for m in res.hits]


FILLER = [f"note {i}: the {w} is stored in bucket {i}" for i, w in enumerate(
    "apple pear plum fig kiwi lime lemon mango melon grape peach cherry berry olive date guava papaya quince "
    "apricot banana orange tomato carrot pepper onion garlic ginger celery radish turnip".split())]


def _with_filler(led: Ledger) -> None:
    for t in FILLER:
        led.remember(t, cluster="reading", agent="filler")


# ---------------------------------------------------------------------------- ranking rules


def test_strong_bm25_match_beats_a_fuzzy_one(ledger):
    _with_filler(ledger)
    exact = ledger.remember("The deployment pipeline runs nightly", cluster="code", agent="a").memory
    fuzzy = ledger.remember("Depoyment pipline nitely", cluster="code", agent="a").memory  # no shared prefix
    ledger.review(fuzzy.id, "pin")  # even at 0.99 strength the fuzzy hit stays below
    res = ledger.search("deployment", mode="fuzzy")  # "depoyment" is one edit away: a neighbour
    assert ids(res)[:2] == [exact.id, fuzzy.id]
    assert res.hits[1].score < res.hits[0].score
    # hybrid widens only words no memory holds: "deployment" is matched as typed
    assert ids(ledger.search("deployment")) == [exact.id]
    assert ids(ledger.search("deploymnet"))[:1] == [exact.id]
    assert ledger.search("deployment", mode="keyword").hits[0].id == exact.id
    assert fuzzy.id not in ids(ledger.search("deployment", mode="keyword"))


@pytest.mark.sqlite_only  # the relevance gap here is BM25's (term frequency, length); PostgreSQL's: the next test
def test_relevance_dominates_and_strength_breaks_ties(ledger, clock):
    _with_filler(ledger)
    old_relevant = ledger.remember("Redis eviction policy is allkeys-lru on redis cluster redis", cluster="code", agent="a").memory
    twin_a = ledger.remember("Memcached runs beside redis", cluster="code", agent="a").memory
    # same tokens; another cluster, so not a duplicate (docs/store.md "Corroboration")
    twin_b = ledger.remember("Memcached runs beside redis.", cluster="proc", agent="a").memory
    clock.advance(days=800)
    fresh_weak = ledger.remember("Caching notes mention redis once among many other words about memcached varnish and squid", cluster="code", agent="a").memory
    ledger.recall("varnish squid", agent="a")  # makes fresh_weak stronger still
    assert ledger.get(fresh_weak.id).strength > ledger.get(old_relevant.id).strength + 0.3
    res = ledger.search("redis")
    order = ids(res)
    assert order.index(old_relevant.id) < order.index(fresh_weak.id)  # relevance dominates
    # identical text, identical relevance: the stronger one first (twin_a pinned), whatever its age
    ledger.review(twin_a.id, "pin")
    order = ids(ledger.search("memcached beside"))
    assert order.index(twin_a.id) < order.index(twin_b.id)
    ledger.bulk("unpin", [twin_a.id])
    ledger.recall("memcached beside", agent="z", limit=1)  # reads only the top one
    top = ids(ledger.search("memcached beside"))[0]
    other = twin_b.id if top == twin_a.id else twin_a.id
    assert ledger.get(top).strength > ledger.get(other).strength


def test_relevance_dominates_on_both_engines(ledger, clock):
    """Matching more of the query's terms outweighs a large strength gap on either
    engine's relevance (docs/search.md)."""
    _with_filler(ledger)
    both = ledger.remember("Redis eviction policy is allkeys-lru", cluster="code", agent="a").memory
    clock.advance(days=800)
    one = ledger.remember("Redis notes, among many other words about memcached varnish and squid", cluster="code", agent="a").memory
    ledger.recall("varnish squid", agent="a")
    assert ledger.get(one.id).strength > ledger.get(both.id).strength + 0.3
    order = ids(ledger.search("redis eviction"))
    assert order.index(both.id) < order.index(one.id)


def test_keyword_vs_hybrid_on_a_typo_and_a_prefix(ledger):
    _with_filler(ledger)
    m = ledger.remember("Kubernetes deployment needs the VPN", cluster="proc", agent="a").memory
    assert ledger.search("kuberntes", mode="keyword").total == 0
    assert ids(ledger.search("kuberntes")) == [m.id]
    assert ids(ledger.search("kuberntes", mode="fuzzy")) == [m.id]
    assert ids(ledger.search("kube")) == [m.id]  # prefix match outside keyword mode
    assert ledger.search("kube", mode="keyword").total == 0
    assert ids(ledger.search("kubernetes", mode="keyword")) == [m.id]


# A query word finds every memory holding a word that starts with it, whatever porter
# does to the ends of the two words (docs/search.md "Prefixes"). Word typed -> text.
PREFIX_CASES = [
    ("deploy", "Deployments go through the staging cluster first"),  # deploy -> deploi, deployments -> deploy
    ("key", "The keystore lives in /etc/ssl"),
    ("play", "Ansible playbooks run nightly"),
    ("pay", "Payments are processed by Stripe"),
    ("employ", "Employment contracts are in the HR drive"),
    ("happy", "Happiness survey results are due"),  # happy -> happi: covered by the stem already
    ("hopp", "Stop hopping between branches"),  # hopping -> hop: a doubled consonant undone
    ("runn", "The runner image is ubuntu-24.04"),
    ("stopp", "The job stopped after the OOM kill"),
    ("city", "Cities are stored as ISO codes"),
    ("deplo", "Deployments go through the staging cluster first"),
]


@pytest.mark.parametrize("typed,text", PREFIX_CASES)
def test_a_word_finds_the_words_that_start_with_it(ledger, typed, text):
    _with_filler(ledger)
    m = ledger.remember(text, cluster="proc", agent="a").memory
    assert ids(ledger.search(typed, limit=50))[0] == m.id, typed


def test_a_query_of_stopwords_alone_is_searched_as_typed(ledger):
    """Stopwords are kept when nothing else is left, but not as prefixes: `for when this`
    found "Never use git push --force" through `for*`."""
    force = ledger.remember("Never use git push --force on main", cluster="proc", agent="a").memory
    when = ledger.remember("Tell me when this is done, for the record", cluster="proc", agent="a").memory
    got = ids(ledger.search("for when this"))
    # PostgreSQL's english dictionary drops stop words from queries: nothing is asked for
    assert got == ([] if is_pg(ledger.path) else [when.id])
    assert ids(ledger.search("forc")) == [force.id]  # a word that is not a stopword is still a prefix


def test_a_word_the_vocabulary_starts_is_not_widened_to_neighbours(ledger):
    """`deployment` is not in the vocabulary but `deployments` is: the word is matched as
    typed (prefix), not widened to `employment` (one edit away)."""
    right = ledger.remember("Deployments go through the staging cluster first", cluster="proc", agent="a").memory
    ledger.remember("Employment contracts are in the HR drive", cluster="proc", agent="a")
    assert ids(ledger.search("deployment")) == [right.id]
    assert ids(ledger.search("deploymnets")) == [right.id]  # a typo no word starts with is still widened


@pytest.mark.sqlite_only  # the extra phrases come from vocab_fts, the SQLite vocabulary under porter
def test_prefix_extras_are_one_phrase_per_stem(ledger):
    from ledger.store import textindex

    for t in ["Stop hopping between branches", "we hopped on a call", "The hopper is full", "the keystore and keyboard",
              "Deployments and the deployer", "deploy now"]:
        ledger.remember(t, cluster="proc", agent="a")
    conn = ledger.store._conn
    extra = textindex.prefix_extras(conn, ["hopp", "key", "deploy", "cache"])
    assert extra["hopp"] == ['"hopped"']  # hopped and hopping share the stem hop: one phrase
    assert extra["key"] == ['"keyness"*'] and extra["deploy"] == ['"deployness"*']
    assert "cache" not in extra
    assert extra["hopp"] == prefix_extras_oracle(textindex_vocab(conn), "hopp")


@pytest.mark.sqlite_only
def test_m020_fills_vocab_fts_for_a_store_written_before_it(tmp_path, clock):
    """A store whose vocabulary predates vocab_fts gets every word in it on open, and
    its prefixes then find what they missed."""
    path = tmp_path / "old.db"
    with Ledger.open(path, clock=clock) as led:
        m = led.remember("Deployments go through the staging cluster first", cluster="proc", agent="a").memory
        led.remember("we deploy on fridays", cluster="proc", agent="a")
        cjk = led.remember("我们用Redis做缓存 for playbooks", cluster="proc", agent="a").memory
        seq = led.store._conn.execute("SELECT seq FROM memories WHERE id = ?", (cjk.id,)).fetchone()[0]
    conn = sqlite3.connect(path)
    with conn:  # as an older ledger left it: before m019 (CJK run not set apart) and m020
        conn.execute("DROP TABLE vocab_fts")
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
        conn.execute("INSERT INTO memories_fts (rowid, text, context) VALUES (?, ?, '')", (seq, "我们用Redis做缓存 for playbooks"))
        conn.execute("DELETE FROM _migrations WHERE name IN ('m019_cjk_apart', 'm020_vocab_stems')")
    conn.close()
    with Ledger.open(path, clock=clock) as led:  # m019 indexes the row again before vocab_fts exists
        c = led.store._conn
        assert c.execute("SELECT count(*) FROM vocab_fts").fetchone()[0] == c.execute("SELECT count(*) FROM vocab").fetchone()[0] > 5
        assert m.id in ids(led.search("deploy"))
        assert ids(led.search("redis")) == [cjk.id] and ids(led.search("play")) == [cjk.id]


def textindex_vocab(conn) -> set[str]:
    return {t for (t,) in conn.execute("SELECT term FROM vocab")}


def test_question_words_and_fts_syntax_are_harmless(ledger):
    _with_filler(ledger)
    m = ledger.remember("Kubernetes deployment needs the VPN", cluster="proc", agent="a").memory
    assert ids(ledger.search("what is the kubernetes vpn?"))[0] == m.id
    for q in ('"kubernetes', "kubernetes AND OR NOT (", "NEAR(kubernetes", "kube* ^vpn", "-", "'"):
        ledger.search(q)
        ledger.search(q, mode="keyword")
        ledger.search(q, mode="fuzzy")


def test_fuzzy_matches_whole_words_within_a_few_edits(ledger):
    m = ledger.remember("invoice terms are net-45", cluster="money", agent="a").memory
    other = ledger.remember("the invoicing run is monthly", cluster="money", agent="a").memory
    far = ledger.remember("the monthly report lists every payment", cluster="money", agent="a").memory
    # 1 edit from "invoice"; the neighbour goes through the word index, whose stemmer
    # makes invoice and invoicing one term
    assert set(ids(ledger.search("invoise", mode="fuzzy"))) == {m.id, other.id}
    assert ids(ledger.search("invoise", mode="keyword")) == []
    assert ids(ledger.search("paymnet")) == [far.id]  # a swap of adjacent letters (terms.swaps)
    assert ids(ledger.search("paymnxt")) == []  # 7 letters: 1 edit allowed; this is 2, and no swap
    assert ids(ledger.search("paymentss")) == [far.id]  # 9 letters: 2 edits allowed
    assert ids(ledger.search("terns")) == [m.id]  # 5 letters, 1 edit
    assert ledger.search("zzzz qqqq", mode="fuzzy").total == 0


def test_no_match_returns_empty(ledger):
    ledger.remember("alpha beta", cluster="prefs", agent="a")
    res = ledger.search("zebra")
    assert (res.hits, res.total) == ((), 0)


# ---------------------------------------------------------------------------- chunking via ingest

LONG_DOC = (
    "# Service handbook\n\nThis handbook covers the billing service.\n\n"
    "## Deploys\n\n" + " ".join(f"Step {i} checks the canary dashboard before continuing." for i in range(60)) + "\n\n"
    "## On-call\n\nPage the secondary if the primary does not answer in 10 minutes.\n\n"
    + "\n\n".join(f"Paragraph {i} about quarterly reporting and ledger reconciliation." for i in range(30))
)


def test_ingest_stores_exactly_the_chunks_in_order(ledger):
    expected = chunk_text(LONG_DOC)
    assert len(expected) >= 4
    res = ledger.ingest(source_from_text(LONG_DOC, "handbook.md"), cluster="proc", agent="a", trust=0.8)
    assert res.chunks == len(expected)
    stored = sorted(ledger.search("kind:chunk", limit=100).hits, key=lambda m: m.chunk_index)
    assert [m.text for m in stored] == expected
    assert [m.chunk_index for m in stored] == list(range(1, len(expected) + 1))
    assert any(m.text.startswith("## On-call") for m in stored)
    assert all(len(m.text) <= 1600 for m in stored)
    # the over-long paragraph was split at sentences
    assert all(m.text.endswith(".") for m in stored if "canary" in m.text)
    on_call = next(m for m in stored if m.text.startswith("## On-call"))
    assert ids(ledger.search("secondary primary"))[0] == on_call.id
    detail = ledger.source_detail(res.source_id)
    assert [m.chunk_index for m in detail["chunks"]] == [1, 2, 3, 4]


# ---------------------------------------------------------------------------- strength: filter


def test_strength_filter_compares_the_integer_shown(ledger, clock, engine):
    """``strength:<N``/``strength:>N`` compare the 0-100 integer people see. The user's
    case: claims remembered a moment ago are at 0.17 + 0.34 x fresh, a hair under 0.51,
    shown as 51; ``strength:<51`` returned them and ``strength:>50`` too. Chunks carry
    their source's trust exactly, so halves show the rounding (0.625 is 62.5: shown 63,
    half up like the web UI, where Python's round() would say 62)."""
    from ledger.cli.render import pct
    from ledger.termfmt import pct as tpct

    claims = [ledger.remember(f"claim {w} about ports", cluster="code", agent="a").memory.id
              for w in ("one", "two", "three")]
    clock.advance(ms=90_000)
    by_trust = {}
    for trust in (0.5, 0.505, 0.51, 0.515, 0.625, 0.6251, 0.635):
        res = ledger.ingest_chunks(f"doc-{trust}.md", [f"chunk at trust {trust}"], cluster="proc", agent="a", trust=trust)
        by_trust[trust] = ledger.source_detail(res.source_id)["chunks"][0].id
    shown = {m.id: pct(m.strength) for m in ledger.search("", limit=100).hits}
    assert {shown[c] for c in claims} == {51} and all(ledger.get(c).strength < 0.51 for c in claims)
    assert [shown[by_trust[t]] for t in (0.5, 0.505, 0.51, 0.515, 0.625, 0.6251, 0.635)] == [50, 51, 51, 52, 63, 63, 64]
    assert all(tpct(ledger.get(m).strength) == v for m, v in shown.items())  # the TUI's and the CLI's agree

    def found(query):
        return set(ids(ledger.search(query, limit=100)))

    assert found("strength:<51") == {by_trust[0.5]}
    assert found("strength:>50") == set(claims) | {by_trust[t] for t in (0.505, 0.51, 0.515, 0.625, 0.6251, 0.635)}
    assert found("strength:>51") == {by_trust[t] for t in (0.515, 0.625, 0.6251, 0.635)}
    assert found("strength:<52") == set(claims) | {by_trust[t] for t in (0.5, 0.505, 0.51)}
    assert found("strength:<63") == set(shown) - {by_trust[t] for t in (0.625, 0.6251, 0.635)}
    assert found("strength:>62") == {by_trust[t] for t in (0.625, 0.6251, 0.635)}
    assert found("ports strength:<51") == set() and found("ports strength:>50") == set(claims)
    assert found("strength:>100") == set() and found("strength:<0") == set()
    for n in range(45, 70):  # every threshold: exactly the memories whose shown value passes
        assert found(f"strength:<{n}") == {m for m, v in shown.items() if v < n}, n
        assert found(f"strength:>{n}") == {m for m, v in shown.items() if v > n}, n
        _check(ledger, clock, f"strength:<{n}", "hybrid", limit=100, oracle=brute_force_pg if engine == "postgresql" else None)


# ---------------------------------------------------------------------------- exactness

WORDS = (
    "deploy deployment deploys cache caching redis kafka broker cluster node nodes shard replica billing invoice "
    "payment refund customer tenant schema migration index query latency timeout retry backoff queue worker "
    "cron schedule friday monday release branch tag rollback canary metric alert pager oncall runbook vpn "
    "gateway token secret rotate certificate expiry renew zürich café naïve "
    "c++ node.js --force -v @scope/pkg 3.11 utf-8 我们使用連接池 ｐｙｔｈｏｎ python 東京に行きます "
    # Latin words, numbers and compounds against CJK text (written without spaces)
    "我们用Redis做缓存 設定ファイルはconfig.yamlにあります サーバーはpython3.11で動きます node.js版本20来构建 "
    "데이터베이스는PostgreSQL입니다 ｋａｆｋａの設定 時々deployする"
    # versions glued to words (docs/search.md "Terms"), and names that stay whole
    " python3.11 node18 es2015 v2.4.1 Python3 s3 h264 on1 10ms"
).split()
TYPO = ["deploymnt", "cachng", "kafak", "brokr", "invoce", "timout", "rollbak", "certifcate"]
AGENTS = ["alice", "bob", "carol", "dave", "erin"]
CLUSTERS = ["code", "proc", "money", "projects", "home"]
N_CLAIMS = 2600
N_SOURCES = 8


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A store of ~3,000 memories with varied age, hits, readers, pins, archives, drops,
    chunks of sources with different trust; returns (ledger, clock, drop_instant)."""
    yield from _big_store(tmp_path_factory.mktemp("big") / "big.db")


@pytest.fixture(scope="module")
def big_pg(pg_server):
    """:func:`big` on PostgreSQL (its own schema, dropped afterwards)."""
    import psycopg

    schema = "big_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg_server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    try:
        yield from _big_store(pg_schema_url(pg_server, schema))
    finally:
        with psycopg.connect(pg_server, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


def _random_text(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 12)))


def _big_store(target):
    rnd = random.Random(20260115)
    clock = FixedClock(T0 - 900 * DAY_MS)
    led = Ledger.open(target, clock=clock)
    st = led.store
    claim_ids = []
    with st.atomic():
        for i in range(N_CLAIMS):
            n = rnd.randint(3, 12)
            words = [rnd.choice(WORDS) for _ in range(n)]
            if rnd.random() < 0.1:
                words[rnd.randrange(n)] = rnd.choice(TYPO)
            if rnd.random() < 0.6:  # a word most memories hold: what the top-k bound leaves unscored
                words.insert(rnd.randrange(n), "service")
            text = " ".join(words)
            if rnd.random() < 0.05:
                text = text.title()
            claim_ids.append(st.insert_claim(text, rnd.choice(CLUSTERS), rnd.choice(AGENTS), clock()))
            clock.advance(ms=rnd.randint(0, 6 * 3_600_000))
        for s in range(N_SOURCES):
            chunks = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 30))) for _ in range(rnd.randint(20, 80))]
            st.insert_source(f"doc{s}.md", "md", rnd.choice(CLUSTERS), rnd.choice(AGENTS), 1000, rnd.choice([0.05, 0.3, 0.5, 0.75, 0.9, 1.0]),
                             chunks, clock())
            clock.advance(days=rnd.randint(1, 20))
        # counted reads spread over time, by several agents
        for _ in range(400):
            clock.advance(ms=rnd.randint(0, 2 * DAY_MS))
            st.count_read(rnd.sample(claim_ids, rnd.randint(1, 25)), rnd.choice(AGENTS + ["zed", "yan"]), clock())
        for mid in rnd.sample(claim_ids, 300):  # a few heavily used ones
            for _ in range(rnd.randint(1, 40)):
                st.count_read([mid], rnd.choice(AGENTS), clock())
        for mid in rnd.sample(claim_ids, 60):
            st.set_flags(mid, clock(), pinned=True)
        for mid in rnd.sample(claim_ids, 80):
            st.set_flags(mid, clock(), archived=True)
        for mid in rnd.sample(claim_ids, 30):  # edited before the asof instant: their new text is the text then
            st.update_text(mid, _random_text(rnd), "bob", clock())
    clock.advance(days=30)
    drop_instant = clock()
    clock.advance(days=1)
    with st.atomic():
        for mid in rnd.sample(claim_ids, 150):
            st.soft_delete(mid, "test drop", "alice", clock())
    # edited after the asof instant: asof: matches and scores the text replaced first
    # after it (a quarter are edited twice), against the indexes of current texts
    with st.atomic():
        for n, mid in enumerate(rnd.sample(claim_ids, 160)):
            st.update_text(mid, _random_text(rnd), "carol", clock())
            clock.advance(ms=60_000)
            if n % 4 == 0:
                st.update_text(mid, _random_text(rnd), "carol", clock())
    clock.advance(days=45)
    yield led, clock, drop_instant - DAY_MS
    led.close()


# docs/search.md "Terms": CJK is Han, Hiragana, Katakana, Hangul (syllables and jamo) and
# the ideographic marks 々 〆 〇 〻; the word index sees each CJK run set apart from the
# text around it, as if written with spaces. The oracles' own statement of it (a regex,
# not ledger.terms' loop; the test texts hold no combining marks).
_CJK = ("\u1100-\u11ff\u3005-\u3007\u303b\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
        "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U000323af")
_CJK_EDGE = re.compile(rf"(?<=[{_CJK}])(?=[^{_CJK}\s])|(?<=[^{_CJK}\s])(?=[{_CJK}])")


def oracle_spaced(text: str) -> str:
    """NFKC, a space at every edge between a CJK character and another non-space
    character: the text compounds (the side index) are read from."""
    return _CJK_EDGE.sub(" ", unicodedata.normalize("NFKC", text))


def _version_apart(m) -> str:
    # docs/search.md "Terms": a word of 2+ letters (or v) then ASCII digits is the two
    # words, unless the letters are a stop word (the oracles' own statement of it: each
    # word checked by string methods, not ledger.terms' pattern).
    w = m.group(0)
    head = w.rstrip("0123456789")
    if head != w and head.isalpha() and (len(head) >= 2 or head in ("v", "V")) and head.lower() not in T._STOP_HEADS:
        return head + " " + w[len(head):]
    return w


def oracle_words(text: str) -> str:
    """A memory's text as the word index must see it: :func:`oracle_spaced`, then a
    space between the letters and the number of each word like python3 or v2."""
    return re.sub(r"[^\W_]+", _version_apart, oracle_spaced(text))


def _oracle_index(conn, rows):
    """The oracle's own FTS5 tables, built from every memory's text (not the store's
    index rows; only a chunk's neighbour context is read from there): ``w(text,
    context)`` and ``s(terms)`` (the side terms of the spaced text, rows that have any)."""
    ctx = dict(conn.execute("SELECT rowid, context FROM memories_fts"))
    o = sqlite3.connect(":memory:")
    o.execute("CREATE VIRTUAL TABLE w USING fts5 (text, context, tokenize = 'porter unicode61')")
    o.execute("CREATE VIRTUAL TABLE s USING fts5 (terms, tokenize = 'porter unicode61')")
    o.executemany("INSERT INTO w (rowid, text, context) VALUES (?, ?, ?)",
                  [(r[0], oracle_words(r[2]), oracle_words(ctx.get(r[0], ""))) for r in rows])
    side = [(r[0], T.side_text(oracle_spaced(r[2]))) for r in rows]
    o.executemany("INSERT INTO s (rowid, terms) VALUES (?, ?)", [x for x in side if x[1]])
    return o


def porter_stems(words) -> dict[str, str]:
    """The stem FTS5's porter tokenizer gives each of ``words`` (lowercase letters), read
    back from a scratch index of one word per row."""
    words = sorted(set(words))
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE w USING fts5 (x, tokenize = 'porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE wv USING fts5vocab (w, instance)")
    db.executemany("INSERT INTO w (rowid, x) VALUES (?, ?)", list(enumerate(words, 1)))
    out = {words[doc - 1]: term for term, doc in db.execute("SELECT term, doc FROM wv")}
    db.close()
    return out


def one_swap_oracle(a: str, b: str) -> bool:
    """docs/search.md "Fuzzy neighbours", written out: ``b`` is ``a`` with two adjacent,
    different letters swapped."""
    diff = [i for i in range(len(a)) if len(a) == len(b) and a[i] != b[i]]
    return len(a) == len(b) and len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
        and a[diff[1]] == b[diff[0]]


def cjk_phrases_oracle(run: str) -> list[list[str]]:
    """docs/search.md "CJK", written out: a query run is the phrase of its character
    pairs; a run of 3 or more characters is also each distinct pair alone (the first 64)."""
    pairs = [run[i:i + 2] for i in range(len(run) - 1)] or [run]
    if len(run) < 3:
        return [pairs]
    alone: list[str] = []
    for p in pairs:
        if p not in alone:
            alone.append(p)
    return [pairs] + [[p] for p in alone[:64]]


_CJK_CHAR = re.compile(f"[{_CJK}]")


def prefix_phrases_oracle(terms, mode: str) -> set[str]:
    """docs/search.md "Terms", written out from the pieces as typed (not through
    ledger.terms): the phrases whose last word is a prefix. A piece of two or more
    words ending in ``*`` (``3.1*``, ``node.js*``, ``python3*``), in every mode; outside
    keyword mode, a piece of 3+ letters and digits only that is two words once its
    version is set apart (``python3``, not ``v2``, not ``3.11``). Its phrase is its
    words as the oracle's own word index reads them (:func:`oracle_words`)."""
    out = set()
    for raw in terms:
        piece = unicodedata.normalize("NFKC", raw).lower().strip("()\"',;!?")
        body = piece.rstrip("*").rstrip(".:")
        if _CJK_CHAR.search(body):
            continue  # CJK runs are the side index's
        words = re.findall(r"[^\W_]+", oracle_words(body))
        if piece.endswith("*") and len(words) >= 2:
            out.add(" ".join(words))
        elif mode != "keyword" and body.isalnum() and len(body) >= 3 and len(words) == 2:
            out.add(" ".join(words))
    return out


def prefix_extras_oracle(vocab, w: str) -> list[str]:
    """docs/search.md "Prefixes", from the stems themselves: the vocabulary words that
    start with ``w`` whose stem does not start with the stem of ``w`` (FTS5's prefix
    phrase ``"w"*`` misses them); then ``"w" + "ness"*`` if every such stem starts with
    the stem of ``w + "ness"``, else one exact phrase per stem, its alphabetically first
    word, at most 16."""
    starts = sorted(v for v in vocab if v.startswith(w) and v != w)
    stems = porter_stems([*starts, w, w + "ness"])
    missed = [v for v in starts if not stems[v].startswith(stems[w])]
    if not missed:
        return []
    if all(stems[v].startswith(stems[w + "ness"]) for v in missed):
        return ['"' + w + 'ness"*']
    out: dict[str, str] = {}
    for v in missed:
        out.setdefault(stems[v], '"' + v + '"')
    return list(out.values())[:16]


def brute_force(led: Ledger, query: str, mode: str, now: int) -> list[tuple[float, int, str]]:
    """Every matching row as (score, seq, id), computed in Python from the raw rows."""
    q = parse(query, now)
    conn = sqlite3.connect(led.path)
    try:
        rows = conn.execute(
            """SELECT m.seq, m.id, m.text, m.kind, m.origin, m.cluster_id, m.pinned, m.archived, m.deleted_at,
                      m.created_at, m.hits, m.last_read_at, m.source_count, s.trust
               FROM memories m LEFT JOIN sources s ON s.id = m.source_id"""
        ).fetchall()
        readers: dict[str, set[str]] = {}
        for mid, agent in conn.execute("SELECT memory_id, agent_id FROM memory_readers"):
            readers.setdefault(mid, set()).add(agent)
        history = conn.execute("SELECT memory_id, text, replaced_at FROM memory_text_history ORDER BY replaced_at, rowid").fetchall()
        rel: dict[int, float] = {}
        if q.terms:
            vocab = set()
            for text in [r[2] for r in rows] + [h[1] for h in history]:  # words are never removed from it
                vocab |= T.vocabulary_words(oracle_words(text))
            oi = _oracle_index(conn, rows)
            qt = T.split_query(q.terms, QUERY_STOPWORDS)
            quote = lambda x: '"' + x + '"'  # noqa: E731 - no quotes occur in these queries
            exact = []
            pre = mode != "keyword" and not all(w in QUERY_STOPWORDS for w in qt.words)  # stopwords alone: as typed
            for w in qt.words:
                # A word typed with a trailing * (2+ characters) is a prefix in every mode.
                as_prefix = (pre and len(w) >= 3) or (w in qt.starred and len(w) >= 2)
                exact.append(quote(w) + ("*" if as_prefix else ""))
                if as_prefix:
                    exact += prefix_extras_oracle(vocab, w)
            starts = prefix_phrases_oracle(q.terms, mode)
            for ph in qt.phrases:  # a phrase ending in a prefix gets its last word's extras, behind the others
                exact.append(quote(ph) + ("*" if ph in starts else ""))
                if ph in starts:
                    lead, last = ph.rsplit(" ", 1)
                    exact += ['"' + lead + " " + e[1:] for e in prefix_extras_oracle(vocab, last)]
            fuzzy = []
            if mode != "keyword":
                for w in qt.words:
                    k = 0 if len(w) < 4 else 1 if len(w) < 8 else 2
                    if not (w.isalpha() and 3 <= len(w) <= 40) or (mode == "hybrid" and any(v.startswith(w) for v in vocab)):
                        continue
                    fuzzy += [quote(v) for v in sorted(vocab) if v != w and v not in qt.words and quote(v) not in fuzzy
                              and (T.edit_distance(w, v, k) <= k or (k and one_swap_oracle(w, v)))]
            side = [quote(T.encode_compound(c)) for c in qt.compounds] + [quote(" ".join(ph)) for r in qt.cjk
                                                                               for ph in cjk_phrases_oracle(r)]
            side += [quote(" ".join(T.encode_symbol(c) for c in r)) for r in qt.symbols]
            p: dict[int, float] = {}
            for parts, table, w in ((exact, "w", ", 1.0, 0.3"), (side, "s", "")):
                if parts:
                    for seq, bm in oi.execute(f"SELECT rowid, bm25({table}{w}) FROM {table} WHERE {table} MATCH ?", (" OR ".join(parts),)):
                        p[seq] = p.get(seq, 0.0) + max(0.0, -bm)
            rel = {seq: v / (v + 1) for seq, v in p.items()}
            if fuzzy:  # rows matched only through neighbours: 0.6 x their own relevance
                for seq, bm in oi.execute("SELECT rowid, bm25(w, 1.0, 0.3) FROM w WHERE w MATCH ?", (" OR ".join(fuzzy),)):
                    v = max(0.0, -bm)
                    rel.setdefault(seq, 0.6 * v / (v + 1))
            if q.asof_ms is not None:
                for seq, text in texts_then(rows, history, q.asof_ms).items():
                    rel.pop(seq, None)
                    r = relevance_then(oi, text, exact, fuzzy, side)
                    if r is not None:
                        rel[seq] = r
    finally:
        conn.close()
    return _filter_and_rank(q, rows, rel, readers, now)


def texts_then(rows, history, asof: int) -> dict[int, str]:
    """{seq: the text a memory had at ``asof``} of the memories whose text changed after
    it: the earliest text replaced after ``asof`` (``history`` is (memory id, text,
    replaced at), oldest first)."""
    seq_of = {r[1]: r[0] for r in rows}
    out: dict[int, str] = {}
    for mid, text, at in history:
        if at > asof:
            out.setdefault(seq_of[mid], text)
    return out


def _oracle_bm25(freqs, dl, n_rows, holding, avgdl) -> float:
    """docs/search.md "Top-k", written out: sum over phrases of idf_i * f_i * (k1 + 1) /
    (f_i + k1 * (1 - b + b * D / avgdl)), idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)) or
    1e-6 when not positive, k1 = 1.2, b = 0.75."""
    total = 0.0
    for f, n in zip(freqs, holding):
        idf = math.log((n_rows - n + 0.5) / (n + 0.5))
        total += (idf if idf > 0 else 1e-6) * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / avgdl))
    return total


def _one_row_counts(text: str, phrases) -> tuple[list[int], int]:
    """(instances of each phrase, tokens) of ``text`` under the word index's tokenizer,
    from FTS5 itself: in an index of that one row every phrase has idf 1e-6 and D is
    avgdl, so bm25 of phrase i alone is -1e-6 * 2.2 f / (f + 1.2), which gives f."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5 (x, tokenize = 'porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE dv USING fts5vocab (d, instance)")
    db.execute("INSERT INTO d (rowid, x) VALUES (1, ?)", (text,))
    freqs = []
    for ph in phrases:
        got = db.execute("SELECT bm25(d) FROM d WHERE d MATCH ?", (ph,)).fetchone()
        t = -got[0] / 1e-6 if got else 0.0
        freqs.append(round(1.2 * t / (2.2 - t)))
    dl = db.execute("SELECT count(*) FROM dv").fetchone()[0]
    db.close()
    return freqs, dl


def relevance_then(oi, text: str, exact, fuzzy, side) -> float | None:
    """docs/search.md "asof": the relevance of a text a memory had then, as its row of
    the oracle's word index ``w`` and side index ``s`` of current texts would have it
    (N, n_i and avgdl of those indexes as they are, f_i and D of that text, no context);
    None when it does not match."""
    def stats(table):
        n_rows = oi.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        oi.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}_inst USING fts5vocab ({table}, instance)")
        tokens = oi.execute(f"SELECT count(*) FROM {table}_inst").fetchone()[0]
        return n_rows, tokens / n_rows if n_rows else 0.0

    def p(doc, phrases, table):
        freqs, dl = _one_row_counts(doc, phrases)
        holding = [oi.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (ph,)).fetchone()[0] for ph in phrases]
        n_rows, avgdl = stats(table)
        return any(freqs), _oracle_bm25(freqs, dl, n_rows, holding, avgdl)

    words, sides = oracle_words(text), T.side_text(oracle_spaced(text))
    hit_e, pe = p(words, exact, "w") if exact else (False, 0.0)
    hit_s, ps = p(sides, side, "s") if side else (False, 0.0)
    if hit_e or hit_s:
        return (pe + ps) / (pe + ps + 1)
    if fuzzy:
        hit_f, pf = p(words, fuzzy, "w")
        if hit_f:
            return 0.6 * pf / (pf + 1)
    return None


def _filter_and_rank(q, rows, rel: dict, readers: dict, now: int) -> list[tuple[float, int, str]]:
    """The oracles' shared tail: every filter of ``q`` applied row by row, then the
    score 0.75 x relevance + 0.25 x strength (strength alone without terms), best first.
    ``rows`` are (seq, id, text, kind, origin, cluster, pinned, archived, deleted,
    created, hits, last_read, sources, trust); ``rel`` maps seq -> relevance 0-1."""
    out = []
    for seq, mid, text, kind, origin, cluster, pinned, archived, deleted, created, hits, last_read, sources, trust in rows:
        if q.asof_ms is not None:
            if not (created <= q.asof_ms and (deleted is None or deleted > q.asof_ms)):
                continue
        elif deleted is not None:
            continue
        if archived:
            continue
        if q.clusters and cluster not in q.clusters:
            continue
        if q.types and origin not in q.types:
            continue
        if q.kinds and kind not in q.kinds:
            continue
        if q.agents and not (readers.get(mid, set()) & set(q.agents)):
            continue
        if q.before_ms is not None and not created < q.before_ms:
            continue
        if q.after_ms is not None and not created > q.after_ms:
            continue
        if q.terms and seq not in rel:
            continue
        st_, _ = S.strength(kind=kind, pinned=bool(pinned), hits=hits, last_read_at=last_read, source_count=sources,
                            reader_count=len(readers.get(mid, ())), trust=trust, now=now)
        if q.strength is not None:  # the shown 0-100 integer against N (docs/search.md "Filters")
            shown, n = S.shown(st_), round(q.strength * 100)
            if not (shown < n if q.strength_op == "<" else shown > n):
                continue
        score = 0.75 * rel[seq] + 0.25 * st_ if q.terms else st_
        out.append((score, seq, mid))
    out.sort(key=lambda t: (-round(t[0], 12), -t[1]))
    return out


def _check(led, clock, query, mode, limit=10, offset=0, oracle=None):
    expected = (oracle or brute_force)(led, query, mode, clock())
    res = led.search(query, mode=mode, limit=limit, offset=offset)
    assert res.total == len(expected), (query, mode)
    want = expected[offset : offset + limit]
    assert ids(res) == [e[2] for e in want], (query, mode)
    has_terms = bool(parse(query, clock()).terms)
    for m, (score, _, _) in zip(res.hits, want):
        got = m.score if has_terms else m.strength
        assert got == pytest.approx(score, abs=1e-9), (query, mode, m.id)
    return expected


QUERIES = [
    "deploy",
    "pay deplo",
    "what is the",
    "c++ kafka",
    "node.js --force",
    "連接 cache",
    "python 3.11",
    "@scope/pkg -v",
    "東京",
    "redis cache",
    "kafka broker timeout",
    "invoice",
    "deploymnt",
    "zürich café",
    "certifcate expiry",
    "rollback canary release",
    "deploy strength:>45",
    "cache strength:<30",
    "broker cluster:code cluster:proc",
    "invoice agent:zed",
    "queue worker kind:chunk",
    "billing type:chat",
    "gateway vpn after:200d",
    "token before:400d",
    "我们用Redis",
    "config.yaml 設定",
    "python3.11",
    "postgresql 20",
    "版本 時々",
    # Terms as people type them: a trailing * is "starts with" (in keyword mode too),
    # punctuation left at a word's ends still searches the word.
    "3.11",
    "node 18",
    "2015 es2015",
    "2.4.1 v2.4",
    "python3 s3",
    "deploy*",
    "depl* kafka",
    "ca*",
    "-deploy cache-",
    "--force*",
    "(invoice), \"broker\".",
    # A starred compound is its phrase with the last word a prefix; a version typed glued
    # to its word keeps the word's prefix outside keyword mode; a star after one letter
    # is the word; a CJK run of three is the whole run and each pair.
    "3.1*",
    "v2.4* node.js*",
    "@scope/pk*",
    "python3",
    "node1 es201 v2",
    "d* kafka",
    "用連接 接池大",
    "京に来",
]


#: Queries asked asof an instant before 160 memories of the big store were edited.
ASOF_QUERIES = [("kafka broker timeout", "hybrid"), ("c++ kafka", "keyword"), ("連接 cache", "hybrid"),
                ("deploymnt", "hybrid"), ("invoice", "fuzzy"), ("node.js --force", "hybrid"), ("depl* kafka", "keyword")]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "fuzzy"])
def test_search_is_exact_over_every_row(big, mode):
    led, clock, _ = big
    n_nonempty = 0
    for q in QUERIES:
        expected = _check(led, clock, q, mode)
        n_nonempty += bool(expected)
    assert n_nonempty >= len(QUERIES) - 3  # the queries really exercise the ranking


def test_filter_only_queries_are_exact(big):
    led, clock, _ = big
    assert len(_check(led, clock, "", "hybrid", limit=25)) > 2500
    _check(led, clock, "strength:>60", "hybrid", limit=25)
    _check(led, clock, "strength:<20 cluster:money", "hybrid", limit=25)
    _check(led, clock, "agent:yan kind:claim", "hybrid", limit=25)


def test_deep_pages_and_asof_are_exact(big):
    led, clock, drop_instant = big
    exp = _check(led, clock, "deploy cache", "hybrid", limit=50, offset=200)
    assert len(exp) > 250
    _check(led, clock, "deploy cache", "hybrid", limit=50, offset=len(exp) - 20)
    # before the drops: dropped rows are found again, text search included
    before = _check(led, clock, f"deploy asof:{iso(drop_instant)}", "hybrid", limit=30)
    now_ = brute_force(led, "deploy", "hybrid", clock())
    assert {e[2] for e in before} - {e[2] for e in now_}, "asof should bring back dropped rows"
    _check(led, clock, f"redis asof:{iso(drop_instant)}", "fuzzy", limit=30)
    _check(led, clock, "asof:400d", "hybrid", limit=30)
    # texts edited since: each matched and scored as its text then (docs/search.md "asof")
    for query, mode in ASOF_QUERIES:
        _check(led, clock, f"{query} asof:{iso(drop_instant)}", mode, limit=30)


@pytest.mark.sqlite_only  # PostgreSQL always joins (docs/search.md "Counting")
def test_total_from_the_index_less_hidden_memories_equals_the_join(big):
    """Without filters the total is the matches less the dropped, pending and archived
    memories among them (partial index ``memories_hidden``), with no memory row read
    per match; with few matches, many hidden rows or any filter, every match is joined
    to its memory. Both ways give the oracle's total, on the full and bounded paths."""
    led, clock, _ = big
    conn = led.store._conn
    hidden = conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL OR archived <> 0").fetchone()[0]
    assert hidden >= 200  # the store's drops and archives
    plan = " ".join(r[-1] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT count(*) FROM memories INDEXED BY memories_hidden WHERE (deleted_at IS NOT NULL OR archived <> 0)"))
    assert "memories_hidden" in plan
    seen = set()
    for q, want in [("deploy cache", "index"), ("service kafka", "index"), ("東京", "join"), ("zürich", "index"), ("kafka cluster:code", "join"),
                    ("deploy strength:>45", "join"), ("deploymnt", None), ("service", "index")]:
        for mode in ("hybrid", "keyword"):
            expected = _check(led, clock, q, mode)
            if want:
                assert led.store.search_count == want, (q, mode, len(expected))
            seen.add((led.store.search_path, led.store.search_count))
    assert {("full", "index"), ("bounded", "index"), ("full", "join")} <= seen, seen


@pytest.mark.sqlite_only  # reads the SQLite file (the oracle) and PENDING rows
def test_total_leaves_out_pending_archived_and_dropped_matches(ledger, clock):
    """The count from the index subtracts every kind of hidden match: chunks of an
    unfinished ingest (``deleted_at = PENDING``), archived and dropped memories, and it
    falls back to the join when most matches are hidden; both equal the oracle."""
    from ledger.store.sources import PENDING

    mids = [ledger.remember(f"alpha fact number {i} about {w}", cluster="code", agent="a").memory.id
            for i, w in enumerate(["ports", "queues", "tokens", "caches", "hosts", "disks"] * 6)]
    conn = ledger.store._conn
    with ledger.store.atomic():
        conn.execute("UPDATE memories SET deleted_at = ? WHERE id IN (?, ?, ?)", (PENDING, *mids[:3]))
        for mid in mids[3:5]:
            ledger.store.set_flags(mid, clock(), archived=True)
        for mid in mids[5:7]:
            ledger.store.soft_delete(mid, "test drop", "a", clock())
    res = _check(ledger, clock, "alpha", "hybrid")
    assert len(res) == 36 - 7 and ledger.store.search_count == "index"
    _check(ledger, clock, "alpha ports", "hybrid", limit=5)
    with ledger.store.atomic():  # most matches hidden: the join is cheaper
        for mid in mids[7:30]:
            ledger.store.set_flags(mid, clock(), archived=True)
    res = _check(ledger, clock, "alpha", "hybrid")
    assert len(res) == 6 and ledger.store.search_count == "join"


# ---------------------------------------------------------------------------- top-k bound

BOUND_QUERIES = [
    "service kafka",  # the example: a word most memories hold, beside a rarer one
    "kafka service broker",
    "service invoice refund",
    "services deploymnt",  # a typo beside the common word: fuzzy rows are kept
    "service canary strength:>45",
    "service redis cluster:code",
]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "fuzzy"])
def test_top_k_bound_leaves_common_phrases_unscored_and_stays_exact(big, mode):
    """docs/search.md "Top-k": rows holding only a phrase most memories hold are not
    scored when a bound proves they cannot reach the page; page, scores and total still
    equal the oracle's, and the bounded path really runs."""
    led, clock, _ = big
    paths = []
    for q in BOUND_QUERIES:
        _check(led, clock, q, mode)
        paths.append(led.store.search_path)
    _check(led, clock, "service kafka", mode, limit=10, offset=25)
    paths.append(led.store.search_path)
    assert paths.count("bounded") >= 3, paths
    # one phrase, or a compound: always the full path
    _check(led, clock, "service", mode)
    assert led.store.search_path == "full"
    _check(led, clock, "service node.js", mode)
    assert led.store.search_path == "full"


PROBE_QUERIES = [
    ("deploy cache", 10, 0),
    ("deploy cache", 7, 30),  # deeper than the probe: the page is ranked among probe and rest
    ("service kafka", 10, 0),
    ("redis", 5, 3),
    ("deploy strength:>45", 10, 0),  # filters drop probe rows
    ("cache cluster:money", 10, 0),
    ("kafka broker timeout", 3, 0),
    ("deploymnt", 10, 0),
    ("zürich café", 10, 0),  # few matches: the probe holds every one
]


@pytest.mark.parametrize("probe_rows", [1, 3, 17])
def test_relevance_page_is_exact_whatever_the_probe_size(big, big_pg, probe_rows, monkeypatch):
    """``SearchMixin._bounded_page`` scores the probe's rows once and ranks the page
    among them and the rows after them above the floor: with probes from one row to a
    few (ties in r at the probe's end, filters that drop probe rows, offsets past the
    probe, fewer matches than the probe), page, scores and total equal the oracle's, on
    both engines."""
    from ledger.store import search

    monkeypatch.setattr(search, "_PROBE_ROWS", probe_rows)
    for (led, clock, _), oracle in ((big, brute_force), (big_pg, brute_force_pg)):
        for q, limit, offset in PROBE_QUERIES:
            for mode in ("hybrid", "keyword"):
                _check(led, clock, q, mode, limit=limit, offset=offset, oracle=oracle)


def test_phrase_bounds_exceed_every_rows_share(big):
    """The bound of each phrase is above what it adds to -bm25 of every row holding it
    (its own bm25 when asked alone), common and rare phrases alike."""
    from ledger.store import textindex

    led, _, _ = big
    conn = led.store._conn
    phrases = ['"service"*', '"kafka"*', '"invoice"*', '"node js"', '"zürich"']
    for ph, n, bound in textindex.phrase_bounds(conn, phrases):
        shares = [-r[0] for r in conn.execute("SELECT bm25(memories_fts, 1.0, 0.3) FROM memories_fts WHERE memories_fts MATCH ?", (ph,))]
        assert len(shares) == n > 0, ph
        assert max(shares) < bound, (ph, max(shares), bound)
        assert max(shares) > bound / 8, (ph, max(shares), bound)  # and not absurdly loose


# ---------------------------------------------------------------------------- symbols (issue 14)

SYMBOL_TEXTS = {
    "fire": "deploy is 🔥 broken since the release",  # the example
    "check": "integration tests ✅ on main after the fix",
    "thumb": "LGTM 👍🏽 from the reviewer on the deploy change",  # skin tone: found by the bare 👍
    "arrow": "latency moved → p99 ≥ 200ms after the deploy",
    "euro": "the hosting bill is 40 € a month",
    "flag": "the 🇫🇷 team owns the deploy calendar",
    "plain": "deploy is broken since the release",  # the same words, no symbol
}


def _symbol_store(led: Ledger) -> dict[str, str]:
    _with_filler(led)
    return {k: led.remember(t, cluster="code", agent="a").memory.id for k, t in SYMBOL_TEXTS.items()}


@pytest.mark.parametrize("query, key", [
    ("🔥", "fire"), ("✅", "check"), ("👍", "thumb"), ("👍🏽", "thumb"), ("→", "arrow"), ("≥", "arrow"),
    ("€", "euro"), ("🇫🇷", "flag"), ("deploy 🔥", "fire"), ("✅️", "check"),  # with a variation selector
])
def test_symbols_the_word_tokenizer_drops_are_searchable(ledger, query, key):
    """unicode61 treats emoji and other symbols as separators; the side index keeps
    them (docs/search.md "Terms"). Each symbol finds its memory first, in every mode."""
    mids = _symbol_store(ledger)
    for mode in ("hybrid", "keyword", "fuzzy"):
        res = ledger.search(query, mode=mode)
        assert ids(res)[:1] == [mids[key]], (query, mode, [m.text for m in res.hits])
    if query in ("🔥", "€", "→"):  # a symbol alone matches nothing else
        assert ledger.search(query).total == 1


def test_symbols_in_stores_written_before_they_were_indexed(db_file, clock):
    """Migration m011_symbols writes the side index again for memories holding symbols."""
    led = Ledger.open(db_file, clock=clock)
    mids = _symbol_store(led)
    conn = led.store._conn
    with led.store.atomic():  # as a store indexed before symbols were
        for mid in mids.values():
            seq = conn.execute("SELECT seq FROM memories WHERE id = ?", (mid,)).fetchone()[0]
            conn.execute("DELETE FROM memories_side WHERE rowid = ?", (seq,))
        conn.execute("DELETE FROM _migrations WHERE name = 'm011_symbols'")
    assert led.search("🔥").total == 0
    led.close()
    led = Ledger.open(db_file, clock=clock)
    try:
        assert ids(led.search("🔥")) == [mids["fire"]]
        assert ids(led.search("€")) == [mids["euro"]]
        assert led.search("🇫🇷").hits[0].id == mids["flag"]
    finally:
        led.close()


# ---------------------------------------------------------------------------- asof on old text (issue 14)


def _found(led: Ledger, query: str) -> list[str]:
    return [m.text for m in led.search(query).hits]


def test_asof_matches_the_text_a_memory_had_then(ledger, clock):
    """A memory whose old text alone matches is found asof a time before the edit (with
    that text shown); its new text does not match then, and the old one not now."""
    _with_filler(ledger)
    m = ledger.remember("We deploy with Jenkins every Friday", cluster="code", agent="a").memory
    clock.advance(days=2)
    before_edit = clock()
    clock.advance(days=1)
    ledger.update(m.id, text="We deploy with GitHub Actions every Friday")
    clock.advance(days=1)
    assert _found(ledger, f"jenkins asof:{iso(before_edit)}") == ["We deploy with Jenkins every Friday"]
    assert _found(ledger, f"github actions asof:{iso(before_edit)}") == []
    assert _found(ledger, "jenkins") == []
    assert _found(ledger, "github actions") == ["We deploy with GitHub Actions every Friday"]
    # a word in both texts: found once, with the text of the time asked about
    assert _found(ledger, f"deploy friday asof:{iso(before_edit)}") == ["We deploy with Jenkins every Friday"]
    assert ledger.search(f"deploy friday asof:{iso(before_edit)}").total == 1
    # a typo of the old word still finds it then (fuzzy neighbours come from the vocabulary)
    assert _found(ledger, f"jenkns asof:{iso(before_edit)}") == ["We deploy with Jenkins every Friday"]


def test_asof_between_two_edits_sees_the_middle_text(ledger, clock):
    _with_filler(ledger)
    m = ledger.remember("The cache lives in Memcached", cluster="code", agent="a").memory
    clock.advance(days=1)
    ledger.update(m.id, text="The cache lives in Redis")
    clock.advance(days=1)
    middle = clock()
    clock.advance(days=1)
    ledger.update(m.id, text="The cache lives in Valkey")
    clock.advance(days=1)
    assert _found(ledger, f"redis asof:{iso(middle)}") == ["The cache lives in Redis"]
    assert _found(ledger, f"memcached asof:{iso(middle)}") == []
    assert _found(ledger, f"valkey asof:{iso(middle)}") == []
    assert _found(ledger, "redis") == [] and _found(ledger, "valkey") == ["The cache lives in Valkey"]


def test_asof_finds_compounds_and_symbols_of_old_text_and_texts_replaced_by_a_merge(ledger, clock):
    _with_filler(ledger)
    a = ledger.remember("Builds run on node.js 18 🔥", cluster="code", agent="a").memory
    b = ledger.remember("Builds run on deno 2", cluster="code", agent="b").memory
    clock.advance(days=1)
    before = clock()
    clock.advance(days=1)
    ledger.store.merge_into(a.id, b.id, "alice", clock(), take_text=True)  # a takes b's text
    clock.advance(days=1)
    assert _found(ledger, f"node.js asof:{iso(before)}") == ["Builds run on node.js 18 🔥"]
    assert _found(ledger, f"🔥 asof:{iso(before)}") == ["Builds run on node.js 18 🔥"]
    assert _found(ledger, "node.js") == [] and _found(ledger, "🔥") == []
    # both memories existed then, each with its own text
    assert sorted(_found(ledger, f"builds asof:{iso(before)}")) == ["Builds run on deno 2", "Builds run on node.js 18 🔥"]


def _rel(m) -> float:
    """A hit's relevance, from its score (0.75 x relevance + 0.25 x strength)."""
    return (m.score - 0.25 * m.strength) / 0.75


def test_asof_a_text_then_ranks_as_it_would_in_the_index_of_now(ledger, clock):
    """Fresh-user finding: with a single edit in the store, the text found through its
    earlier wording got relevance 0 (BM25 over the replaced texts alone, where N = n and
    every idf is the floor) and fell off the page. Its relevance is now the one that text
    would have in the word index of current texts."""
    old = ledger.remember("Invoice terms for Acme are net 30", cluster="money", agent="a").memory
    for i in range(1, 13):
        ledger.remember(f"Service s{i} runs on port 80{i}", cluster="code", agent="a")
    for i in range(1, 4):
        ledger.remember(f"Backups of db{i} are kept 30 days", cluster="code", agent="a")
    clock.advance(days=1)
    t = clock()
    clock.advance(days=1)
    res = ledger.remember("Invoice terms for Acme are net 60", cluster="money", agent="a", supersedes=old.id)
    ledger.resolve(res.conflict_id, "merge")
    page = ledger.search(f"net 30 asof:{iso(t)}", limit=3)
    assert [m.text for m in page.hits][0] == "Invoice terms for Acme are net 30"
    assert page.hits[0].score > page.hits[1].score + 0.1  # both words, against "30" alone
    assert page.total == 4


def test_asof_a_text_then_scores_as_the_same_text_now(ledger, clock):
    """The definition, checked without an oracle: a memory whose text then is word for
    word another memory's text now gets the same relevance (same f_i and D, the same N,
    n_i and avgdl), and a memory never edited keeps the relevance it has without asof:."""
    _with_filler(ledger)
    twin = ledger.remember("The staging cluster deploys from the release branch, node.js 20", cluster="code", agent="a").memory
    plain = ledger.remember("The release branch is cut every Tuesday", cluster="code", agent="a").memory
    # the same words in another cluster (in the same cluster they would be one memory)
    edited = ledger.remember("the Staging Cluster deploys from the release branch: node.js 20!", cluster="proc", agent="b").memory
    assert edited.id != twin.id
    clock.advance(days=1)
    t = clock()
    clock.advance(days=1)
    ledger.update(edited.id, text="Staging now deploys from main")
    for query in ("staging release branch", "node.js", "release deploys node", "stagng"):
        then = {m.id: m for m in ledger.search(f"{query} asof:{iso(t)}", mode="hybrid").hits}
        now = {m.id: m for m in ledger.search(query, mode="hybrid").hits}
        assert _rel(then[edited.id]) == pytest.approx(_rel(then[twin.id]), abs=1e-9), query
        assert _rel(then[twin.id]) == pytest.approx(_rel(now[twin.id]), abs=1e-9), query
        if plain.id in now:
            assert _rel(then[plain.id]) == pytest.approx(_rel(now[plain.id]), abs=1e-9), query


def test_asof_the_docs_example_ranks_the_old_text_first(ledger, clock):
    """docs/search.md's own example, in a store with one edit among many memories that
    share the other words: the memory that said Jenkins then comes first for jenkins."""
    _with_filler(ledger)
    for i in range(8):
        ledger.remember(f"We deploy service {i} every Friday", cluster="code", agent="a")
    m = ledger.remember("We deploy with Jenkins every Friday", cluster="code", agent="a").memory
    clock.advance(days=1)
    t = clock()
    clock.advance(days=1)
    ledger.update(m.id, text="We deploy with GitHub Actions every Friday")
    hits = ledger.search(f"jenkins deploy friday asof:{iso(t)}", limit=3).hits
    assert hits[0].id == m.id and hits[0].text == "We deploy with Jenkins every Friday"
    assert _rel(hits[0]) > _rel(hits[1])


@pytest.mark.sqlite_only  # the scratch index of the texts then is SQLite's (PostgreSQL ranks in SQL)
def _mondays_then_tuesdays(db_file, clock) -> int:
    """A store with filler and one memory edited from Mondays to Tuesdays; returns an
    instant (ms) between the two texts. The store is closed."""
    led = Ledger.open(db_file, clock=clock)
    _with_filler(led)
    m = led.remember("Invoices go out on Mondays", cluster="money", agent="a").memory
    clock.advance(days=1)
    t = clock()
    clock.advance(days=1)
    led.update(m.id, text="Invoices go out on Tuesdays")
    led.close()
    return t


def test_asof_scores_texts_then_on_a_store_opened_read_only(db_file, clock):
    t = _mondays_then_tuesdays(db_file, clock)
    ro = Ledger.open(db_file, clock=clock, readonly=True)
    try:
        assert [h.text for h in ro.search(f"mondays invoices asof:{iso(t)}").hits] == ["Invoices go out on Mondays"]
    finally:
        ro.close()


@pytest.mark.sqlite_only
def test_index_stats_are_the_rows_and_mean_tokens_bm25_uses(big):
    """textindex.index_stats reads FTS5's averages record; here N is counted and the
    tokens summed over the whole index instead."""
    from ledger.store import textindex

    conn = big[0].store._conn
    for table in ("memories_fts", "memories_side"):
        n_rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_inst USING fts5vocab (main, {table}, instance)")
        tokens = conn.execute(f"SELECT count(*) FROM temp.{table}_inst").fetchone()[0]
        assert textindex.index_stats(conn, table) == (n_rows, tokens / n_rows)


def test_asof_old_texts_of_stores_edited_before_the_history_index(db_file, clock):
    """Migration m012_text_history_index indexes the history rows already there."""
    before = _mondays_then_tuesdays(db_file, clock)
    led = Ledger.open(db_file, clock=clock)
    with led.store.atomic():  # as a store edited before the index existed
        led.store._conn.execute("DROP TABLE memory_text_fts")
        led.store._conn.execute("DELETE FROM _migrations WHERE name = 'm012_text_history_index'")
    led.close()
    led = Ledger.open(db_file, clock=clock)
    try:
        assert _found(led, f"mondays asof:{iso(before)}") == ["Invoices go out on Mondays"]
    finally:
        led.close()

# ---------------------------------------------------------------------------- exactness on PostgreSQL

RANK_UNIT = 0.6079271  # ts_rank of one occurrence of one term at weight 1, these weight arrays (docs/search.md)


def brute_force_pg(led: Ledger, query: str, mode: str, now: int) -> list[tuple[float, int, str]]:
    """The PostgreSQL definition of docs/search.md, computed apart from the store's
    index: words and side terms are derived here from each memory's text, the
    tsvectors are built afresh for every row (not the stored column, not the GIN
    index), neighbours by edit distance against every vocabulary word; everything
    else is the same Python pass as :func:`brute_force`."""
    import psycopg

    q = parse(query, now)
    url = led.store._path
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT m.seq, m.id, m.text, m.kind, m.origin, m.cluster_id, m.pinned, m.archived, m.deleted_at,
                      m.created_at, m.hits, m.last_read_at, m.source_count, s.trust, coalesce(f.context, '')
               FROM memories m LEFT JOIN sources s ON s.id = m.source_id LEFT JOIN memories_fts f ON f.seq = m.seq"""
        ).fetchall()
        readers: dict[str, set[str]] = {}
        for mid, agent in conn.execute("SELECT memory_id, agent_id FROM memory_readers"):
            readers.setdefault(mid, set()).add(agent)
        history = conn.execute("SELECT memory_id, text, replaced_at FROM memory_text_history ORDER BY replaced_at, rowid").fetchall()
        rel: dict[int, float] = {}
        if q.terms:
            vocab = set()
            for text in [r[2] for r in rows] + [h[1] for h in history]:
                vocab |= T.vocabulary_words(oracle_words(text))
            qt = T.split_query(q.terms, QUERY_STOPWORDS)
            lex = lambda x: "'" + x.replace("'", "''") + "'"  # noqa: E731
            exact = []
            pre = mode != "keyword" and not all(w in QUERY_STOPWORDS for w in qt.words)  # stopwords alone: as typed
            def extras(w):
                """docs/search.md "Prefixes": the words the prefix misses, one lexeme per stem."""
                reps: dict[str, str] = {}
                for v in sorted(x for x in vocab if x.startswith(w) and x != w):
                    stem, hit = conn.execute("SELECT strip(to_tsvector('english', %s))::text, "
                                             "to_tsvector('english', %s) @@ to_tsquery('english', %s)",
                                             (v, v, lex(w) + ":*")).fetchone()
                    if stem and not hit and stem not in reps and len(reps) < 16:
                        reps[stem] = lex(v)
                return list(reps.values())

            for w in qt.words:
                as_prefix = (pre and len(w) >= 3) or (w in qt.starred and len(w) >= 2)  # deploy*: in every mode
                exact.append(lex(w) + (":*" if as_prefix else ""))
                if as_prefix:
                    exact += extras(w)
            starts = prefix_phrases_oracle(q.terms, mode)
            for ph in qt.phrases:
                *lead, last = [lex(x) for x in ph.split()]
                exact.append("(" + " <-> ".join([*lead, last + (":*" if ph in starts else "")]) + ")")
                if ph in starts:
                    exact += ["(" + " <-> ".join([*lead, e]) + ")" for e in extras(ph.rsplit(" ", 1)[1])]
            fuzzy = []
            if mode != "keyword":
                for w in qt.words:
                    k = 0 if len(w) < 4 else 1 if len(w) < 8 else 2
                    if not (w.isalpha() and 3 <= len(w) <= 40) or (mode == "hybrid" and any(v.startswith(w) for v in vocab)):
                        continue
                    fuzzy += [lex(v) for v in sorted(vocab) if v != w and v not in qt.words and lex(v) not in fuzzy
                              and (T.edit_distance(w, v, k) <= k or (k and one_swap_oracle(w, v)))]
            side = [lex("x" + c.encode().hex()) for c in qt.compounds]
            side += ["(" + " <-> ".join(lex(b) for b in ph) + ")" for r in qt.cjk for ph in cjk_phrases_oracle(r)]
            pg_words = lambda text: " ".join(re.findall(r"[^\W_]+", oracle_words(text)))  # noqa: E731
            pg_side = lambda text: " ".join(["x" + c.encode().hex() for c in T.compounds(oracle_spaced(text))] +  # noqa: E731
                                            [" ".join(T.bigrams(run)) for run in T.cjk_runs(text)])
            now_docs = ([r[0] for r in rows], [pg_words(r[2]) for r in rows], [r[14] for r in rows], [pg_side(r[2]) for r in rows])
            doc = "setweight(to_tsvector('english', u.t), 'A') || setweight(to_tsvector('english', u.c), 'D')"

            def matches(t, document, weights, config, docs):
                return conn.execute(
                    f"""SELECT u.seq, ts_rank('{weights}', {document}, to_tsquery('{config}', %s))::float8 FROM
                        unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) AS u(seq, t, c, s)
                        WHERE {document} @@ to_tsquery('{config}', %s)""", (t, *docs, t)).fetchall()

            def ranks(terms, document, weights, config, n_rows, docs=now_docs):
                """{seq: sum over the terms a row of ``docs`` matches of idf * ts_rank / RANK_UNIT},
                idf from the rows of current texts that match the term."""
                p: dict[int, float] = {}
                for t in dict.fromkeys(terms):
                    got = matches(t, document, weights, config, now_docs)
                    idf = math.log(1 + (n_rows - len(got) + 0.5) / (len(got) + 0.5))
                    for seq, rk in (got if docs is now_docs else matches(t, document, weights, config, docs)):
                        p[seq] = p.get(seq, 0.0) + idf * rk
                return {seq: v / RANK_UNIT for seq, v in p.items()}

            def relevances(docs):
                p: dict[int, float] = {}
                if exact:
                    for seq, v in ranks(exact, doc, "{0.3, 0, 0, 1}", "english", n_words, docs).items():
                        p[seq] = p.get(seq, 0.0) + v
                if side:
                    for seq, v in ranks(side, "to_tsvector('simple', u.s)", "{1, 1, 1, 1}", "simple", n_side, docs).items():
                        p[seq] = p.get(seq, 0.0) + v
                out = {seq: v / (v + 1) for seq, v in p.items()}
                if fuzzy:
                    for seq, v in ranks(fuzzy, doc, "{0.3, 0, 0, 1}", "english", n_words, docs).items():
                        out.setdefault(seq, 0.6 * v / (v + 1))
                return out

            n_words = len(rows)  # every memory, dropped ones too, has its row in the word index
            n_side = sum(1 for s in now_docs[3] if s)
            rel = relevances(now_docs)
            if q.asof_ms is not None:  # docs/search.md "asof": the text then, idf of the indexes of now
                then = texts_then([r[:14] for r in rows], history, q.asof_ms)
                for seq in then:
                    rel.pop(seq, None)
                if then:
                    rel.update(relevances((list(then), [pg_words(t) for t in then.values()], [""] * len(then),
                                           [pg_side(t) for t in then.values()])))
    return _filter_and_rank(q, [r[:14] for r in rows], rel, readers, now)


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "fuzzy"])
def test_postgresql_search_is_exact_over_every_row(big_pg, mode):
    led, clock, _ = big_pg
    n_nonempty = 0
    for q in QUERIES:
        expected = _check(led, clock, q, mode, oracle=brute_force_pg)
        n_nonempty += bool(expected)
    assert n_nonempty >= len(QUERIES) - 3


def test_postgresql_filters_deep_pages_and_asof_are_exact(big_pg):
    led, clock, drop_instant = big_pg
    assert len(_check(led, clock, "", "hybrid", limit=25, oracle=brute_force_pg)) > 2500
    _check(led, clock, "strength:<20 cluster:money", "hybrid", limit=25, oracle=brute_force_pg)
    exp = _check(led, clock, "deploy cache", "hybrid", limit=50, offset=200, oracle=brute_force_pg)
    assert len(exp) > 250
    before = _check(led, clock, f"deploy asof:{iso(drop_instant)}", "hybrid", limit=30, oracle=brute_force_pg)
    now_ = brute_force_pg(led, "deploy", "hybrid", clock())
    assert {e[2] for e in before} - {e[2] for e in now_}, "asof should bring back dropped rows"
    _check(led, clock, f"redis asof:{iso(drop_instant)}", "fuzzy", limit=30, oracle=brute_force_pg)
    for query, mode in ASOF_QUERIES:
        _check(led, clock, f"{query} asof:{iso(drop_instant)}", mode, limit=30, oracle=brute_force_pg)
