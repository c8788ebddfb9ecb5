"""The per-agent summary kept on write (migration ``m017_agent_summary``, issue 14):
``agent_summary`` (per agent and cluster: live memories written and read) and
``agent_overlap`` (per pair of agents: live memories both read) must equal a count made
from scratch over the memories and their readers after every kind of write: claims,
counted reads, corroboration, soft deletes, merges, cluster moves, batched ingests and
re-ingests (retired chunks stay for ``asof:``), dropped sources, hard deletes of
unfinished ingests, imports, and writers in several processes at once. The backfill of
a store written before m017 is checked against the same count."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

from conftest import BOTH_ENGINES, iso

from ledger.clock import DAY_MS
from ledger.ingest import read_source_file
from ledger.service import Ledger
from ledger.store import migrations
from ledger.store import sources as S

ENGINES = BOTH_ENGINES  # triggers on SQLite, PL/pgSQL functions on PostgreSQL

AGENTS = ("ann", "bob", "cy", "Dee")  # a capital: pairs are ordered bytewise on both engines
CLUSTERS = ("code", "proc", "money")


def recount(led: Ledger) -> tuple[dict, dict]:
    """``({(agent, cluster): (wrote, reads)}, {(a, b): shared})`` counted in Python
    from the rows: the oracle."""
    conn = led.store._conn
    live = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, cluster_id, writer FROM memories WHERE deleted_at IS NULL")}
    summary: dict[tuple[str, str], list[int]] = {}
    for cl, writer in live.values():
        summary.setdefault((writer, cl), [0, 0])[0] += 1
    by_mem: dict[str, set[str]] = {}
    for mid, agent in conn.execute("SELECT memory_id, agent_id FROM memory_readers"):
        if mid in live:
            summary.setdefault((agent, live[mid][0]), [0, 0])[1] += 1
            by_mem.setdefault(mid, set()).add(agent)
    pairs: dict[tuple[str, str], int] = {}
    for agents in by_mem.values():
        for a in agents:
            for b in agents:
                if a.encode() < b.encode():
                    pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return {k: tuple(v) for k, v in summary.items()}, pairs


def kept(led: Ledger) -> tuple[dict, dict]:
    """The maintained tables, rows at zero left out."""
    conn = led.store._conn
    summary = {(a, c): (w, r) for a, c, w, r in conn.execute("SELECT agent_id, cluster_id, wrote, reads FROM agent_summary")
               if w or r}
    pairs = {(a, b): n for a, b, n in conn.execute("SELECT a, b, shared FROM agent_overlap") if n}
    return summary, pairs


def assert_exact(led: Ledger, when: str) -> None:
    want_summary, want_pairs = recount(led)
    got_summary, got_pairs = kept(led)
    assert got_summary == want_summary, f"agent_summary after {when}"
    assert got_pairs == want_pairs, f"agent_overlap after {when}"
    assert all(w >= 0 and r >= 0 for w, r in got_summary.values()) and all(n >= 0 for n in got_pairs.values())


def claims(led: Ledger, rnd: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        out.append(led.remember(f"fact {rnd.randrange(10**9)} about {rnd.choice(['deploys', 'caches', 'billing'])} case {i}",
                                cluster=rnd.choice(CLUSTERS), agent=rnd.choice(AGENTS)).memory.id)
    return out


def test_every_kind_of_write_keeps_the_summary_exact(ledger, clock, tmp_path):
    rnd = random.Random(14)
    ids = claims(ledger, rnd, 40)
    assert_exact(ledger, "claims")
    for _ in range(30):  # counted reads: new readers of live memories
        ledger.store.count_read(rnd.sample(ids, rnd.randint(1, 6)), rnd.choice(AGENTS), clock())
    assert_exact(ledger, "counted reads")
    for mid in rnd.sample(ids, 5):  # a second agent states the same claim
        ledger.store.corroborate(mid, rnd.choice(AGENTS), clock())
    ledger.recall("deploys caches", agent="Dee")
    assert_exact(ledger, "corroboration and recall")

    dropped = rnd.sample(ids, 8)
    ledger.forget(dropped[:4], agent="ann")
    ledger.store.soft_delete_many(dropped[4:], "test", "ann", clock())
    ledger.store.count_read(dropped[:2], "bob", clock())  # a read of a dropped memory counts nowhere
    assert_exact(ledger, "soft deletes")
    alive = [i for i in ids if i not in dropped]
    ledger.bulk("merge", alive[:3], by="cy")  # readers unioned into one, the others dropped
    assert_exact(ledger, "merge")
    for mid in alive[5:10]:
        ledger.update(mid, cluster=rnd.choice(CLUSTERS), by="bob")
    ledger.update(alive[11], text="a new text keeps the counts", cluster="travel", by="bob")
    assert_exact(ledger, "cluster moves")

    # A batched ingest: chunks hidden (deleted_at = 0) until the switch shows them all.
    src = ledger.ingest_chunks("notes.md", [f"chunk {i} about releases" for i in range(30)], cluster="proc", agent="bob")
    chunk_ids = ledger.store.source_memory_ids(src.source_id, "chunk")
    ledger.store.count_read(chunk_ids[:10], "ann", clock())
    assert_exact(ledger, "ingest")
    doc = tmp_path / "deploys.md"
    doc.write_text("# A\n\nStaging needs the VPN.\n\n# B\n\nRollbacks use the previous tag.\n\n# C\n\nThe train leaves Tuesday.\n")
    first = ledger.ingest(read_source_file(doc), cluster="proc", agent="cy", path=str(doc))
    ledger.store.count_read(ledger.store.source_memory_ids(first.source_id, "chunk"), "Dee", clock())
    clock.advance(days=1)
    doc.write_text("# A\n\nStaging needs the VPN.\n\n# C\n\nThe train leaves Monday now.\n\n# D\n\nFreeze on Fridays.\n")
    again = ledger.ingest(read_source_file(doc), cluster="proc", agent="cy", path=str(doc))
    assert again.updated and again.retired
    assert_exact(ledger, "re-ingest")
    # The retired chunk is still what asof: shows for the day before, and counts nowhere live.
    then = {m.text for m in ledger.search(f"train leaves asof:{iso(clock() - DAY_MS // 2)}", mode="keyword").hits}
    now = {m.text for m in ledger.search("train leaves", mode="keyword").hits}
    assert "# C\n\nThe train leaves Tuesday." in then - now
    ledger.drop_source(src.source_id, by="ann")
    assert_exact(ledger, "dropped source")

    # An unfinished ingest (killed after a batch): its hidden chunks are deleted outright.
    hidden = ledger.store.insert_source("half.md", "md", "code", "ann", 10, 0.7, ["x"], clock())
    ledger.store._conn.execute("UPDATE sources SET complete = 0 WHERE id = ?", (hidden[0],))
    ledger.store._conn.execute("UPDATE memories SET deleted_at = ? WHERE source_id = ?", (S.PENDING, hidden[0]))
    assert_exact(ledger, "hidden chunks")
    with ledger.store.atomic():  # a live memory deleted outright (no path does this today; the trigger covers it)
        ledger.store._conn.execute("DELETE FROM memories WHERE id = ?", (alive[20],))
    ledger.store._discard_source(hidden[0])
    assert_exact(ledger, "hard deletes")
    before = kept(ledger)
    with ledger.store.atomic():  # the backfill, run again over the same rows, gives the same tables
        migrations.fill_agent_summary(ledger.store._conn)
    assert kept(ledger) == before


def test_an_import_keeps_the_summary_exact(ledger, clock, tmp_path):
    rnd = random.Random(3)
    src = tmp_path / "src.db"
    with Ledger.open(src, clock=clock) as other:
        ids = claims(other, rnd, 20)
        for _ in range(10):
            other.store.count_read(rnd.sample(ids, 3), rnd.choice(AGENTS), clock())
        other.forget(ids[:3], agent="ann")
        other.ingest_chunks("doc.md", ["one passage", "two passage"], cluster="code", agent="bob")
        # memories only: importing the history lines (events) fails on PostgreSQL ("at IS $1"), apart from this
        records = [r for r in other.export_records() if "record" not in r]
    ledger.import_records(list(enumerate(records, 1)))
    assert_exact(ledger, "import")
    ledger.import_records(list(enumerate(records, 1)))  # again: merged, nothing doubled
    assert_exact(ledger, "a second import")


def test_the_agents_page_and_cluster_counts_read_the_summary(ledger, clock):
    rnd = random.Random(9)
    ids = claims(ledger, rnd, 30)
    for _ in range(20):
        ledger.store.count_read(rnd.sample(ids, 4), rnd.choice(AGENTS), clock())
    ledger.forget(ids[:5], agent="ann")
    summary, pairs = recount(ledger)
    page = ledger.agents()
    by = {a["id"]: a for a in page["agents"]}
    for agent in AGENTS:
        assert by[agent]["wrote"] == sum(w for (a, _), (w, _) in summary.items() if a == agent)
        reads = sorted(((-r, c) for (a, c), (_, r) in summary.items() if a == agent and r), key=lambda x: x)[:4]
        assert by[agent]["top"] == [{"cluster": c, "count": -n} for n, c in reads]
    assert {(p["a"], p["b"]): p["shared"] for p in page["overlap"]} == pairs
    counts = {c.id: c.count for c in ledger.clusters()}
    for cl in CLUSTERS:
        assert counts[cl] == sum(w for (_, c), (w, _) in summary.items() if c == cl)
    assert counts["travel"] == 0


def test_the_migration_fills_the_summary_of_an_older_store(store_target, clock):
    rnd = random.Random(21)
    with Ledger.open(store_target, clock=clock) as led:
        ids = claims(led, rnd, 25)
        for _ in range(15):
            led.store.count_read(rnd.sample(ids, 3), rnd.choice(AGENTS), clock())
        led.forget(ids[:4], agent="bob")
        conn = led.store._conn
        # Back to the schema before m017: no summary, no triggers; then write more.
        with led.store.atomic():
            if getattr(conn, "is_postgres", False):
                for t in ("summary_memory", "summary_memory_deleted"):
                    conn.run(f"DROP TRIGGER {t} ON memories")
                conn.run("DROP TRIGGER summary_reader_removed ON memory_readers")
                conn.run("DROP FUNCTION ledger_summary_memory(), ledger_summary_reader_removed(), "
                         "ledger_summary_add(TEXT, TEXT, TEXT, INTEGER)")
            else:
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                    conn.execute(f"DROP TRIGGER {name}")
            for stmt in ("DROP TABLE agent_summary", "DROP TABLE agent_overlap", "DROP INDEX memories_live_created",
                         "DROP INDEX memories_source_order", "DELETE FROM _migrations WHERE name = 'm017_agent_summary'"):
                conn.execute(stmt)
            # Written as a ledger without m017 writes: no summary to keep.
            for mid in ids[5:9]:
                conn.execute("INSERT OR IGNORE INTO memory_readers (memory_id, agent_id) VALUES (?, 'Dee')", (mid,))
            conn.execute("UPDATE memories SET deleted_at = ? WHERE id IN (?, ?)", (clock(), ids[10], ids[11]))
    with Ledger.open(store_target, clock=clock) as led:  # m017 runs again and fills the summary
        assert_exact(led, "the migration")
        led.store.count_read(ids[12:16], "cy", clock())
        assert_exact(led, "a write after the migration")


WRITER = textwrap.dedent("""
    import random, sys
    from ledger.errors import StoreUnavailable
    from ledger.service import Ledger
    target, seed = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(seed)
    agents = ("ann", "bob", "cy", "Dee")
    with Ledger.open(target) as led:
        ids = [r[0] for r in led.store._conn.execute("SELECT id FROM memories")]
        for i in range(40):
            try:
                x = rnd.random()
                if x < 0.5:
                    led.store.count_read(rnd.sample(ids, 3), rnd.choice(agents), 1)
                elif x < 0.7:
                    ids.append(led.remember(f"writer {seed} fact {i} number {rnd.randrange(10**9)}", cluster="code",
                                            agent=rnd.choice(agents)).memory.id)
                elif x < 0.85:
                    led.store.soft_delete(rnd.choice(ids), "test", "ann", 1)
                else:
                    led.update(rnd.choice(ids), cluster=rnd.choice(("code", "proc", "money")), by="bob")
            except StoreUnavailable:
                pass  # a writer that waited too long: the others carry on
