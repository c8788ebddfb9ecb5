"""Latin words, numbers and compounds written against CJK text (issue 14, "Terms as
people type them"; docs/search.md "Terms"): Chinese and Japanese are written without
spaces, so ``我们用Redis做缓存`` must be found by ``redis`` exactly as
``我们用 Redis 做缓存`` is. Both engines, through a real store and the CLI, and
migration ``m019_cjk_apart`` for stores indexed before."""

from __future__ import annotations

import json

import pytest
from conftest import iso, store_sql

from ledger import terms as T
from ledger.service import Ledger

# (as people write it, the same text with spaces where ledger.terms.set_apart_cjk puts
# them): the user's four examples first, then our own.
MIXED = [
    ("我们用Redis做缓存", "我们用 Redis 做缓存"),
    ("設定ファイルはconfig.yamlにあります", "設定ファイルは config.yaml にあります"),
    ("サーバーはpython3.11で動きます", "サーバーは python3.11 で動きます"),
    ("Use node.js版本20来构建前端", "Use node.js 版本 20 来构建前端"),
    ("데이터베이스는PostgreSQL입니다", "데이터베이스는 PostgreSQL 입니다"),  # Korean
    ("ｐｙｔｈｏｎ３．１１で動くｓｃｒｉｐｔ", "python3.11 で動く script"),  # fullwidth, after NFKC
    ("2026年1月15日にv2.3.1をリリース", "2026 年 1 月 15 日に v2.3.1 をリリース"),  # digits
    ("使用c++和c#开发@scope/pkg插件", "使用 c++ 和 c# 开发 @scope/pkg 插件"),  # compounds of one word
    ("時々pythonを使う", "時々 python を使う"),  # 々 is part of the CJK run
    ("Zürich支社のcafé", "Zürich 支社の café"),  # Latin letters beyond ASCII
    ("ㄱ은Jamo", "ㄱ은 Jamo"),  # Hangul compatibility jamo
]

# The queries each example must be found by (its Latin words, numbers, compounds, and
# CJK words inside it), and a query that must not find it.
FOUND = {
    "我们用Redis做缓存": ["redis", "Redis", "我们用Redis", "缓存", "做缓存", "redis 缓存"],
    "設定ファイルはconfig.yamlにあります": ["config", "config.yaml", "yaml", "設定", "ファイル"],
    "サーバーはpython3.11で動きます": ["python", "python3.11", "サーバー", "動きます"],
    "Use node.js版本20来构建前端": ["node.js", "node", "版本", "20", "构建", "node.js版本"],
    "데이터베이스는PostgreSQL입니다": ["postgresql", "데이터", "PostgreSQL입니다"],
    "ｐｙｔｈｏｎ３．１１で動くｓｃｒｉｐｔ": ["python", "python3.11", "ｐｙｔｈｏｎ３．１１", "script", "動く"],
    "2026年1月15日にv2.3.1をリリース": ["2026", "v2.3.1", "リリース", "15"],
    "使用c++和c#开发@scope/pkg插件": ["c++", "c#", "@scope/pkg", "插件", "开发"],
    "時々pythonを使う": ["python", "時々", "使う"],
    "Zürich支社のcafé": ["zürich", "café", "支社"],
    "ㄱ은Jamo": ["jamo", "ㄱ은"],
}


def test_set_apart_cjk_puts_spaces_where_a_cjk_run_touches_other_text():
    for mixed, spaced in MIXED:
        assert T.set_apart_cjk(T.nfkc(mixed)) == T.nfkc(spaced), mixed
        assert T.word_text(mixed) == T.word_text(spaced), mixed  # (python3.11 is then python 3.11 in both)
    assert T.set_apart_cjk("plain ascii, untouched") == "plain ascii, untouched"
    assert T.set_apart_cjk("café and Zürich") == "café and Zürich"  # no CJK: the same string
    assert T.set_apart_cjk("我们使用連接池。") == "我们使用連接池 。"  # punctuation is set apart too (no word changes)
    assert T.set_apart_cjk("漢\U000e0100字x") == "漢\U000e0100字 x"  # a variation selector stays with its character
    assert T.set_apart_cjk("a 東京 b") == "a 東京 b"  # spaces already there are kept, none added
    assert T.is_cjk("々") and T.is_cjk("ㄱ") and T.is_cjk("\u1100") and not T.is_cjk("é") and not T.is_cjk("Ａ")


