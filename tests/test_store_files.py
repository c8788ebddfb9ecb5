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


@pytest.mark.parametrize("verb", [("remember", "Uses pytest", "--cluster", "code"), ("clusters", "add", "Client work")])
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
    cli.create_store()
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
#: The reads an agent makes before its first write: on a missing store they answer as the
#: new store would (nothing found; the clusters it starts with) and warn, exit 0.
WARN_READS = [("recall", "foo"), ("search", "foo"), ("clusters",)]
#: The reads that report on a store: on a missing one they fail with kind no-store, exit 1
#: and nothing on stdout (zero counts or an empty list read as an empty store).
REPORT_READS = [("stats",), ("export",), ("export", "cluster:proc"), ("sources",), ("conflicts",),
                ("review", "--plain"), ("review",), ("checkpoints",), ("checkpoints", "show", "3")]


def _no_store_line(target) -> str:
    return (f"No store at {target}: nothing to read, and nothing was created. Check the path (--db, $LEDGER_DB, "
            f'store.db in `ledger config`); the first write creates the store, e.g. ledger remember "Prefers metric '
            f'units" --cluster prefs --db {target}')


@pytest.mark.parametrize("verb", WARN_READS, ids=lambda v: v[0])
def test_reading_a_missing_store_says_so_and_creates_nothing(cli, tmp_path, verb):
    """Read verbs on a missing store file answer from an empty store in memory, warn on
    stderr naming the path and how to create it, and create no file or folder.
    `ledger clusters` created the store (and its folders) until the fresh-user pass."""
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli(*verb, db=target)
    assert rc == 0 and err == f"⚠ {_no_store_line(target)}\n", err
    assert not (tmp_path / "nonexistent-dir").exists()
    # the same through $LEDGER_DB, with --json a JSON warning
    rc, out, err = cli(*verb, "--json", db=None, env={"LEDGER_DB": str(target)})
    assert rc == 0 and json.loads(err) == {"warning": _no_store_line(target), "kind": "no-store", "path": str(target)}
    if verb[0] == "search":  # the body says it too: empty because there is no store
        [w] = json.loads(out)["warnings"]
        assert w == {**json.loads(err), "kind": "no-store", "path": str(target)}, (w, err)
    if verb[0] == "clusters":  # the clusters the first write will create the store with
        assert "prefs" in {c["id"] for c in json.loads(out)}, out
    assert not (tmp_path / "nonexistent-dir").exists()


def test_show_on_a_missing_store_blames_the_store_not_the_id(cli, tmp_path):
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli("show", "m_abc", db=target)
    # The error stays one line, and blames the missing store, not the id ("It may have
    # been mistyped" sent the user hunting for a typo in a good id).
    assert rc == 1 and err.count("\n") == 1 and "m_abc" in err and "mistyped" not in err, err
    assert err.startswith(f"✕ No store at {target}: nothing to read, and nothing was created"), err
    rc, out, err = cli("show", "m_abc", "--json", db=None, env={"LEDGER_DB": str(target)})
    assert rc == 1 and json.loads(err)["kind"] == "unknown-memory" and str(target) in err, err
    assert not (tmp_path / "nonexistent-dir").exists()


@pytest.mark.parametrize("verb", REPORT_READS, ids=" ".join)
def test_a_report_on_a_missing_store_fails_with_no_store_and_creates_nothing(cli, tmp_path, verb):
    """stats, conflicts, sources (and review, export, checkpoints) printed an empty
    store's report on stdout with exit 0, the missing store said on stderr only: a
    script reading `stats --json` saw 0 memories. They fail as every command fails: one
    line on stderr (with --json the JSON error object, kind no-store, and the path),
    nothing on stdout, exit 1, whatever --json says."""
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli(*verb, db=target)
    assert (rc, out, err) == (1, "", f"✕ {_no_store_line(target)}\n")
    rc, out, err = cli(*verb, "--json", db=None, env={"LEDGER_DB": str(target)})
    assert (rc, out) == (1, "") and json.loads(err) == {"error": _no_store_line(target), "kind": "no-store",
                                                        "path": str(target)}, err
    assert not (tmp_path / "nonexistent-dir").exists()
    # the default store ($LEDGER_HOME/ledger.db) is not created either
    home = tmp_path / "home"
    rc, out, err = cli(*verb, db=None, env={"LEDGER_HOME": str(home)})
    assert rc == 1 and out == "" and f"No store at {home / 'ledger.db'}" in err, err
    assert not home.exists()


