"""``ledger export`` / ``ledger import`` carry the store's history, not only memories
(fresh-user defect: conflicts, the log, checkpoints and observations were lost in a
move). Real stores, the real CLI, real hook processes for the observations."""

from __future__ import annotations

import json

import pytest
from conftest import spool_settled, store_exists, store_sql
from fakes.hooks import post_bash, run_hook

from ledger.errors import StoreUnavailable
from ledger.service import Ledger


def _rows(db, sql: str) -> list[tuple]:
    return store_sql(db, sql)


HISTORY = {
    "conflicts": "SELECT id, kind, cluster_id, a, b, detector, note, status, created_at, resolved_at, resolution, resolved_by "
                 "FROM conflicts ORDER BY id",
    "events": "SELECT at, agent, op, memory_id, detail, ms FROM events WHERE op != 'import' ORDER BY at, id",
    "sessions": "SELECT key, harness, session_id, project, cwd, agent, started_at, steps FROM watch_sessions ORDER BY key",
    "observations": "SELECT session, step, at, tool, input, output, ok, duration_ms, tool_use_id FROM observations "
                    "ORDER BY session, step",
    "observation_files": "SELECT o.tool_use_id, f.path FROM observation_files f JOIN observations o ON o.id = f.observation_id "
                         "ORDER BY 1, 2",
    "checkpoints": "SELECT session, project, at, event, branch, content FROM checkpoints ORDER BY at, id",
}


def _seed(db, proj) -> dict:
    with Ledger.open(db) as led:
        a = led.remember("The cache TTL is 300 seconds", cluster="code", agent="claude").memory.id
        b = led.remember("The cache TTL is 600 seconds", cluster="code", agent="codex", supersedes=a)
        c = led.remember("Staging deploys need the VPN", cluster="proc", agent="claude").memory.id
        d = led.remember("Staging deploys do not need the VPN", cluster="proc", agent="codex").memory.id
        for cand in led.candidates(10):
            led.judge(cand.id, "conflict", agent="claude", kind="direct contradiction", detector=0.9, note="one is stale")
        open_ = [x for x in led.conflicts() if x.status == "open"]
        assert open_, "the proposer should have paired a contradiction"
        led.resolve(open_[0].id, "a", by="human")
        led.store.watch.add_checkpoint(session="claude-code:s9", project=str(proj), event="PreCompact", branch="main",
                                       content="# Checkpoint\n\n- edited app.py\n", now=led.clock())
    for i in range(3):
        p = run_hook("PostToolUse", post_bash(f"pytest -k case{i}", stdout=f"{i} passed", cwd=proj, session="s9"),
                     env={"LEDGER_DB": db})
        assert p.returncode == 0
    spool_settled(db)  # on PostgreSQL the calls went to the spool first
    return {"a": a, "b": b.memory.id, "c": c, "d": d}


def test_a_whole_store_export_round_trips_its_history(cli, tmp_path, new_store):
    proj = tmp_path / "proj"
    proj.mkdir()
    src = new_store("src")
    _seed(src, proj)
    before = {k: _rows(src, q) for k, q in HISTORY.items()}
    assert all(before[k] for k in ("conflicts", "events", "sessions", "observations", "checkpoints")), before
    rc, out, err = cli("export", db=src)
    assert rc == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    kinds = {r.get("record", "memory") for r in lines}
    assert kinds >= {"memory", "conflict", "event", "session", "observation", "checkpoint"}, kinds
    f = tmp_path / "all.jsonl"
    f.write_text(out)
    dst = new_store("dst")
    rc, out, err = cli("import", str(f), "--json", db=dst)
    assert rc == 0, err
    r = json.loads(out)
    assert r["conflicts"] == len(before["conflicts"]) and r["observations"] == len(before["observations"])
    assert r["checkpoints"] == 1 and r["events"] == len(before["events"])
    after = {k: _rows(dst, q) for k, q in HISTORY.items()}
    assert after == before
    # importing the same file again adds nothing
    rc, out, err = cli("import", str(f), "--json", db=dst)
    again = json.loads(out)
    assert {k: again[k] for k in ("imported", "conflicts", "events", "observations", "checkpoints")} == dict.fromkeys(
        ("imported", "conflicts", "events", "observations", "checkpoints"), 0), again
    assert {k: _rows(dst, q) for k, q in HISTORY.items()} == before
    # the review queue and the checkpoint read back through the library as in the source store
    with Ledger.open(src) as a, Ledger.open(dst) as b:
        assert [c.to_dict() for c in a.conflicts()] == [c.to_dict() for c in b.conflicts()]
        assert a.checkpoints(project=str(proj)) == b.checkpoints(project=str(proj))


def test_a_filtered_export_carries_the_conflicts_among_its_memories_only(cli, tmp_path, new_store):
    proj = tmp_path / "proj"
    proj.mkdir()
    src = new_store("src")
    ids = _seed(src, proj)
    rc, out, err = cli("export", "cluster:code", db=src)
    lines = [json.loads(x) for x in out.splitlines()]
    conflicts = [r for r in lines if r.get("record") == "conflict"]
    assert conflicts and all({c["a"], c["b"]} <= {ids["a"], ids["b"]} for c in conflicts)
    assert {r.get("record") for r in lines} == {None, "conflict"}  # no log, sessions or checkpoints


