"""Which facts a session was already shown, and which it had counted as used
(``store/watch.py`` ``shown_in_session``, ``counted_in_session``): an injection counts
a fact as used only the first time its session is shown it settled (docs/store.md
"Strength"). Both used to read and parse every earlier injection of the session on each
hook call; they are now a primary-key lookup per fact in ``injection_facts`` (migration
``m023_injection_facts``), with the same answers.

Real stores on both engines, real ``ledger hook`` processes, the real CLI for the
export/import round trip."""

from __future__ import annotations

import json

import pytest
from conftest import BOTH_ENGINES, T0, store_sql
from fakes.hooks import context_of, handle, pre_read, run_hook

from ledger.filekeys import file_key
from ledger.service import Ledger
from ledger.store import watch as W

ENGINES = BOTH_ENGINES


def _old_shown(conn, key: str, column: str = "memory_ids") -> set[str]:
    """The previous reading: every injection row of the session, its JSON list parsed."""
    out: set[str] = set()
    for (ids,) in conn.execute(f"SELECT {column} FROM injections WHERE session = ?", (key,)):
        try:
            out.update(i for i in json.loads(ids) if isinstance(i, str))
        except (TypeError, ValueError):
            continue
    return out


def _old_counted(conn, key: str) -> set[str]:
    return _old_shown(conn, key, "COALESCE(counted_ids, memory_ids)")


def _facts(led, proj, n: int) -> tuple[list[str], list]:
    files = []
    for i in range(n):
        f = proj / f"mod{i}.py"
        f.write_text(f"X = {i}\n")
        files.append(f)
    ids = [led.remember(f"mod{i}.py sets X to {i}", cluster="code", agent="alice", files=[file_key(f)]).memory.id
           for i, f in enumerate(files)]
    return ids, files