def test_a_bad_query_on_a_missing_store_is_still_named(cli, tmp_path):
    """The report runs on an empty stand-in first: a typo in the query is said before
    the missing store (fixing the path alone would not have been enough)."""
    target = tmp_path / "nonexistent-dir" / "x.db"
    msg = fail(*cli("export", "strenght:>40", db=target))
    assert "did you mean strength:?" in msg and "No store" not in msg, msg
    assert not target.parent.exists()


def test_a_report_on_a_store_that_exists_but_is_empty_still_reports(cli):
    """The no-store error is for a missing file only: an empty store is reported as such."""
    cli.create_store()
    assert json.loads(ok(*cli("stats", "--json")))["memories"] == 0
    assert json.loads(ok(*cli("sources", "--json"))) == [] and json.loads(ok(*cli("conflicts", "--json"))) == []
    assert ok(*cli("export")) == ""


def test_serve_on_a_named_missing_store_refuses_and_creates_nothing(cli, tmp_path):
    """`ledger serve --db <typo>` served (and created) an empty store at the typo. A
    store named by --db or $LEDGER_DB must exist; it fails before binding a port."""
    target = tmp_path / "nonexistent-dir" / "sub" / "x.db"
    rc, out, err = cli("serve", "--port", "0", db=target, timeout=60)
    assert (rc, out, err) == (1, "", f"✕ {_no_store_line(target)}\n")
    rc, out, err = cli("serve", "--port", "0", "--json", db=None, env={"LEDGER_DB": str(target)}, timeout=60)
    assert rc == 1 and out == "" and json.loads(err)["kind"] == "no-store", err
    assert not (tmp_path / "nonexistent-dir").exists()


def test_serve_creates_the_default_store_on_first_run(tmp_path):
    """The default store ($LEDGER_HOME/ledger.db) is created by serve, as before: the
    UI's first-run page says how to connect an agent and waits for its first write."""
    from liveserve import LiveServe

    home = tmp_path / "home"
    with LiveServe(None, env={"LEDGER_HOME": str(home), "LEDGER_DB": ""}) as srv:
        assert srv.banner["memories"] == 0 and srv.banner["store"] == str(home / "ledger.db")
    assert (home / "ledger.db").is_file()


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
    remember(cli, "Uses pytest", "code")  # creates the store: closed, so no -shm yet
    remember(cli, "Uses mypy", "code")
    shm = f"{cli.db}-shm"
    assert os.path.exists(shm)  # the agent verbs leave it on a store that exists (os._exit, no close)
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
    cli.create_store()
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


def test_the_interactive_review_on_a_missing_store_creates_nothing(tmp_path):
    """`ledger review` at a terminal opens the TUI on the store, which created it: stdin
    and stdout are a real pseudo-terminal here, so the TUI path is the one taken."""
    import pty

    target = tmp_path / "nonexistent-dir" / "x.db"
    main, sub = pty.openpty()
    try:
        p = subprocess.run([LEDGER_BIN, "review", "--db", str(target)], stdin=sub, stdout=sub, stderr=subprocess.PIPE,
                           env={**os.environ, "NO_COLOR": "1"}, timeout=60)
    finally:
        os.close(sub)
        os.close(main)
    assert p.returncode == 1 and p.stderr.decode() == f"✕ {_no_store_line(target)}\n", p.stderr
    assert not target.parent.exists()
