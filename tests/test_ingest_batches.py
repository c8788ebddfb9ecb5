"""Large ingests commit in batches (issue 21), yet readers see a source whole or not
at all, and a killed or failed ingest leaves nothing behind once the store is opened
again. Real store files and a real ``kill -9``d ingest process."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import is_pg, store_sql

from ledger.errors import UnknownSource
from ledger.service import Ledger
from ledger.store import sources as S

WORKER = str(Path(__file__).with_name("reliability_worker.py"))


def _count(db, sql: str) -> int:
    [(n,)] = store_sql(db, sql)
    return n


def _rows(db: Path) -> dict:
    return {
        "sources": _count(db, "SELECT count(*) FROM sources"),
        "chunks": _count(db, "SELECT count(*) FROM memories WHERE kind = 'chunk'"),
        "fts": _count(db, "SELECT count(*) FROM memories_fts"),  # the text index, on either engine
        "readers": _count(db, "SELECT count(*) FROM memory_readers"),
        "ingests": _count(db, "SELECT count(*) FROM ingests"),
    }


def _reader_view(db: Path) -> tuple[int, int, int]:
    """(sources, chunks in them, search hits) as any reader sees them."""
    with Ledger.open(db, readonly=True) as led:
        srcs = led.sources()
        return len(srcs), sum(s.chunk_count for s in srcs), len(led.search("pump curve", limit=50).hits)


def _start_ingest_and_kill(db: Path, chunks: int) -> None:
    p = subprocess.Popen([sys.executable, WORKER, "ingest", str(db), str(chunks), "killed"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        if _count(db, "SELECT count(*) FROM memories WHERE kind = 'chunk'") > 500:
            break
        time.sleep(0.01)
    assert p.poll() is None, "the ingest finished before it could be killed: raise the chunk count"
    p.send_signal(signal.SIGKILL)
    p.communicate()


def test_a_killed_ingest_is_invisible_then_removed_on_the_next_open(store_target):
    db = store_target
    with Ledger.open(db) as led:
        kept = led.ingest_chunks("kept.md", ["The pump curve of the kept manual.", "Second passage."], cluster="reading",
                                 agent="a").source_id
    _start_ingest_and_kill(db, 200_000)
    before = _rows(db)
    assert before["ingests"] == 1 and before["chunks"] > 500  # batches were committed ...
    assert _reader_view(db) == (1, 2, 2)  # ... yet readers see only the finished source (2 hits: one by context)
    with Ledger.open(db) as led:  # a writable open removes what the dead process left
        assert [s.id for s in led.sources()] == [kept]
    after = _rows(db)
    assert after == {"sources": 1, "chunks": 2, "fts": 2, "readers": 2, "ingests": 0}
    if not is_pg(db):
        assert store_sql(db, "PRAGMA integrity_check") == [("ok",)]


def test_an_ingest_that_fails_midway_removes_what_it_wrote(store_target, monkeypatch):
    db = store_target
    monkeypatch.setattr(S, "BATCH_MS", 1)  # many batches
    monkeypatch.setattr(S, "YIELD_MS", 0)
    with Ledger.open(db) as led:
        real = led.store._index
        calls = {"n": 0}

        def failing(seq, text, ctx=""):
            calls["n"] += 1
            if calls["n"] == 3000:
                raise KeyboardInterrupt  # as a Ctrl-C in the middle of a batch would
            return real(seq, text, ctx)

        monkeypatch.setattr(led.store, "_index", failing)
        with pytest.raises(KeyboardInterrupt):
            led.ingest_chunks("big.md", [f"Passage {i} on the pump curve." for i in range(5000)], cluster="reading", agent="a")
        assert led.sources() == []
    assert _rows(db) == {"sources": 0, "chunks": 0, "fts": 0, "readers": 0, "ingests": 0}


def test_an_ingest_of_a_live_process_is_left_alone_and_hidden(store_target, monkeypatch):
    """Another process's unfinished ingest (its pid runs) is neither shown nor removed;
    one silent for longer than STALE_MS is removed even when its pid cannot be checked."""
    db = store_target
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Ledger.open(db) as led:
            sid = led.ingest_chunks("a.md", ["The pump curve, passage one.", "Passage two."], cluster="reading",
                                    agent="a").source_id
        # make it look unfinished, owned by the sleeper
        store_sql(db, "UPDATE sources SET complete = 0 WHERE id = ?", (sid,))
        store_sql(db, "UPDATE memories SET deleted_at = 0 WHERE source_id = ?", (sid,))
        store_sql(db, "INSERT INTO ingests (source_id, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)",
                  (sid, S._host(), sleeper.pid, S._wall_ms(), S._wall_ms()))
        with Ledger.open(db) as led:
            assert led.sources() == [] and not led.search("pump curve").hits
            with pytest.raises(UnknownSource):
                led.source_detail(sid)
            assert led.stats()["sources"] == 0
        assert _rows(db)["chunks"] == 2  # still there: its process may finish it
        store_sql(db, "UPDATE ingests SET host = 'elsewhere', beat_at = ?", (S._wall_ms() - S.STALE_MS - 1,))
        Ledger.open(db).close()
        assert _rows(db) == {"sources": 0, "chunks": 0, "fts": 0, "readers": 0, "ingests": 0}
    finally:
        sleeper.kill()
        sleeper.wait()


def test_small_ingests_and_ingests_inside_a_transaction_are_whole_at_once(store_target):
    db = store_target
    with Ledger.open(db) as led:
        one = led.ingest_chunks("one.md", ["A single pump curve passage."], cluster="reading", agent="a")
        with led.store.atomic():  # a caller's transaction: no batches, no ingests row
            two = led.ingest_chunks("two.md", ["Another pump curve passage.", "And more."], cluster="reading", agent="a")
        assert {s.id: s.chunk_count for s in led.sources()} == {one.source_id: 1, two.source_id: 2}
        assert len(led.search("pump curve").hits) == 3  # one by its neighbour context
    assert _rows(db)["ingests"] == 0
