"""The store through the facade (issue 2): clusters, writing, forgetting, accounting,
asof:, filters, sources, stats. Real SQLite files; time moves with a FixedClock."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import BOTH_ENGINES, T0, is_pg, iso, store_exists, store_sql

from ledger.clock import DAY_MS, FixedClock
from ledger.errors import InvalidInput, InvalidQuery, UnknownCluster, UnknownMemory, UnknownSource
from ledger.ingest import source_from_text
from ledger.service import Ledger, file_key
from ledger.store.store import SEED_CLUSTERS

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)


def ids(res) -> list[str]:
    return [m.id for m in res.hits]


# ---------------------------------------------------------------------------- opening, clusters


def test_store_folder_is_created_on_first_open(tmp_path, clock):
    p = tmp_path / "a" / "b" / "ledger.db"
    assert not p.parent.exists()
    with Ledger.open(p, clock=clock) as led:
        led.remember("x marks the spot", cluster="prefs", agent="a")
    assert p.is_file()


def test_default_location_is_ledger_home(monkeypatch, tmp_path, clock, store_target):
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("LEDGER_HOME", str(home))
    with Ledger.open(clock=clock) as led:
        assert led.path == home / "ledger.db"
    assert (home / "ledger.db").is_file()
    monkeypatch.setenv("LEDGER_DB", str(store_target))  # a file elsewhere, or a PostgreSQL URL
    with Ledger.open(clock=clock) as led:
        assert led.path == store_target and led.store.engine == ("postgresql" if is_pg(store_target) else "sqlite")
        led.remember("x marks the spot", cluster="prefs", agent="a")
    assert store_exists(store_target)


def test_ten_seed_clusters_ordered_by_label(ledger):
    cs = ledger.clusters()
    assert {c.id for c in cs} == {c[0] for c in SEED_CLUSTERS} and len(cs) == 10
    assert [c.label for c in cs] == sorted(c.label for c in cs)
    assert next(c for c in cs if c.id == "prefs").color == "#b7c14a"


def test_add_cluster_slugs_label_and_is_idempotent(ledger):
    c = ledger.add_cluster("Client work")
    assert c.id == "client-work" and c.label == "Client work"
    again = ledger.add_cluster("client   WORK")
    assert again.id == "client-work" and again.label == "Client work"  # existing one returned unchanged
    assert len(ledger.clusters()) == 11
    assert ledger.remember("Invoices go to Ana", cluster="client-work", agent="a").memory.cluster_label == "Client work"
    with pytest.raises(InvalidInput):
        ledger.add_cluster("  ")


def test_unknown_cluster_error_lists_known_ids(ledger):
    with pytest.raises(UnknownCluster) as e:
        ledger.remember("x", cluster="nope", agent="a")
    for cid, _, _ in SEED_CLUSTERS:
        assert cid in e.value.choices  # structured: each surface phrases the list
    assert '"nope"' in e.value.message
    assert ledger.stats()["memories"] == 0


# ---------------------------------------------------------------------------- writing


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_remember_fails(ledger, text):
    with pytest.raises(InvalidInput):
        ledger.remember(text, cluster="prefs", agent="a")
    assert ledger.stats()["memories"] == 0


def test_written_claim_is_pending_searchable_and_read_by_its_writer(ledger, clock):
    m = ledger.remember("  CI runs on Python 3.11  ", cluster="code", agent="claude", note="from tox.ini").memory
    assert m.text == "CI runs on Python 3.11"
    assert (m.kind, m.origin, m.writer, m.readers) == ("claim", "chat", "claude", ("claude",))
    assert m.reviewed_at is None and m.hits == 0 and m.source_count == 1
    assert m.created_at == m.last_read_at == clock()
    assert m.provenance == "from tox.ini"
    assert m.id.startswith("m_")
    assert ids(ledger.search("python")) == [m.id]
    assert [a["id"] for a in ledger.agents()["agents"]] == ["claude"]
    ev = ledger.events(5)[0]
    assert (ev.op, ev.agent, ev.memory_id, ev.detail) == ("memory.write", "claude", m.id, "CI runs on Python 3.11")
    assert ids(ledger.search("", pending_only=True)) == [m.id]


# ---------------------------------------------------------------------------- forget


def test_forget_counts_only_what_it_dropped(ledger):
    a = ledger.remember("alpha fact", cluster="prefs", agent="x").memory
    b = ledger.remember("beta fact", cluster="prefs", agent="x").memory
    assert ledger.forget([a.id], agent="x") == 1
    assert ledger.forget([a.id, b.id], agent="x") == 1  # a was already gone
    assert ledger.forget([a.id, b.id], agent="x") == 0
    assert ledger.get(a.id).deleted_at is not None


def test_forget_unknown_id_is_an_error_and_drops_nothing(ledger):
    a = ledger.remember("alpha fact", cluster="prefs", agent="x").memory
    with pytest.raises(UnknownMemory) as e:
        ledger.forget([a.id, "m_doesnotexist"], agent="x")
    assert "m_doesnotexist" in e.value.message
    assert ledger.get(a.id).deleted_at is None
    with pytest.raises(InvalidInput):
        ledger.forget([], agent="x")


def test_forget_logs_who_dropped(ledger):
    a = ledger.remember("alpha fact", cluster="prefs", agent="x").memory
    ledger.forget([a.id], agent="cleaner")
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent, ev.memory_id) == ("memory.drop", "cleaner", a.id)


# ---------------------------------------------------------------------------- recall vs search


def test_recall_counts_only_the_returned_page(ledger, clock):
    ms = [ledger.remember(f"kafka broker {i} listens on port 90{i}", cluster="code", agent="w").memory for i in range(5)]
    t_write = clock()
    clock.advance(days=3)
    res = ledger.recall("kafka broker", agent="reader", limit=2)
    assert res.total == 5 and len(res.hits) == 2
    page = set(ids(res))
    for m in ms:
        got = ledger.get(m.id)
        if m.id in page:
            assert (got.hits, got.last_read_at) == (1, clock())
            assert set(got.readers) == {"w", "reader"}
        else:
            assert (got.hits, got.last_read_at, got.readers) == (0, t_write, ("w",))
    # as in the seed, the returned hits are as ranked: before this read was counted
    assert all(h.hits == 0 and h.score is not None for h in res.hits)
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent, ev.detail) == ("memory.search", "reader", '5 for "kafka broker"')
    assert ev.ms is not None and ev.ms >= 0


def test_search_never_counts(ledger, clock):
    m = ledger.remember("kafka broker listens on 9092", cluster="code", agent="w").memory
    n_events = len(ledger.events(100))
    clock.advance(days=3)
    for q in ("kafka", "", "cluster:code", "broker strength:>10"):
        assert m.id in ids(ledger.search(q))
    list(ledger.export("kafka"))
    got = ledger.get(m.id)
    assert (got.hits, got.last_read_at, got.readers) == (0, m.last_read_at, ("w",))
    assert len(ledger.events(100)) == n_events
    assert ledger.stats()["p50SearchMs"] is None


def test_recall_revives_and_search_does_not(ledger, clock):
    m = ledger.remember("kafka broker listens on 9092", cluster="code", agent="w").memory
    clock.advance(days=400)
    before = ledger.get(m.id).strength
    ledger.search("kafka")
    assert ledger.get(m.id).strength == before
    ledger.recall("kafka", agent="w")
    assert ledger.get(m.id).strength > before + 0.2


# ---------------------------------------------------------------------------- asof


def test_asof_finds_dropped_memories_and_hides_later_ones(ledger, clock):
    old = ledger.remember("The VPN gateway is vpn1.example.org", cluster="proc", agent="a").memory
    clock.advance(days=10)
    t_between = clock()
    clock.advance(days=10)
    ledger.forget([old.id], agent="a")
    new = ledger.remember("The VPN gateway is vpn2.example.org", cluster="proc", agent="a").memory
    clock.advance(days=1)

    assert ids(ledger.search("gateway")) == [new.id]
    # before the drop: the dropped memory is back (text search included), the later one hidden
    assert ids(ledger.search(f"gateway asof:{iso(t_between)}")) == [old.id]
    assert ids(ledger.search(f"asof:{iso(t_between)}")) == [old.id]
    assert ids(ledger.search(f"vpn1 asof:{iso(t_between)}")) == [old.id]
    # a span works too: 5 days ago the old one was still live and the new one unwritten
    assert ids(ledger.search("gateway asof:5d")) == [old.id]
    assert ids(ledger.search("gateway asof:0d")) == [new.id]
    # before anything existed
    assert ledger.search(f"gateway asof:{iso(old.created_at - 1)}").total == 0
    # at the exact instant of the write it is visible; at the drop instant it is gone
    assert ids(ledger.search(f"gateway asof:{iso(old.created_at)}")) == [old.id]
    assert old.id not in ids(ledger.search(f"gateway asof:{iso(ledger.get(old.id).deleted_at)}"))


def test_before_and_after_filters(ledger, clock):
    a = ledger.remember("release notes drafted", cluster="projects", agent="a").memory
    clock.advance(days=40)
    b = ledger.remember("release notes published", cluster="projects", agent="a").memory
    assert ids(ledger.search("release after:10d")) == [b.id]
    assert ids(ledger.search("release before:10d")) == [a.id]


# ---------------------------------------------------------------------------- filters, pages


def test_pagination_keeps_total(ledger, clock):
    made = []
    for i in range(23):
        made.append(ledger.remember(f"shard {i} holds customer data", cluster="code", agent="a").memory.id)
        clock.advance(ms=1000)
    seen = []
    for off in (0, 10, 20):
        res = ledger.search("shard", limit=10, offset=off)
        assert res.total == 23
        seen += ids(res)
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen))
    past = ledger.search("shard", limit=10, offset=40)
    assert (past.hits, past.total) == ((), 23)
    assert ledger.search("", limit=5, offset=5).total == 23


def test_archived_is_hidden_unless_asked(ledger):
    a = ledger.remember("archived fact about tokens", cluster="prefs", agent="a").memory
    b = ledger.remember("live fact about tokens", cluster="prefs", agent="a").memory
    assert ledger.bulk("archive", [a.id]) == {"affected": 1}
    assert ids(ledger.search("tokens")) == [b.id]
    assert set(ids(ledger.search("tokens", include_archived=True))) == {a.id, b.id}
    ledger.bulk("unarchive", [a.id])
    assert set(ids(ledger.search("tokens"))) == {a.id, b.id}


def test_cluster_agent_type_kind_filters_and_widening(ledger):
    code = ledger.remember("widget build uses make", cluster="code", agent="alice").memory
    proc = ledger.remember("widget release needs sign-off", cluster="proc", agent="bob").memory
    home = ledger.remember("widget charger is in the drawer", cluster="home", agent="bob").memory
    res = ledger.ingest(source_from_text("The widget manual says to hold reset for 5 seconds.", "manual.md"),
                        cluster="home", agent="carol", trust=0.9)
    chunk = ledger.search("kind:chunk").hits[0]
    distilled = ledger.remember("widget reset takes 5 seconds", cluster="home", agent="carol", source_id=res.source_id).memory

    assert set(ids(ledger.search("widget cluster:code"))) == {code.id}
    assert set(ids(ledger.search("widget cluster:code cluster:proc"))) == {code.id, proc.id}
    assert set(ids(ledger.search("widget CLUSTER:CODE cluster:proc cluster:code"))) == {code.id, proc.id}
    assert set(ids(ledger.search("widget agent:bob"))) == {proc.id, home.id}
    assert set(ids(ledger.search("widget agent:bob agent:alice"))) == {code.id, proc.id, home.id}
    assert set(ids(ledger.search("widget type:doc"))) == {chunk.id, distilled.id}
    assert distilled.origin == "doc" and distilled.reviewed_at is None
    assert set(ids(ledger.search("widget type:chat"))) == {code.id, proc.id, home.id}
    assert set(ids(ledger.search("widget kind:chunk"))) == {chunk.id}
    assert set(ids(ledger.search("widget kind:claim cluster:home"))) == {home.id, distilled.id}
    assert set(ids(ledger.search("widget kind:claim kind:chunk cluster:home"))) == {home.id, chunk.id, distilled.id}
    assert ledger.search("widget type:foo").total == 0
    # filters AND across keys
    assert set(ids(ledger.search("widget agent:bob cluster:proc"))) == {proc.id}
    # a reader becomes matchable by agent:
    ledger.recall("charger drawer", agent="dave")
    assert set(ids(ledger.search("agent:dave"))) == {home.id}
    # kind argument of the facade
    assert set(ids(ledger.search("widget", kind="chunk"))) == {chunk.id}


def test_strength_filter_after_700_days(ledger, clock):
    old = ledger.remember("old fact about caching", cluster="code", agent="a").memory
    clock.advance(days=700)
    new = ledger.remember("new fact about caching", cluster="code", agent="a").memory
    assert ids(ledger.search("caching strength:<30")) == [old.id]
    assert ids(ledger.search("caching strength:>30")) == [new.id]
    assert ledger.search("caching strength:>51").total == 0
    assert ledger.search("caching strength:<17").total == 0


def test_bad_filter_is_an_invalid_query(ledger):
    for q in ("asof:xyz", "before:tomorrowish", "strength:50", "strength:>101"):
        with pytest.raises(InvalidQuery) as e:
            ledger.search(q)
        assert e.value.message.startswith(f'Cannot parse "{q}": ')
    with pytest.raises(InvalidInput):
        ledger.search("x", mode="semantic")


def test_filter_only_query_sorts_by_strength(ledger, clock):
    weak = ledger.remember("weak", cluster="prefs", agent="a").memory
    clock.advance(days=100)
    strong = ledger.remember("strong", cluster="prefs", agent="a").memory
    assert ids(ledger.search("cluster:prefs")) == [strong.id, weak.id]
    assert ids(ledger.search("cluster:prefs", direction="asc")) == [weak.id, strong.id]
    assert ids(ledger.search("cluster:prefs", sort="created")) == [strong.id, weak.id]


# ---------------------------------------------------------------------------- links, merge, get


def test_link_requires_both_memories(ledger):
    a = ledger.remember("alpha", cluster="prefs", agent="x").memory
    b = ledger.remember("beta", cluster="prefs", agent="x").memory
    with pytest.raises(UnknownMemory):
        ledger.link(a.id, "m_nope", agent="x")
    ledger.link(b.id, a.id, agent="x")
    ledger.link(a.id, b.id, agent="x")  # idempotent
    assert ledger.store.links() == [tuple(sorted((a.id, b.id)))]
    assert [m.id for m in ledger.related(a.id)] == [b.id]
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent) == ("memory.link", "x")


def test_bulk_merge_sums_hits_and_unions_readers(ledger, clock):
    a = ledger.remember("merge target about redis", cluster="code", agent="w1").memory
    b = ledger.remember("merge source about redis", cluster="code", agent="w2").memory
    ledger.recall("target", agent="r1")
    clock.advance(days=2)
    ledger.recall("source", agent="r2")
    ledger.recall("source", agent="r2")
    merged = ledger.bulk("merge", [a.id, b.id])["merged"]
    assert merged.id == a.id and merged.text == "merge target about redis"
    assert merged.hits == 3 and merged.source_count == 2
    assert set(merged.readers) == {"w1", "r1", "w2", "r2"}
    assert merged.last_read_at == clock()
    assert ledger.get(b.id).deleted_at is not None
    with pytest.raises(InvalidInput):
        ledger.bulk("merge", [a.id])


def test_missing_memory_is_unknown_memory(ledger):
    with pytest.raises(UnknownMemory):
        ledger.get("m_missing")


# ---------------------------------------------------------------------------- sources


DOC = """# Deploy runbook

