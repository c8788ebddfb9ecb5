"""A full disk and a store from a newer ledger have their own error kinds (issue 21):
``disk-full`` (:class:`DiskFull`) and ``newer-store`` (:class:`NewerStore`), both still
:class:`StoreUnavailable`, neither called a ledger bug; a store busy past the wait limit
is ``locked``, not a bug either. Real store files; the full disk is SQLite's own
SQLITE_FULL (``PRAGMA max_page_count``), so it runs without root (the tmpfs scenario in
test_reliability.py is the same with a real disk)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import WriteLock, store_sql
from fakes.hooks import LEDGER_BIN

from ledger.cli.hints import phrase
from ledger.errors import DiskFull, NewerStore, StoreUnavailable, store_unavailable
from ledger.service import Ledger
from ledger.store import connection


def _cli(db, *args):
    return subprocess.run([LEDGER_BIN, *args, "--db", str(db)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": os.environ["LEDGER_HOME"]})


def _fill(led: Ledger) -> DiskFull:
    led.store._conn.execute(f"PRAGMA max_page_count = {led.store._conn.execute('PRAGMA page_count').fetchone()[0] + 2}")
    for i in range(10_000):
        try:
            led.remember(f"Filler fact {i}: the tank {i} holds {i * 3} litres of water today", cluster="code", agent="t")
        except DiskFull as exc:
            return exc
    raise AssertionError("the store never filled up")


@pytest.mark.parametrize("write", ["remember", "ingest", "cluster"])
@pytest.mark.sqlite_only  # fills the SQLite file's page budget (max_page_count); a PostgreSQL server's disk is the server's
def test_a_full_store_raises_disk_full(tmp_path, write):
    with Ledger.open(tmp_path / "full.db") as led:
        exc = _fill(led)
        if write == "ingest":
            with pytest.raises(DiskFull) as info:
                led.ingest_chunks("big.md", [f"Passage {i} about the pumps." for i in range(2000)], cluster="reading",
                                  agent="t")
            exc = info.value
            assert led.sources() == []  # the batches written before the disk filled are gone
        elif write == "cluster":
            with pytest.raises(DiskFull) as info:
                for i in range(200):
                    led.add_cluster(f"Overflow {i} " + "x" * 60, cluster_id=f"overflow-{i}")
            exc = info.value
    assert isinstance(exc, StoreUnavailable) and exc.kind == "disk-full" and exc.reason == "disk-full"
    assert exc.status == 507 and "full" in exc.message
    assert "bug" not in phrase(exc) and "permission" not in phrase(exc)


def test_newer_store_kind_in_the_cli_json_and_the_library(store_target):
    db = store_target
    Ledger.open(db).close()
    store_sql(db, "INSERT INTO _migrations (name, applied_at) VALUES ('m999_from_the_future', 0)")
    for args in (["stats", "--json"], ["remember", "a fact about valves", "--cluster", "code", "--json"],
                 ["recall", "valves", "--json"]):
        p = _cli(db, *args)
        err = json.loads(p.stderr.strip().splitlines()[-1])
        assert p.returncode == 1 and err["kind"] == "newer-store", p.stderr
        assert "newer ledger" in err["error"] and "bug" not in err["error"]
    p = _cli(db, "stats")
    assert p.returncode == 1 and "newer ledger" in p.stderr and "bug" not in p.stderr and "Traceback" not in p.stderr
    for readonly in (False, True):
        with pytest.raises(NewerStore) as info:
            Ledger.open(db, readonly=readonly)
        assert info.value.kind == "newer-store" and info.value.status == 409 and isinstance(info.value, StoreUnavailable)


def test_a_busy_store_is_locked_not_a_bug(store_target, monkeypatch):
    db = store_target
    Ledger.open(db).close()
    holder = WriteLock(db)  # another writer's transaction
    try:
        monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)
        with Ledger.open(db) as led, pytest.raises(StoreUnavailable) as info:
            led.remember("The valve timeout is 30 seconds", cluster="code", agent="t")
    finally:
        holder.release()
    exc = info.value
    assert type(exc) is StoreUnavailable and exc.kind == "store-unavailable" and exc.reason == "locked"
    assert "bug" not in phrase(exc)


def test_store_unavailable_picks_the_class_by_reason():
    assert type(store_unavailable("x", reason="disk-full")) is DiskFull
    assert type(store_unavailable("x", reason="newer-store")) is NewerStore
    assert type(store_unavailable("x", reason="locked")) is StoreUnavailable
    assert store_unavailable("x", reason="disk-full", path="/p").fields() == {"reason": "disk-full", "path": "/p"}