def test_shown_in_session_answers_as_the_parsed_injections_did(ledger, store_target, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    ids, files = _facts(ledger, proj, 6)
    now = T0 + 60_000
    # two sessions, interleaved, each touching some of the files (two at once sometimes)
    for n, (session, touched) in enumerate([("a", [0]), ("b", [1, 2]), ("a", [3]), ("a", [0]), ("b", [4])]):
        for i in touched:
            now += 1000
            handle(pre_read(files[i], cwd=proj, session=session), db=store_target, now=now)
    # a file that changed since its fact was learned: shown "may be stale", not counted
    files[5].write_text("X = 55\n")
    now += 1000
    handed = handle(pre_read(files[5], cwd=proj, session="a"), db=store_target, now=now)
    assert "may be stale" in context_of(handed)
    conn = ledger.store._conn
    for key in ("claude-code:a", "claude-code:b", "claude-code:nobody"):
        assert W.shown_in_session(conn, key, ids + ["m_unknown"]) == _old_shown(conn, key)
        assert W.counted_in_session(conn, key, ids + ["m_unknown"]) == _old_counted(conn, key)
        assert W.shown_in_session(conn, key, []) == W.counted_in_session(conn, key, []) == set()
    assert _old_counted(conn, "claude-code:a") == {ids[0], ids[3]}
    assert W.shown_in_session(conn, "claude-code:a", [ids[5]]) == {ids[5]}
    assert _old_shown(conn, "claude-code:a") == {ids[0], ids[3], ids[5]}
    assert _old_shown(conn, "claude-code:b") == {ids[1], ids[2], ids[4]}


def test_a_fact_counts_as_used_once_per_session_across_hook_processes(ledger, store_target, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (fid,), (f,) = _facts(ledger, proj, 1)
    env = {"LEDGER_DB": store_target, "LEDGER_ESCALATE_AFTER": "2"}
    hits, shown = [], []
    for session in ("s1", "s1", "s2"):
        # each call its own step (a PostToolUse in between): s1 is shown the fact gently,
        # then escalated; s2 gently
        p = run_hook("PreToolUse", pre_read(f, cwd=proj, session=session), env=env)
        assert p.returncode == 0
        shown.append("sets X to 0" in context_of(p.stdout.decode()))
        run_hook("PostToolUse", {**pre_read(f, cwd=proj, session=session), "hook_event_name": "PostToolUse",
                                 "tool_response": {"file": {"content": "X = 0"}}}, env=env)
        hits.append(store_sql(store_target, "SELECT hits FROM memories WHERE id = ?", (fid,))[0][0])
    assert shown == [True, True, True]
    assert hits == [1, 1, 2]  # s1's second showing is not a second use; s2's first is
    rows = sorted(store_sql(store_target, "SELECT session, memory_id, counted FROM injection_facts"))
    assert rows == [("claude-code:s1", fid, 1), ("claude-code:s2", fid, 1)]


def test_the_lookup_is_by_primary_key_not_a_scan_of_the_session(tmp_path):
    db = tmp_path / "ledger.db"
    conn = W.open_store(str(db))
    try:
        key = "claude-code:long"
        with W.atomic(conn):
            for step in range(2000):
                conn.execute("INSERT INTO injections (session, step, at, level, memory_ids, paths, chars) "
                             "VALUES (?, ?, ?, 'gentle', ?, '[]', 10)", (key, step, step, json.dumps([f"m_{step}"])))
                W.note_shown(conn, key, [f"m_{step}"])
        for extra in ("", " AND counted = 1"):  # shown_in_session, counted_in_session
            plan = " ".join(str(tuple(r)) for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT memory_id FROM injection_facts WHERE session = ? AND memory_id IN (?, ?)"
                + extra, (key, "m_1", "m_x")))
            assert "PRIMARY KEY" in plan and "SCAN" not in plan, plan
        assert W.shown_in_session(conn, key, ["m_1", "m_1999", "m_x"]) == {"m_1", "m_1999"}
    finally:
        conn.close()


def test_the_migration_fills_the_table_from_the_injections_already_stored(store_target):
    with Ledger.open(store_target) as led:
        conn = led.store._conn
        with led.store.atomic():
            # (session, shown, counted): counted NULL is a row written before counted_ids
            for session, ids, counted in [("k1", ["m_a", "m_b"], None), ("k1", ["m_b", "m_c"], ["m_c"]),
                                          ("k2", ["m_a"], []), ("k2", [], []), ("k3", ["m_d", 7, None], ["m_d", 7]),
                                          ("k4", ["m_e"], []), ("k4", ["m_e"], ["m_e"])]:
                conn.execute("INSERT INTO injections (session, step, at, level, memory_ids, paths, chars, counted_ids) "
                             "VALUES (?, 1, 1, 'gentle', ?, '[]', 10, ?)",
                             (session, json.dumps(ids), None if counted is None else json.dumps(counted)))
    # as a store written before m023: no table, the migration not recorded
    store_sql(store_target, "DROP TABLE injection_facts")
    store_sql(store_target, "DELETE FROM _migrations WHERE name = 'm023_injection_facts'")
    keys = ("k1", "k2", "k3", "k4")
    ask = ["m_a", "m_b", "m_c", "m_d", "m_e", "7"]
    with Ledger.open(store_target) as led:
        conn = led.store._conn
        shown = {k: W.shown_in_session(conn, k, ask) for k in keys}
        counted = {k: W.counted_in_session(conn, k, ask) for k in keys}
        assert shown == {k: _old_shown(conn, k) for k in keys}
        assert counted == {k: _old_counted(conn, k) for k in keys}
        assert shown == {"k1": {"m_a", "m_b", "m_c"}, "k2": {"m_a"}, "k3": {"m_d"}, "k4": {"m_e"}}
        assert counted == {"k1": {"m_a", "m_b", "m_c"}, "k2": set(), "k3": {"m_d"}, "k4": {"m_e"}}


def test_a_malformed_list_stored_by_hand_does_not_stop_the_sqlite_migration(tmp_path):
    db = tmp_path / "ledger.db"
    with Ledger.open(db):
        pass
    for ids in ('["m_a"]', "{bad", '"m_b"', "[1, 2]"):
        store_sql(db, "INSERT INTO injections (session, step, at, level, memory_ids, paths, chars) "
                      "VALUES ('k', 1, 1, 'gentle', ?, '[]', 1)", (ids,))
    store_sql(db, "DROP TABLE injection_facts")
    store_sql(db, "DELETE FROM _migrations WHERE name = 'm023_injection_facts'")
    with Ledger.open(db) as led:
        assert W.shown_in_session(led.store._conn, "k", ["m_a", "m_b"]) == {"m_a"}


def test_an_imported_session_does_not_count_its_shown_facts_again(cli, store_target, new_store, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    with Ledger.open(store_target) as led:
        (fid,), (f,) = _facts(led, proj, 1)
    assert "sets X to 0" in context_of(handle(pre_read(f, cwd=proj, session="s"), db=store_target, now=T0 + 60_000))
    rc, out, err = cli("export", db=store_target)
    assert rc == 0, err
    dump = tmp_path / "all.jsonl"
    dump.write_text(out)
    dst = new_store("dst")
    rc, out, err = cli("import", str(dump), "--json", db=dst)
    assert rc == 0, err
    assert json.loads(out)["injections"] == 1
    assert store_sql(dst, "SELECT session, memory_id, counted FROM injection_facts") == [("claude-code:s", fid, 1)]
    with Ledger.open(dst) as led:
        assert W.counted_in_session(led.store._conn, "claude-code:s", [fid]) == {fid}


@pytest.mark.parametrize("n", [1, 501, 1200])
def test_many_ids_in_one_call(store_target, n):
    with Ledger.open(store_target) as led:
        conn = led.store._conn
        ids = [f"m_{i:05d}" for i in range(n)]
        with led.store.atomic():
            W.note_shown(conn, "k", ids[::2] + ids[:1], counted=ids[::4])  # a repeat is one row
        assert W.shown_in_session(conn, "k", ids + ids[:3]) == set(ids[::2])
        assert W.counted_in_session(conn, "k", ids + ids[:3]) == set(ids[::4])
        assert store_sql(store_target, "SELECT count(*) FROM injection_facts")[0][0] == len(ids[::2])
        with led.store.atomic():  # counted later: counted from then on, and never uncounted
            W.note_shown(conn, "k", ids[:3], counted=ids[1:2])
            W.note_shown(conn, "k", ids[:1], counted=[])
        assert W.counted_in_session(conn, "k", ids[:3]) == {ids[0], *ids[1:2]}