def test_terms_of_mixed_text_are_those_of_the_spaced_text():
    for mixed, spaced in MIXED:
        assert T.compounds(mixed) == T.compounds(spaced), mixed
        assert T.vocabulary_words(mixed) == T.vocabulary_words(spaced), mixed
        assert T.side_text(mixed) == T.side_text(spaced), mixed
    assert T.compounds("設定ファイルはconfig.yamlにあります") == ["config.yaml"]
    assert "redis" in T.vocabulary_words("我们用Redis做缓存")
    q = T.split_query(["我们用Redis做缓存"])
    assert q.words == ("redis",) and q.cjk == ("我们用", "做缓存")


@pytest.fixture()
def led(store_target, clock):
    with Ledger.open(store_target, clock=clock) as led:
        led.remember("We use Redis for session caching", cluster="home", agent="a")
        led.remember("The config lives in /etc/app", cluster="home", agent="a")
        for mixed, spaced in MIXED:
            led.remember(mixed, cluster="code", agent="a")
            led.remember(spaced, cluster="proc", agent="a")
        yield led


def _hits(led, query, cluster):
    res = led.search(f"{query} cluster:{cluster}", limit=50)
    return [(m.text, round(m.score, 12)) for m in res.hits]


@pytest.mark.parametrize("mixed", [m for m, _ in MIXED])
def test_mixed_text_is_found_by_its_words_numbers_and_compounds(led, mixed):
    for q in FOUND[mixed]:
        assert mixed in [m.text for m in led.search(q, limit=50).hits], q
    assert mixed not in [m.text for m in led.search("kubernetes", limit=50).hits]


def test_mixed_and_spaced_text_match_the_same_queries_with_the_same_scores(led):
    """The definition: a memory written without spaces matches every query exactly as
    the same text with spaces around its CJK runs, with the same relevance."""
    spaced_of = dict(MIXED)
    queries = {q for qs in FOUND.values() for q in qs} | {"3.11", "1", "scope", "pkg", "c", "zurich", "rediss", "pythn"}
    for mixed, spaced in MIXED:
        queries |= set(spaced.split()) | {mixed}
    for q in sorted(queries):
        for mode in ("hybrid", "keyword", "fuzzy"):
            got = _hits_mode(led, q, "code", mode)
            want = sorted((spaced_to_mixed(spaced_of, t), s) for t, s in _hits_mode(led, q, "proc", mode))
            assert got == want, (q, mode)


def _hits_mode(led, query, cluster, mode):
    res = led.search(f"{query} cluster:{cluster}", mode=mode, limit=50)
    return sorted((m.text, round(m.score, 12)) for m in res.hits)


def spaced_to_mixed(spaced_of, text):
    return next(m for m, s in spaced_of.items() if s == text)


def test_asof_finds_latin_words_of_an_old_mixed_text(led, clock):
    m = led.remember("部署用Jenkins完成", cluster="code", agent="a").memory
    clock.advance(days=1)
    before = iso(clock())
    clock.advance(days=1)
    led.update(m.id, text="部署用GitHub Actions完成")
    assert [h.id for h in led.search(f"jenkins asof:{before}").hits] == [m.id]
    assert led.search("jenkins").total == 0
    assert [h.id for h in led.search("github").hits] == [m.id]


def test_the_cli_finds_latin_words_inside_chinese_and_japanese(cli):
    for text in ("We use Redis for caching", "我们用Redis做缓存", "設定ファイルはconfig.yamlにあります",
                 "サーバーはpython3.11で動きます", "Use node.js版本20来构建前端"):
        rc, out, err = cli("remember", text, "--cluster", "code")
        assert rc == 0, err

    def found(q):
        rc, out, err = cli("search", q, "--json")
        assert rc == 0, err
        return sorted(h["text"] for h in json.loads(out)["hits"])

    assert found("redis") == ["We use Redis for caching", "我们用Redis做缓存"]
    assert found("我们用Redis") == ["We use Redis for caching", "我们用Redis做缓存"]
    assert found("config") == found("config.yaml") == ["設定ファイルはconfig.yamlにあります"]
    assert found("python") == found("python3.11") == found("3.11") == ["サーバーはpython3.11で動きます"]
    assert found("node.js") == ["Use node.js版本20来构建前端"]
    rc, out, err = cli("search", "redis")
    assert rc == 0 and "我们用Redis做缓存" in out, (out, err)


