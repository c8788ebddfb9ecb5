"""Browse's first page (no text, no filter, strength order) is ranked without computing
strength for every memory (``SearchMixin._strength_page``, issue 14): it must give the
same page and total as ranking every row, at any limit and offset, with chunks of many
sources whose trusts tie or differ, claims above and below them, pins, archived and
dropped memories."""

from __future__ import annotations

import random

import pytest
from conftest import BOTH_ENGINES

from ledger.store.search import SearchMixin

ENGINES = BOTH_ENGINES


@pytest.fixture
def mixed(ledger, clock):
    rnd = random.Random(11)
    trusts = [0.9, 0.9, 0.5, 0.7, 0.99, 0.1, 0.8, 0.7]  # ties, and trusts outside the clamp (0.15-0.97)
    for i, t in enumerate(trusts):
        ledger.ingest_chunks(f"doc{i}.md", [f"passage {i}.{k} about things" for k in range(rnd.randint(5, 40))],
                             cluster=rnd.choice(["code", "proc"]), agent="ann", trust=t)
        clock.advance(days=3)
    claims = []
    for i in range(60):
        claims.append(ledger.remember(f"claim {i} number {rnd.randrange(10**9)} on topic {i % 7}", cluster="code",
                                      agent=rnd.choice(["ann", "bob"])).memory.id)
        clock.advance(days=rnd.random() * 5)
    for _ in range(40):  # hits, readers and freshness vary: claims land above, between and below the chunk levels
        ledger.store.count_read(rnd.sample(claims, 3), rnd.choice(["ann", "bob", "cy"]), clock())
        clock.advance(days=rnd.random() * 20)
    for mid in claims[:4]:
        ledger.review(mid, "pin")
    ledger.bulk("archive", claims[4:8], by="ann")
    ledger.forget(claims[8:12], agent="ann")
    chunk = [m.id for m in ledger.search("", kind="chunk", limit=30).hits]
    ledger.bulk("archive", chunk[:3], by="ann")
    ledger.forget(chunk[3:6], agent="ann")
    return ledger


def full_ranking(monkeypatch, led, **kw):
    with monkeypatch.context() as m:
        m.setattr(SearchMixin, "_strength_page", lambda self, *a: None)
        return led.search("", **kw)


@pytest.mark.parametrize("limit,offset", [(1, 0), (10, 0), (25, 7), (100, 0), (40, 130), (500, 0)])
def test_the_first_page_equals_ranking_every_row(mixed, monkeypatch, limit, offset):
    used = []
    real = SearchMixin._strength_page
    monkeypatch.setattr(SearchMixin, "_strength_page", lambda self, *a: used.append(r := real(self, *a)) or r)
    for archived in (False, True):
        got = mixed.search("", limit=limit, offset=offset, include_archived=archived)
        want = full_ranking(monkeypatch, mixed, limit=limit, offset=offset, include_archived=archived)
        assert [m.id for m in got.hits] == [m.id for m in want.hits]
        assert [m.strength for m in got.hits] == [m.strength for m in want.hits]
        assert got.total == want.total
    assert used and all(r is not None for r in used)  # the bound was taken, not the fallback


def test_filters_and_other_orders_rank_every_row(mixed, monkeypatch):
    """The bound is only taken for the unfiltered strength order: a filter can leave a
    level without rows, and a read per level would then walk the whole table."""
    used = []
    monkeypatch.setattr(SearchMixin, "_strength_page", lambda self, *a: used.append(1))
    for q, kw in (("cluster:code", {}), ("type:chat", {}), ("", {"kind": "claim"}), ("", {"direction": "asc"}),
                  ("", {"sort": "hits"}), ("", {"pinned_only": True}), ("passage", {"sort": "strength"})):
        assert mixed.search(q, limit=20, **kw).total
    assert not used
    assert mixed.search("", limit=20).total and used


def test_a_chunk_without_a_source_falls_back_to_ranking_every_row(mixed, monkeypatch):
    conn = mixed.store._conn
    with mixed.store.atomic():
        conn.execute("UPDATE memories SET source_id = NULL WHERE id = ?", (mixed.search("", kind="chunk", limit=1).hits[0].id,))
    assert mixed.store._strength_page("", "1 = 1", {"limit": 10, "offset": 0}) is None
    got = mixed.search("", limit=50)
    want = full_ranking(monkeypatch, mixed, limit=50)
    assert [m.id for m in got.hits] == [m.id for m in want.hits]


@pytest.mark.parametrize("buckets", [1, 7, 60])
def test_the_timeline_equals_bucketing_every_live_memory(mixed, buckets):
    conn = mixed.store._conn
    created = [r[0] for r in conn.execute("SELECT created_at FROM memories")]
    lo, hi = min(created), max(created)
    width = max(1, -(-(hi - lo + 1) // buckets))
    want = [0] * buckets
    for (at,) in conn.execute("SELECT created_at FROM memories WHERE deleted_at IS NULL"):
        want[min(buckets - 1, (at - lo) // width)] += 1
    t = mixed.timeline(buckets)
    assert (t["start"], t["end"], t["width"], t["counts"]) == (lo, hi, width, want)


def test_source_previews_equal_each_sources_detail(mixed):
    sources = mixed.sources()
    distilled = [mixed.remember(f"distilled fact {i} from {s.filename}", cluster="code", agent="bob", source_id=s.id).memory.id
                 for i, s in enumerate(sources[:3] * 2)]
    mixed.forget(distilled[:1], agent="bob")
    got = mixed.source_previews([s.id for s in sources], 3)
    assert sum(len(v["claims"]) for v in got.values()) == len(distilled) - 1
    for s in sources:
        one = mixed.source_detail(s.id, 3)
        assert [m.id for m in got[s.id]["chunks"]] == [m.id for m in one["chunks"]]
        assert [m.id for m in got[s.id]["claims"]] == [m.id for m in one["claims"]]