def test_a_conflict_follows_a_claim_merged_into_an_equal_one(cli, tmp_path, new_store):
    """The destination already holds the same claim under another id: the conflict is
    attached to that id."""
    proj = tmp_path / "proj"
    proj.mkdir()
    src = new_store("src")
    _seed(src, proj)
    dst = new_store("dst")
    with Ledger.open(dst) as led:
        mine = led.remember("The cache TTL is 300 seconds", cluster="code", agent="me").memory.id
    rc, out, err = cli("export", db=src)
    f = tmp_path / "all.jsonl"
    f.write_text(out)
    rc, out, err = cli("import", str(f), "--json", db=dst)
    assert rc == 0, err
    sides = {x for row in _rows(dst, "SELECT a, b FROM conflicts") for x in row}
    assert mine in sides


def test_a_bad_history_line_changes_nothing_and_names_the_line(cli, tmp_path, new_store):
    f, d = tmp_path / "bad.jsonl", new_store("d")
    good = {"id": "m_x1", "text": "A fact", "kind": "claim", "origin": "chat", "clusterId": "code", "writer": "a",
            "createdAt": 1, "lastReadAt": 1, "hits": 0}
    for bad, needle in (({"record": "event", "agent": "a", "op": "x"}, "'at'"),
                        ({"record": "teleport", "x": 1}, "unknown record 'teleport'")):
        f.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        rc, out, err = cli("import", str(f), db=d)
        assert rc == 1 and "line 2" in err and needle in err and "Nothing was imported" in err, err
    assert not store_exists(d) or _rows(d, "SELECT count(*) FROM memories") == [(0,)]


@pytest.mark.sqlite_only  # crosses engines itself: SQLite -> PostgreSQL -> SQLite
def test_a_whole_store_moves_to_postgresql_and_back_with_its_history(cli, tmp_path, pg_url):
    """Issue 20: ``ledger export | ledger import -`` into PostgreSQL failed on the
    history (``col IS ?``) after the memories were saved, and said "Nothing was saved".
    SQLite -> PostgreSQL -> SQLite keeps conflicts, the log, links, sessions,
    observations, checkpoints and a dropped side, through the real commands."""
    proj = tmp_path / "proj"
    proj.mkdir()
    src = tmp_path / "src.db"
    ids = _seed(src, proj)
    rc, _, err = cli("link", ids["c"], ids["d"], db=src)
    assert rc == 0, err
    rc, _, err = cli("forget", ids["d"], db=src)
    assert rc == 0, err
    before = {k: _rows(src, q) for k, q in HISTORY.items()}
    rc, out, err = cli("export", db=src)
    assert rc == 0, err
    rc, moved, err = cli("import", "-", "--json", db=pg_url, input=out)
    assert rc == 0, err
    r = json.loads(moved)
    assert r["conflicts"] == len(before["conflicts"]) and r["events"] == len(before["events"]) and r["links"] == 1
    assert r["observations"] == len(before["observations"]) and r["checkpoints"] == 1
    rc, again, err = cli("import", "-", "--json", db=pg_url, input=out)
    assert rc == 0, err
    assert {k: json.loads(again)[k] for k in ("imported", "conflicts", "events", "observations")} == dict.fromkeys(
        ("imported", "conflicts", "events", "observations"), 0)
    rc, out2, err = cli("export", db=pg_url)
    assert rc == 0, err
    back = tmp_path / "back.db"
    rc, _, err = cli("import", "-", db=back, input=out2)
    assert rc == 0, err
    assert {k: _rows(back, q) for k, q in HISTORY.items()} == before
    assert _rows(back, "SELECT a, b FROM links ORDER BY 1") == _rows(src, "SELECT a, b FROM links ORDER BY 1")
    assert _rows(back, "SELECT id, deleted_at FROM memories ORDER BY id") == _rows(
        src, "SELECT id, deleted_at FROM memories ORDER BY id")


def test_an_import_that_fails_part_way_saves_nothing(store_target, tmp_path):
    """A failure after memories, links and history lines were written (here the input
    itself breaks off): the whole import is rolled back, so the CLI's "Nothing was
    saved" is true, on both engines."""
    src = tmp_path / "src.db"
    _seed(src, tmp_path)
    with Ledger.open(src) as led:
        records = [(i, json.loads(x)) for i, x in enumerate(led.export_lines(), 1)]
    assert any("record" in r for _, r in records) and len(records) > 4

    def broken():
        yield from records
        raise StoreUnavailable("The store refused the operation: test. Nothing was saved.")

    with Ledger.open(store_target) as led:
        with pytest.raises(StoreUnavailable):
            led.import_records(broken(), batch=2)
        assert led.store._conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        assert led.store._conn.execute("SELECT count(*) FROM conflicts").fetchone()[0] == 0
        assert led.store._conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0
        assert led.import_records(iter(records))["imported"] == 4  # and again, whole