""")


def test_writers_in_several_processes_keep_the_summary_exact(store_target, clock):
    rnd = random.Random(7)
    with Ledger.open(store_target, clock=clock) as led:
        claims(led, rnd, 30)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store_target), str(seed)], stderr=subprocess.PIPE, text=True)
             for seed in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with Ledger.open(store_target, clock=clock) as led:
        assert_exact(led, "concurrent writers")


def test_ingests_inside_a_transaction_count_their_chunks_at_once(ledger, clock, tmp_path):
    """Inside a caller's transaction an ingest and a re-ingest write live chunks at once
    (no hidden batches, no switch): the inserting code counts them."""
    doc = tmp_path / "steps.md"
    doc.write_text("# A\n\nFirst step.\n\n# B\n\nSecond step.\n")
    with ledger.store.atomic():
        first = ledger.ingest(read_source_file(doc), cluster="proc", agent="ann", path=str(doc))
    assert_exact(ledger, "an ingest in a transaction")
    ledger.store.count_read(ledger.store.source_memory_ids(first.source_id, "chunk"), "bob", clock())
    doc.write_text("# A\n\nFirst step.\n\n# C\n\nA third step.\n\n# D\n\nAnd a fourth.\n")
    with ledger.store.atomic():
        again = ledger.ingest(read_source_file(doc), cluster="proc", agent="cy", path=str(doc))
    assert again.updated and again.added == 2 and again.retired == 1
    assert_exact(ledger, "a re-ingest in a transaction")