OLD_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF),
                  (0x20000, 0x2FA1F))


def _as_before_m019(monkeypatch):
    """Index as ledger did before m019: CJK runs not set apart, the older CJK ranges."""
    monkeypatch.setattr(T, "set_apart_cjk", lambda text: text)
    monkeypatch.setattr(T, "_CJK_RANGES", OLD_CJK_RANGES)
    monkeypatch.setattr(T, "_CJK_MEMO", {})  # what is_cjk remembers under the new ranges


def test_m019_indexes_older_stores_again(store_target, clock, monkeypatch):
    """A store indexed before m019 (texts, chunks' neighbour context, and replaced texts
    for asof:) finds the Latin words after opening it once; rows without a boundary are
    not written again."""
    with monkeypatch.context() as mp:
        _as_before_m019(mp)
        led = Ledger.open(store_target, clock=clock)
        mids = {mixed: led.remember(mixed, cluster="code", agent="a").memory.id for mixed, _ in MIXED}
        plain = led.remember("We use Redis for session caching", cluster="code", agent="a").memory.id
        cjk = led.remember("我们使用連接池来管理数据库", cluster="code", agent="a").memory.id
        res = led.ingest_chunks("notes.md", ["The cache is warm.", "部署用Jenkins完成。", "Bye now."], cluster="code", agent="a")
        old = led.remember("构建用Gradle完成", cluster="code", agent="a").memory.id
        clock.advance(days=1)
        before = iso(clock())
        clock.advance(days=1)
        led.update(old, text="构建用Bazel完成")
        assert led.search("redis").total == 1  # only the English one
        assert led.search("config.yaml").total == 0
        assert led.search(f"gradle asof:{before}").total == 0
        led.close()
    store_sql(store_target, "DELETE FROM _migrations WHERE name = 'm019_cjk_apart'")
    from ledger.store import textindex

    redone = []
    unindex = textindex.unindex
    monkeypatch.setattr(textindex, "unindex", lambda conn, seq: redone.append(seq) or unindex(conn, seq))
    led = Ledger.open(store_target, clock=clock)
    try:
        assert sorted(m.id for m in led.search("redis").hits) == sorted([plain, mids["我们用Redis做缓存"]])
        for mixed, queries in FOUND.items():
            for q in queries:
                assert mids[mixed] in [m.id for m in led.search(q, limit=50).hits], (mixed, q)
        assert [m.id for m in led.search(f"gradle asof:{before}").hits] == [old]
        assert [m.id for m in led.search("bazel").hits] == [old]
        jenkins = [m for m in led.search("jenkins", limit=50).hits]
        assert jenkins and all(m.source_id == res.source_id for m in jenkins)
        # exactly the memories with a boundary in their text or neighbour context
        chunks = [m.id for m in led.source_detail(res.source_id)["chunks"]]
        want = {*mids.values(), old, *chunks}
        seqs = dict(store_sql(store_target, "SELECT seq, id FROM memories"))
        assert sorted(seqs[s] for s in redone) == sorted(want)
        assert plain not in want and cjk not in want
    finally:
        led.close()
    # the chunks next to the Jenkins one hold it in their context column, rewritten too
    ctx = [c for (c,) in store_sql(store_target, "SELECT context FROM memories_fts") if "Jenkins" in c]
    assert len(ctx) == 2 and all("部署用 Jenkins" in c for c in ctx), ctx


def test_a_claim_written_against_cjk_finds_its_peers(store_target, clock):
    """The contradiction pipeline looks peers up in the word index by the claim's tokens
    (``query_terms`` keeps ``我们用redis做缓存`` whole): each is searched as the phrase of
    its words as the index now holds them, so the earlier claim is still a peer."""
    with Ledger.open(store_target, clock=clock) as led:
        led.remember("We deploy on Fridays", cluster="code", agent="a")
        first = led.remember("我们用Redis做缓存，端口是6379", cluster="code", agent="a").memory
        text = "我们用Redis做缓存，端口是6380"
        second = led.remember(text, cluster="code", agent="b").memory
        assert first.id in [p[0] for p in led._peers(second.id, text, "code", [])]
        assert first.id in [p[0] for p in led._peers(second.id, "Redis做缓存", "code", [])]