Deploys go out from the release branch. Tag the commit first.

## Rollback

Roll back with the previous tag. Tell the on-call channel.
"""


def test_ingest_chunks_are_reviewed_trusted_and_attributed(ledger, clock):
    res = ledger.ingest(source_from_text(DOC, "runbook.md"), cluster="proc", agent="ingester", trust=0.86)
    assert res.chunks == 2 and res.source_id.startswith("s_")
    chunks = ledger.search("kind:chunk", sort="created", direction="asc").hits
    assert len(chunks) == 2
    by_index = sorted(chunks, key=lambda m: m.chunk_index)
    assert [m.chunk_index for m in by_index] == [1, 2]
    assert by_index[0].text.startswith("# Deploy runbook") and by_index[1].text.startswith("## Rollback")
    for m in chunks:
        assert m.id.startswith("c_") and (m.kind, m.origin, m.source_id) == ("chunk", "doc", res.source_id)
        assert m.reviewed_at == clock() and m.readers == ("ingester",)
        assert m.provenance == f"chunk {m.chunk_index} of 2 · runbook.md"
        assert m.strength == pytest.approx(0.86)
    # the rollback chunk ranks first; its neighbour matches too, through its low-weight context
    assert ids(ledger.search("rollback"))[0] == by_index[1].id
    assert ledger.review_queue()["claimCount"] == 0  # chunks are never pending
    (src,) = ledger.sources()
    assert (src.filename, src.ext, src.trust, src.chunk_count, src.claim_count, src.ingested_by) == ("runbook.md", "md", 0.86, 2, 0, "ingester")
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent, ev.detail) == ("sources.ingest", "ingester", "runbook.md · 2 chunks")


def test_ingest_rejects_empty_and_bad_trust(ledger):
    with pytest.raises(InvalidInput):
        ledger.ingest_chunks("x.md", ["  ", ""], cluster="proc", agent="a")
    with pytest.raises(InvalidInput):
        ledger.ingest(source_from_text("text", "x.md"), cluster="proc", agent="a", trust=1.5)
    with pytest.raises(UnknownCluster):
        ledger.ingest(source_from_text("text", "x.md"), cluster="nope", agent="a")
    assert ledger.sources() == []


def test_retrust_moves_every_chunk(ledger):
    res = ledger.ingest(source_from_text(DOC, "runbook.md"), cluster="proc", agent="a", trust=0.5)
    assert ledger.set_trust(res.source_id, 0.9) == 0.9
    assert all(m.strength == pytest.approx(0.9) for m in ledger.search("kind:chunk").hits)
    for bad in (4, -0.1, float("inf"), float("nan")):  # refused, like ingest --trust (the seed clamped)
        with pytest.raises(InvalidInput):
            ledger.set_trust(res.source_id, bad)
    assert ledger.set_trust(res.source_id, 1) == 1.0
    assert all(m.strength == pytest.approx(0.97) for m in ledger.search("kind:chunk").hits)  # chunk clamp
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent, ev.detail) == ("sources.trust", "human", f"{res.source_id} → 100")
    with pytest.raises(UnknownSource):
        ledger.set_trust("s_nope", 0.5)


def test_source_drop_removes_chunks_and_requeues_claims(ledger):
    res = ledger.ingest(source_from_text(DOC, "runbook.md"), cluster="proc", agent="a")
    claim = ledger.remember("Deploys need a tag first", cluster="proc", agent="a", source_id=res.source_id).memory
    ledger.review(claim.id, "keep")
    assert ledger.get(claim.id).reviewed_at is not None
    assert ledger.sources()[0].claim_count == 1
    out = ledger.drop_source(res.source_id)
    assert out == {"chunks": 2, "flagged": 1}
    assert ledger.search("kind:chunk").total == 0
    back = ledger.get(claim.id)
    assert back.reviewed_at is None and back.deleted_at is None
    assert claim.id in [m.id for m in ledger.review_queue()["claims"]]
    assert ledger.sources() == []
    with pytest.raises(UnknownSource):
        ledger.drop_source(res.source_id)
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent) == ("sources.drop", "human")


# ---------------------------------------------------------------------------- stats


def test_stats_arithmetic(ledger, clock):
    ledger.remember("Renews every 12 months", cluster="money", agent="a")
    ledger.remember("Renews every 24 months", cluster="money", agent="b")
    c = ledger.remember("Prefers tea", cluster="prefs", agent="a").memory
    d = ledger.remember("Prefers window seats", cluster="travel", agent="c").memory
    ledger.ingest(source_from_text(DOC, "runbook.md"), cluster="proc", agent="a")
    ledger.review(c.id, "keep")
    ledger.forget([d.id], agent="a")
    ledger.recall("tea", agent="a")
    st_ = ledger.stats()
    assert st_["claims"] == 3 and st_["chunks"] == 2 and st_["memories"] == st_["claims"] + st_["chunks"]
    assert st_["pending"] == 2  # a and b; c kept, d dropped
    assert st_["candidates"] == 1 and st_["conflicts"] == 0
    assert st_["sources"] == 1 and st_["agents"] == 4  # a, b, c and "human" (the review)
    # every write, ingest, review, drop and search is an event today
    assert st_["requestsToday"] == len(ledger.events(1000)) == 4 + 1 + 1 + 1 + 1
    assert st_["p50SearchMs"] is not None
    assert st_["lastWriteAt"] == clock()
    assert st_["diskBytes"] > 0 and st_["db"] == str(ledger.path)
    cand = ledger.candidates()[0]
    ledger.judge(cand.id, "conflict", agent="j")
    st2 = ledger.stats()
    assert (st2["candidates"], st2["conflicts"], st2["reviewQueue"], st2["reviewClaims"]) == (0, 1, 1, 0)


def test_facets_agree_with_search(ledger):
    ledger.remember("alpha", cluster="prefs", agent="a")
    ledger.remember("beta", cluster="prefs", agent="b")
    ledger.remember("gamma", cluster="code", agent="a")
    f = ledger.facets()
    assert f["cluster"] == {"prefs": ledger.search("cluster:prefs").total, "code": ledger.search("cluster:code").total}
    assert f["agent"]["a"] == ledger.search("agent:a").total == 2
    assert f["flags"]["pending"] == 3


def test_a_second_connection_sees_writes_at_once(ledger, store_target, clock):
    m = ledger.remember("shared between connections", cluster="prefs", agent="a").memory
    with Ledger.open(store_target, clock=clock) as other:
        assert other.get(m.id).text == "shared between connections"
        other.remember("written by the other", cluster="prefs", agent="b")
    assert ledger.search("written other").total == 1


def test_a_second_process_sees_writes(ledger, store_target):
    m = ledger.remember("shared between processes", cluster="prefs", agent="a").memory
    assert store_sql(store_target, "SELECT text FROM memories WHERE id = ?", (m.id,)) == [("shared between processes",)]
    if not is_pg(store_target):
        assert store_sql(store_target, "PRAGMA journal_mode") == [("wal",)]


def test_timeline_bucket_sum_and_agents(ledger, clock):
    for i in range(7):
        ledger.remember(f"event {i}", cluster="prefs", agent="a" if i % 2 else "b")
        clock.advance(days=3)
    gone = ledger.remember("dropped later", cluster="prefs", agent="a").memory
    ledger.forget([gone.id], agent="a")
    t = ledger.timeline(10)
    assert len(t["counts"]) == 10 and sum(t["counts"]) == ledger.stats()["memories"] == 7
    ledger.recall("event", agent="a")
    agents = {a["id"]: a for a in ledger.agents()["agents"]}
    assert agents["a"]["wrote"] == 3 and agents["b"]["wrote"] == 4 and agents["a"]["hitRate"] == 1.0
    assert ledger.agents()["overlap"] == [{"a": "a", "b": "b", "shared": 4}]


def test_store_without_seed_has_no_clusters(store_target):
    from ledger.store import Store

    with Store(store_target, seed=False) as st:
        assert st.clusters() == []
        with pytest.raises(UnknownCluster):
            st.require_cluster("prefs")


class _TickingClock(FixedClock):
    """A clock that moves forward every time it is read (like the real one, exaggerated)."""

    tick = 0

    def __call__(self) -> int:
        self.now += self.tick
        return self.now


def test_export_is_one_consistent_snapshot_while_time_moves(store_target):
    """Export pages through the ranking; strengths move with time, so every page must be
    ranked at the same instant or rows repeat and others go missing."""
    clock = _TickingClock(T0)
    with Ledger.open(store_target, clock=clock) as led:
        with led.store.atomic():
            for i in range(40):
                led.store.insert_claim(f"fact {i}", "prefs", "a", clock.now)
                clock.advance(days=5)
        led.ingest_chunks("doc.md", [f"chunk {i}" for i in range(20)], cluster="prefs", agent="a", trust=0.4)
        clock.tick = 15 * DAY_MS  # claims decay through the chunks' constant 0.4 while exporting
        out = [m.id for m in led.export("", batch=10)]
        assert len(out) == len(set(out)) == 60
        out = [m.id for m in led.export("fact", batch=7)]
        assert len(out) == len(set(out)) == 40


def test_remembering_the_same_fact_again_corroborates_instead_of_copying(ledger):
    first = ledger.remember("Staging deploys need the VPN", cluster="proc", agent="claude").memory
    again = ledger.remember("  staging deploys   need the VPN ", cluster="proc", agent="codex")
    assert again.duplicate and again.memory.id == first.id
    assert set(again.memory.readers) == {"claude", "codex"}
    assert again.memory.strength > first.strength  # a second agent corroborates
    assert ledger.search("staging").total == 1
    assert ledger.events(1)[0].op == "memory.corroborate"
    # another cluster is another claim
    assert not ledger.remember("Staging deploys need the VPN", cluster="code", agent="codex").duplicate


@pytest.mark.parametrize("old,new", [
    ("app.cfg sets PORT to 8080", "app.cfg sets PORT to 9090"),  # a number (issue 12's example)
    ("The project requires Python 3.11 for its type hints", "The project requires Python 3.12 for its type hints"),  # version
    ("The CLI entry point lives in src/ledger/cli/app.py", "The CLI entry point lives in src/ledger/cli/main.py"),  # path
    ("Database migrations are approved by Alice before each release", "Database migrations are approved by Bob before each release"),
])
@pytest.mark.parametrize("keyed", [False, True])
def test_remembering_a_changed_value_is_a_new_claim_and_a_candidate(ledger, tmp_path, old, new, keyed):
    files = [file_key(tmp_path / "app.cfg")] if keyed else []
    a = ledger.remember(old, cluster="code", agent="claude", files=files)
    b = ledger.remember(new, cluster="code", agent="claude", files=files)
    assert not b.duplicate and b.memory.id != a.memory.id
    assert ledger.search("", kind="claim").total == 2
    assert len(b.proposed) == 1
    (cand,) = ledger.candidates(5)
    assert {cand.a.id, cand.b.id} == {a.memory.id, b.memory.id}


def test_remembering_many_facts_differing_in_numbers_keeps_every_one(ledger):
    for i in range(25):
        assert not ledger.remember(f"service {i} listens on port {8000 + i}", cluster="code", agent="w").duplicate
    assert ledger.search("", kind="claim", limit=100).total == 25


def test_duplicates_are_looked_for_only_under_the_same_file_keys(ledger, tmp_path):
    text = "The loader reads its settings from the environment"
    a = ledger.remember(text, cluster="code", agent="claude", files=[file_key(tmp_path / "a.py")])
    assert not ledger.remember(text, cluster="code", agent="codex", files=[file_key(tmp_path / "b.py")]).duplicate
    assert not ledger.remember(text, cluster="code", agent="codex").duplicate  # no file keys: another claim
    again = ledger.remember(text + ".", cluster="code", agent="codex", files=[file_key(tmp_path / "a.py")])
    assert again.duplicate and again.memory.id == a.memory.id and set(again.memory.readers) == {"claude", "codex"}


@pytest.mark.parametrize("bad", ["bad \udc80 surrogate", "nul \x00 byte", "x" * 20_001, "   "])
def test_claim_text_is_validated_on_write_and_edit(ledger, bad):
    with pytest.raises(InvalidInput):
        ledger.remember(bad, cluster="code", agent="a")
    m = ledger.remember("A fine claim", cluster="code", agent="a").memory
    with pytest.raises(InvalidInput):
        ledger.update(m.id, text=bad)
    assert ledger.get(m.id).text == "A fine claim"


def test_recall_needs_something_to_look_for(ledger):
    ledger.remember("A fine claim", cluster="code", agent="a")
    for empty in ("", "   "):
        with pytest.raises(InvalidInput, match="What should I recall"):
            ledger.recall(empty, agent="a")
    for bare in ("cluster:", "agent:"):  # a bare key is the word, not dropped: it matches no claim here
        res = ledger.recall(bare, agent="a")
        assert res.total == 0 and [w["kind"] for w in res.warnings()] == ["empty-filter"]
    assert ledger.recall("cluster:code", agent="a").total == 1


@pytest.mark.sqlite_only  # reads the SQLite file itself
def test_sqlite_errors_leave_the_store_as_ledger_errors(db_file, clock, tmp_path):
    """No sqlite3 error crosses the store's boundary: a broken table (here dropped behind
    the store's back) surfaces as StoreUnavailable with a reason and SQLite's text."""
    from ledger.errors import StoreUnavailable

    with Ledger.open(db_file, clock=clock) as led:
        led.remember("CI runs on Python 3.11", cluster="code", agent="a")
    raw = sqlite3.connect(db_file)
    raw.execute("DROP TABLE events")
    raw.commit()
    raw.close()
    with Ledger.open(db_file, clock=clock) as led:
        with pytest.raises(StoreUnavailable) as err:
            led.remember("Deploys go out on Tuesdays", cluster="proc", agent="a")
        assert err.value.reason == "error" and "no such table: events" in err.value.detail
        assert not isinstance(err.value, sqlite3.Error) and isinstance(err.value.__cause__, sqlite3.Error)
        with pytest.raises(StoreUnavailable):
            led.stats()
        with pytest.raises(StoreUnavailable):
            led.events(5)


def test_facets_and_agent_activity_equal_a_per_row_count(ledger, clock):
    """Browse facets and the Agents page (bulk queries over covering indexes, issue 14)
    equal counts made row by row in Python, dropped memories and their readers left out."""
    import random

    rnd = random.Random(5)
    agents = ["ann", "bob", "cy", "dee"]
    ids = []
    for i in range(120):
        m = ledger.remember(f"fact {i} about {rnd.choice(['deploys', 'caches', 'billing'])} number {i}",
                            cluster=rnd.choice(["code", "proc", "money"]), agent=rnd.choice(agents)).memory
        ids.append(m.id)
    for _ in range(60):
        ledger.store.count_read(rnd.sample(ids, rnd.randint(1, 8)), rnd.choice(agents), clock())
    for mid in rnd.sample(ids, 15):
        ledger.forget([mid], agent="ann")
    for mid in rnd.sample(ids, 5):
        ledger.review(mid, "pin")
    live = {r[0]: r[1:] for r in store_sql(ledger.path, "SELECT id, cluster_id, kind, origin, pinned, writer FROM memories "
                                                          "WHERE deleted_at IS NULL")}
    readers = [(m, a) for m, a in store_sql(ledger.path, "SELECT memory_id, agent_id FROM memory_readers") if m in live]
    f = ledger.facets()
    assert sum(f["cluster"].values()) == len(live)
    for c in {v[0] for v in live.values()}:
        assert f["cluster"][c] == sum(v[0] == c for v in live.values())
    assert f["flags"]["pinned"] == sum(bool(v[3]) for v in live.values())
    assert f["agent"] == {a: n for a in agents if (n := sum(x == a for _, x in readers))}
    act = {a["id"]: a for a in ledger.agents()["agents"]}
    for a in agents:
        assert act[a]["wrote"] == sum(v[4] == a for v in live.values())
        mine = {}
        for m, x in readers:
            if x == a:
                mine[live[m][0]] = mine.get(live[m][0], 0) + 1
        assert {t["cluster"]: t["count"] for t in act[a]["top"]} == dict(sorted(mine.items(), key=lambda kv: -kv[1])[:4])
    by_mem = {}
    for m, a in readers:
        by_mem.setdefault(m, set()).add(a)
    pairs = {}
    for s in by_mem.values():
        for a in s:
            for b in s:
                if a < b:
                    pairs[(a, b)] = pairs.get((a, b), 0) + 1
    assert {(p["a"], p["b"]): p["shared"] for p in ledger.agents()["overlap"]} == pairs


def test_a_read_only_open_searches(store_target, clock):
    """A reader that opens the store read-only can search, now and ``asof:`` (on
    PostgreSQL search's scratch table is made before the session turns read-only)."""
    with Ledger.open(store_target, clock=clock) as led:
        mid = led.remember("The staging VPN gateway is vpn2.example.org", cluster="proc", agent="a").memory.id
    clock.advance(ms=60_000)
    with Ledger.open(store_target, clock=clock, readonly=True) as led:
        for q in ("staging vpn", "gatway", f"vpn asof:{iso(clock())}"):
            assert [m.id for m in led.search(q).hits] == [mid], q
        assert not led.search("zebra").hits
