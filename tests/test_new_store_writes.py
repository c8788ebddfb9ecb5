"""How a write creates a store, through real ``ledger`` processes on temporary folders
(docs/cli.md "A store that does not exist", docs/store.md "A missing store"):

- a write that fails its own checks (an unknown cluster, empty text, a bad file, an id
  that cannot be there) leaves no store file and no folder behind, on every write
  command (``ledger remember --cluster nope`` left b.db, -wal, -shm and its folder);
- the write that creates a store says so once, on stderr ("Created a new store at
  <path>.", a ``new-store`` warning with ``--json``), so a mistyped --db is noticed;
- a store location ending in a path separator names a folder and is refused (SQLite made
  a *file* of the folder's name, which then blocked ``LEDGER_HOME`` there);
- a path under a regular file is "no store there" for a read, "cannot create" for a write.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import LEDGER_BIN, is_pg
from test_cli import fail, ok

from ledger.paths import names_folder

#: Writes that fail their own checks on a store that does not exist; ``{f}`` is a file
#: the test makes (binary content, or an export line that is not one).
FAILING_WRITES = [
    ("remember", "Staging needs VPN", "--cluster", "nope"),
    ("remember", "   ", "--cluster", "prefs"),
    ("remember", "Staging needs VPN", "--cluster", "prefs", "--supersedes", "m_abc123"),
    ("remember", "Staging needs VPN", "--cluster", "prefs", "--file", ""),
    ("ingest", "--text", "Staging needs VPN", "--cluster", "nope"),
    ("ingest", "--text", "Staging needs VPN", "--cluster", "proc", "--trust", "7"),
    ("ingest", "{f}", "--cluster", "proc"),
    ("ingest", "{d}/no-such-file.md", "--cluster", "proc"),
    ("import", "{f}"),
    ("import", "{d}/no-such-file.jsonl"),
    ("clusters", "add", " "),
    ("forget", "m_abc123"),
    ("link", "m_abc123", "m_def456"),
    ("judge", "cc_abc123", "--verdict", "unrelated"),
    ("resolve", "cf_abc123", "a"),
    ("sources", "trust", "s_abc123", "0.5"),
    ("sources", "drop", "s_abc123"),
]


def _args(verb, tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\x00\x01 not text, not an export \xff" * 4)
    return [a.format(f=f, d=tmp_path) for a in verb]


def _files(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("verb", FAILING_WRITES, ids=" ".join)
def test_a_failed_write_leaves_no_store_and_no_folder(cli, tmp_path, verb):
    args = _args(verb, tmp_path)
    target = tmp_path / "x" / "a" / "b.db"
    err = fail(*cli(*args, db=target))
    assert "Created a new store" not in err, err
    assert not (tmp_path / "x").exists(), _files(tmp_path / "x")
    # the same with --db before the command, through $LEDGER_DB, and on the default store
    fail(*cli("--db", str(target), *args, db=None))
    fail(*cli(*args, db=None, env={"LEDGER_DB": str(target)}))
    assert not (tmp_path / "x").exists(), _files(tmp_path / "x")
    home = tmp_path / "home"
    rc, out, err = cli(*args, "--json", db=None, env={"LEDGER_HOME": str(home)})
    assert rc == 1 and out == "" and "error" in json.loads(err.splitlines()[-1]), err
    assert not home.exists(), _files(home)


@pytest.mark.sqlite_only  # store files on disk
def test_an_unknown_id_on_a_missing_store_blames_the_store(cli, tmp_path):
    """A remember that supersedes an id, on a store that is not there: the id cannot be
    in it, so the error names the missing store rather than calling the id mistyped."""
    target = tmp_path / "x" / "b.db"
    err = fail(*cli("remember", "Deploys on Fridays", "--cluster", "proc", "--supersedes", "m_abc123", db=target))
    assert f"No store at {target}" in err and "m_abc123" in err and "mistyped" not in err, err


#: Each creating write, and what its successful run needs.
CREATING_WRITES = [
    ("remember", "Staging needs VPN", "--cluster", "proc"),
    ("ingest", "--text", "Staging needs VPN. Ask ops for access.", "--cluster", "proc"),
    ("clusters", "add", "Client work"),
    ("import", "{export}"),
]


@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("verb", CREATING_WRITES, ids=lambda v: " ".join(v[:2]))
def test_the_write_that_creates_a_store_says_so_once(cli, tmp_path, verb):
    source = tmp_path / "source.db"
    ok(*cli("remember", "Deploys go out on Tuesdays", "--cluster", "proc", db=source))
    export = tmp_path / "all.jsonl"
    export.write_text(ok(*cli("export", db=source)))
    args = [a.format(export=export) for a in verb]
    target = tmp_path / "new" / "sub" / "ledger.db"
    rc, out, err = cli(*args, db=target)
    assert rc == 0 and err == f"⚠ Created a new store at {target}.\n", err
    assert target.exists() and out
    # once: the store is there now (a repeat may merge or say "already", never "created")
    rc, out, err = cli(*args, db=target)
    assert rc == 0 and "Created a new store" not in err, err
    # --json: the warning as other warnings travel, one JSON object on stderr
    other = tmp_path / "other.db"
    rc, out, err = cli(*args, "--json", db=None, env={"LEDGER_DB": str(other)})
    assert rc == 0 and json.loads(err) == {"warning": f"Created a new store at {other}.", "kind": "new-store",
                                           "path": str(other)}, err
    json.loads(out)  # stdout keeps the answer alone


@pytest.mark.sqlite_only
def test_a_new_store_is_named_by_its_absolute_path(cli, tmp_path):
    """A relative --db, or the default store: the message says where the file went."""
    p = subprocess.run([LEDGER_BIN, "remember", "Staging needs VPN", "--cluster", "proc", "--db", "rel/x.db"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       env={**os.environ, "NO_COLOR": "1"})
    assert p.returncode == 0 and p.stderr == f"⚠ Created a new store at {tmp_path / 'rel' / 'x.db'}.\n", p.stderr
    home = tmp_path / "home"
    rc, out, err = cli("remember", "Staging needs VPN", "--cluster", "proc", db=None, env={"LEDGER_HOME": str(home)})
    assert rc == 0 and err == f"⚠ Created a new store at {home / 'ledger.db'}.\n", err
    rc, out, err = cli("remember", "Staging needs a token", "--cluster", "proc", db=None,
                       env={"LEDGER_HOME": str(home)})
    assert rc == 0 and err == "", err


def test_a_write_to_a_store_that_exists_says_nothing_new(cli):
    """Both engines: a PostgreSQL store is a URL, never created by this rule, never named new."""
    cli.create_store()
    rc, out, err = cli("remember", "Staging needs VPN", "--cluster", "proc")
    assert rc == 0 and err == "", err
    err = fail(*cli("remember", "Staging needs VPN", "--cluster", "nope"))
    assert "No cluster" in err and "Created" not in err
    assert "Staging needs VPN" in ok(*cli("search", "staging"))


# ----------------------------------------------------- a store location naming a folder
@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("verb", [("remember", "x fact", "--cluster", "prefs"), ("recall", "x"), ("stats",),
                                  ("clusters",), ("ingest", "--text", "a doc", "--cluster", "proc"),
                                  ("clusters", "add", "Client work")], ids=" ".join)
@pytest.mark.parametrize("how", ["--db", "--db first", "LEDGER_DB"])
def test_a_store_path_ending_in_a_separator_is_refused(cli, tmp_path, verb, how):
    """`--db /tmp/x/h2/` made /tmp/x/h2 a SQLite file, which then broke
    `LEDGER_HOME=/tmp/x/h2`; and a read there suggested writing to that same path."""
    folder = tmp_path / "h2"
    given = f"{folder}{os.sep}"
    if how == "--db":
        rc, out, err = cli(*verb, db=given)
    elif how == "--db first":
        rc, out, err = cli("--db", given, *verb, db=None)
    else:
        rc, out, err = cli(*verb, db=None, env={"LEDGER_DB": given})
    assert rc == 1 and out == "", err
    assert "names a folder, not a store file" in err and str(folder / "ledger.db") in err, err
    assert f"--db {given}\n" not in err and "Created" not in err, err
    assert not folder.exists() and _files(tmp_path) == [], _files(tmp_path)
    # the folder is still free for what the message suggests, and for LEDGER_HOME
    ok(*cli("remember", "x fact", "--cluster", "prefs", db=None, env={"LEDGER_HOME": str(folder)}))
    assert (folder / "ledger.db").is_file()


def test_names_folder_leaves_urls_alone():
    assert names_folder("/tmp/x/") and names_folder("rel/") and not names_folder("/tmp/x.db")
    assert not names_folder("postgresql://me@host:5432/ledger/") and not names_folder("postgres://h/db/")


def test_a_postgresql_url_is_not_a_path(cli):
    """A postgresql:// --db is passed through untouched by the file rules (no stand-in,
    no new-store warning, no folder check)."""
    if not is_pg(cli.db):
        pytest.skip("PostgreSQL only")
    rc, out, err = cli("remember", "Staging needs VPN", "--cluster", "proc")
    assert rc == 0 and err == "", err
    assert "Staging needs VPN" in ok(*cli("recall", "staging"))


# ----------------------------------------------------- a path under a regular file
@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("verb", [("recall", "x"), ("search", "x"), ("clusters",), ("stats",), ("export",),
                                  ("show", "m_abc123"), ("forget", "m_abc123")], ids=" ".join)
def test_a_read_under_a_regular_file_says_no_store_can_be_there(cli, tmp_path, verb):
    blocker = tmp_path / "hostname"
    blocker.write_text("box\n")
    target = blocker / "x.db"
    err = fail(*cli(*verb, db=target))
    assert err.startswith(f"No store at {target}: {blocker} is a file, not a folder, so no store can be there"), err
    assert "Cannot create" not in err and "$LEDGER_HOME" in err
    rc, out, err = cli(*verb, "--json", db=None, env={"LEDGER_DB": str(target)})
    assert rc == 1 and out == "" and json.loads(err)["kind"] == "store-unavailable", err
    assert blocker.read_text() == "box\n"


@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("verb", [("remember", "x fact", "--cluster", "prefs"), ("clusters", "add", "Client work"),
                                  ("ingest", "--text", "a doc", "--cluster", "proc")], ids=" ".join)
def test_a_write_under_a_regular_file_cannot_create_the_store(cli, tmp_path, verb):
    blocker = tmp_path / "hostname"
    blocker.write_text("box\n")
    err = fail(*cli(*verb, db=blocker / "x.db"))
    assert f"Cannot create the store at {blocker / 'x.db'}: {blocker} is a file, not a folder" in err, err
    assert blocker.read_text() == "box\n"



@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("folder", ["fold/", "existing"])
def test_config_set_store_db_to_a_folder_is_refused(cli, tmp_path, folder):
    """`ledger config set store.db <folder>` would make every later command fail at open."""
    (tmp_path / "existing").mkdir()
    home = tmp_path / "home"
    given = f"{tmp_path}{os.sep}{folder}"
    err = fail(*cli("config", "set", "store.db", given, db=None, env={"LEDGER_HOME": str(home)}))
    assert "names a folder, not a store file" in err and os.path.join(given, "ledger.db") in err, err
    assert not (home / "config.toml").exists() and not (tmp_path / "fold").exists()
    ok(*cli("config", "set", "store.db", os.path.join(given, "ledger.db"), db=None, env={"LEDGER_HOME": str(home)}))
