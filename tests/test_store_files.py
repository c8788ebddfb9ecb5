"""Defects a fresh-user pass found in how the store lives on disk, each through real
``ledger`` processes on real SQLite files: a new store is one file, a store made
writable again is writable, damage is reported, a mistyped ``--db`` is not an empty
store, ``--db`` before the command, and an interrupted import says what it kept."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess

import pytest
from conftest import LEDGER_BIN, Cli
from test_cli import fail, ok, remember

from ledger.store.migrations import MIGRATIONS

pytestmark = pytest.mark.sqlite_only


# ------------------------------------------------------------ 1. a new store is one file
def _tables_and_migrations(path) -> tuple[set[str], int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        n = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0] if "_migrations" in tables else 0
        return tables, n
    finally:
        conn.close()


@pytest.mark.parametrize("verb", [("remember", "Uses pytest", "--cluster", "code"), ("clusters",)])
def test_a_new_store_file_alone_holds_the_schema(cli, tmp_path, verb):
    """The agent verbs end with os._exit (no close, no checkpoint): creating a store
    checkpoints the migrations' writes into the file, so copying the .db alone gives a
    store with every table and migration, not an empty file."""
    ok(*cli(*verb))
    copy = tmp_path / "copy" / "ledger.db"
    copy.parent.mkdir()
    shutil.copy(cli.db, copy)  # the .db alone, without its -wal/-shm
    tables, n = _tables_and_migrations(copy)
    assert n == len(MIGRATIONS) and {"memories", "clusters"} <= tables, (n, tables)
    # the copy opens as a current store: its clusters are there
    assert "prefs" in ok(*cli("clusters", db=copy))


def test_an_ordinary_write_keeps_the_fast_exit_and_loses_nothing(cli):
    """After creation, a remember goes to the WAL (no checkpoint per call); the next
    process sees it, and `ledger export` carries it."""
    ok(*cli("clusters"))
    mid = remember(cli, "Deploys go out on Tuesdays", "proc")
    assert mid in ok(*cli("export"))


# ------------------------------------------------ 4. --db before the command, and its help
@pytest.mark.parametrize("verb", [("recall", "CI"), ("search", "CI"), ("show", "{mid}"), ("export", "cluster:proc"),
                                  ("stats",)], ids=lambda v: v[0])
def test_db_before_the_command_is_the_same_store(cli, verb):
    """`ledger --db X recall CI` (the top-level help names --db) works as `ledger recall CI
    --db X`, on the fast path (recall, search, show) and the click app alike."""
    mid = remember(cli, "CI runs on GitHub Actions", "proc")
    args = [a.format(mid=mid) for a in verb]
    after = ok(*cli(*args))
    assert ok(*cli("--db", str(cli.db), *args, db=None)).count(mid[-6:]) == after.count(mid[-6:])
    assert ok(*cli(f"--db={cli.db}", *args, db=None)).count(mid[-6:]) == after.count(mid[-6:])
    if verb[0] != "stats":
        assert "CI runs on GitHub Actions" in after


def test_db_help_names_urls_and_config(cli):
    for verb in ("recall", "stats", "import"):
        out = ok(*cli(verb, "--help", db=None))
        flat = " ".join(out.split())
        assert "postgresql://" in flat and "store.db" in flat, out


# --------------------------------------------- 5. a missing store is not read as an empty one
READ_VERBS = [("recall", "foo"), ("search", "foo"), ("show", "m_abc"), ("stats",), ("export",), ("sources",),
              ("conflicts",), ("review", "--plain")]


@pytest.mark.parametrize("verb", READ_VERBS, ids=lambda v: v[0])
def test_reading_a_missing_store_says_so_and_creates_nothing(cli, tmp_path, verb):
    """Read verbs on a missing store file answer from an empty store in memory, warn on
    stderr naming the path and how to create it, and create no file or folder."""
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli(*verb, db=target)
    if verb[0] == "show":
        # The error stays one line, and blames the missing store, not the id ("It may have
        # been mistyped" sent the user hunting for a typo in a good id).
        assert rc == 1 and err.count("\n") == 1 and "m_abc" in err and "mistyped" not in err, err
        assert err.startswith(f"✕ No store at {target}: nothing to read, and nothing was created"), err
    else:
        assert rc == 0 and f"⚠ No store at {target}" in err and "ledger remember" in err, err
    assert not (tmp_path / "nonexistent-dir").exists()
    # the same through $LEDGER_DB, with --json a JSON warning
    rc, out, err = cli(*verb, "--json", db=None, env={"LEDGER_DB": str(target)})
    if verb[0] != "show":
        assert rc == 0 and '"kind": "no-store"' in err, err
    else:
        assert rc == 1 and json.loads(err)["kind"] == "unknown-memory" and str(target) in err, err
    if verb[0] == "search":  # the body says it too: empty because there is no store
        [w] = json.loads(out)["warnings"]
        assert w == {**json.loads(err), "kind": "no-store", "path": str(target)}, (w, err)
    if verb[0] == "stats":  # the store asked for is named, not the empty stand-in
        assert json.loads(out)["db"] == str(target), out
    assert not (tmp_path / "nonexistent-dir").exists()


#: Writes that act on an id of the store: on a store that does not exist the id cannot be
#: there. Each created the store and its folders, then said the id may have been mistyped.
ID_WRITES = [("forget", "m_abc", "m_abc"), ("link", "m_abc", "m_def", "m_abc"),
             ("judge", "cc_abc", "--verdict", "conflict", "cc_abc"), ("resolve", "cf_abc", "a", "cf_abc"),
             ("sources", "trust", "s_abc", "0.5", "s_abc"), ("sources", "drop", "s_abc", "s_abc")]


@pytest.mark.parametrize("verb", ID_WRITES, ids=lambda v: " ".join(v[:2]))
def test_a_write_on_an_id_in_a_missing_store_creates_nothing_and_names_the_store(cli, tmp_path, verb):
    *args, the_id = verb
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli(*args, db=target)
    assert rc == 1 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith(f"✕ No store at {target}: nothing to read, and nothing was created, so {the_id} is not "
                          "there."), err
    assert "mistyped" not in err and "--db" in err, err
    rc, out, err = cli(*args, "--json", db=None, env={"LEDGER_DB": str(target)})
    e = json.loads(err)
    assert rc == 1 and e["kind"].startswith("unknown-") and str(target) in e["error"], err
    assert not (tmp_path / "nonexistent-dir").exists()


def test_writing_still_creates_the_store(cli, tmp_path):
    target = tmp_path / "new" / "x.db"
    mid = remember(Cli(target), "Prefers metric units", "prefs")
    assert target.is_file() and mid in ok(*cli("recall", "metric", db=target))


@pytest.mark.parametrize("verb", [("recall", "foo"), ("stats",), ("remember", "x", "--cluster", "prefs")],
                         ids=lambda v: v[0])
def test_an_empty_db_is_an_error_not_the_default_store(cli, tmp_path, verb):
    home = tmp_path / "home"
    msg = fail(*cli(*verb, "--db", "", db=None, env={"LEDGER_HOME": str(home)}))
    assert "--db" in msg and "empty" in msg, msg
    assert not home.exists()


# ------------------------------- 2. a store made writable again, with a read-only -shm left
def test_a_read_only_shm_left_behind_is_named(cli):
    """The store file is writable but its -shm (left by a read-only open, mode 0444) is
    not: the write fails naming the -shm and what to do, and doctor says the same.
    Root ignores chmod, so the -shm is made read-only by a private read-only mount."""
    from readonly import require_ro_mounts, ro_prefix

    require_ro_mounts()
    remember(cli, "Uses pytest", "code")
    shm = f"{cli.db}-shm"
    assert os.path.exists(shm)  # the agent verbs leave it (os._exit, no close)
    env = {**os.environ, "NO_COLOR": "1"}
    p = subprocess.run([*ro_prefix(shm), LEDGER_BIN, "remember", "Uses ruff", "--cluster", "code", "--db", str(cli.db)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1, p
    assert shm in p.stderr and "chmod u+w" in p.stderr, p.stderr
    d = subprocess.run([*ro_prefix(shm), LEDGER_BIN, "doctor", "--db", str(cli.db)], capture_output=True, text=True,
                       env=env, timeout=120)
    line = next(x for x in d.stdout.splitlines() if x[2:].startswith("store"))
    assert line.startswith("✕") and shm in line, d.stdout
    # reads still work meanwhile
    r = subprocess.run([*ro_prefix(shm), LEDGER_BIN, "recall", "pytest", "--db", str(cli.db)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0 and "Uses pytest" in r.stdout, r


# --------------------------------------------------------- 3. a damaged store is reported
def test_doctor_reports_a_damaged_store_and_what_to_do(cli, tmp_path):
    """Bytes overwritten in the middle of a store: doctor's quick_check finds it (and says
    how long it took); reading the damaged pages fails naming what to do."""
    from ledger.service import Ledger

    with Ledger.open(cli.db) as led:
        for i in range(300):
            led.remember(f"Deploy step {i} runs on host-{i % 17} " + "with a long explanation " * 20, cluster="proc",
                         agent="t")
    d = ok(*cli("doctor"))
    assert "quick_check ok in" in d, d
    size = os.path.getsize(cli.db)
    with open(cli.db, "r+b") as fh:
        fh.seek(size // 2 // 4096 * 4096)
        fh.write(b"\xde\xad" * 16384)
    rc, out, err = cli("doctor")
    assert rc == 1, out
    line = next(x for x in out.splitlines() if x[2:].startswith("store"))
    assert line.startswith("✕") and "damaged" in line and "quick_check (" in line, out
    assert ".recover" in out and "backup" in out, out
    msg = fail(*cli("export"))
    assert "damaged" in msg and ".recover" in msg, msg


# ----------------------------------------------- 6. Ctrl-C during an import says what it kept
def test_ctrl_c_during_import_says_nothing_was_saved_and_to_rerun(cli, tmp_path):
    import json
    import signal
    import time

    from ledger.service import Ledger

    src = tmp_path / "src.db"
    with Ledger.open(src) as led:
        led.remember("Fact zero about host-0", cluster="proc", agent="t")
    one = json.loads(ok(*cli("export", db=src)).splitlines()[0])
    export = tmp_path / "all.jsonl"
    with open(export, "w") as fh:  # 20000 distinct memories: an import long enough to interrupt
        for i in range(20000):
            fh.write(json.dumps({**one, "id": f"m_test{i:010d}", "text": f"Fact {i} about host-{i}"}) + "\n")
    ok(*cli("clusters"))
    p = subprocess.Popen([LEDGER_BIN, "import", str(export), "--db", str(cli.db)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})
    # Interrupt once the import holds the store's write lock (it is writing), not by a timer.
    probe = sqlite3.connect(cli.db, timeout=0, isolation_level=None)
    while p.poll() is None:
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
        except sqlite3.OperationalError:
            break
        time.sleep(0.002)
    probe.close()
    if p.poll() is not None:
        pytest.skip("the import finished before it could be interrupted")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "nothing from" in err and "again" in err, err
    with Ledger.open(cli.db) as led:
        assert led.stats()["memories"] == 0
    assert "imported 20000 memories" in ok(*cli("import", str(export), timeout=600))
