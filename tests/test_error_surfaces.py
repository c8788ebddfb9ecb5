"""A core error names no surface; each surface says what to do in its own terms
(``cli/hints.phrase``, ``mcp/server.phrase``, ``web/api.web_message``). Before, two MCP
errors told the agent to use the command line: a store path naming a file that is not a
SQLite store ("Point --db (or $LEDGER_DB) at a ledger store", "`ledger doctor` checks
it") and a claim over 20,000 characters ("Use `ledger ingest` for documents"); the web
UI could show the same, and "Try: ledger forget ...". Ours besides: a folder as the store
path, another program's SQLite file, the quoted-value warning ("`ledger clusters` lists
both"), a web edit over 20,000 characters, and a store the web server cannot open.

MCP through a real ``ledger mcp`` subprocess (tests/test_mcp.py), the web through its
TestClient (tests/test_web_api.py), the CLI as a real subprocess: it keeps its commands.
"""

from __future__ import annotations

import sqlite3

import pytest
from conftest import Cli
from test_mcp import CLI_SYNTAX, connect, err, only_the_users, run

from ledger.mcp.server import WHERE_THE_STORE_IS_SET
from ledger.service import MAX_TEXT_CHARS, Ledger

#: What an MCP client or a web page must not be told to run (tests/test_mcp.py's list and
#: the commands these errors named).
NOT_HERE = (*CLI_SYNTAX, "ledger ingest", "ledger doctor", "ledger forget", "ledger clusters", "sqlite3 <store>",
            "$LEDGER_HOME")
TOO_LONG = "Prefers metric units. " * (MAX_TEXT_CHARS // 20)  # over 20,000 characters


def no_cli(text: str) -> None:
    """``text`` tells no one to run a command: the MCP server's own sentence on where
    its store is set (the client's config entry, which a user edits) is taken out first."""
    rest = text.replace(WHERE_THE_STORE_IS_SET, "")
    for bad in NOT_HERE:
        assert bad not in rest, (bad, text)


def bad_stores(tmp_path) -> dict:
    """Store paths no store can be opened at, by what they are."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my shopping list, not a database\n" * 50)
    folder = tmp_path / "folder"
    folder.mkdir()
    other = tmp_path / "other.db"
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE users (name TEXT)")
    c.commit()
    c.close()
    return {"not-sqlite": notes, "folder": folder, "other-program": other}


# --------------------------------------------------------------- MCP
def test_mcp_store_errors_say_where_this_server_is_set(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    said = {}
    stores = {**bad_stores(tmp_path), "unreachable": "postgresql://nobody@127.0.0.1:9/nostore"}  # a closed port
    for name, path in stores.items():
        async def go(path=path):
            async with connect(path) as s:
                return (err(await s.call_tool("remember", {"claim": "Tabs, not spaces", "cluster": "prefs"})),
                        err(await s.call_tool("search", {"query": "tabs"})))
        said[name] = run(go)
    for name, texts in said.items():
        for text in texts:
            only_the_users(text)  # the user's command named as theirs: an agent cannot run it
            assert WHERE_THE_STORE_IS_SET in text, (name, text)
    remember, search = said["not-sqlite"]  # the example
    assert "not a usable SQLite file" in remember, remember
    assert "ask them to check it (their command: `ledger doctor`) and restore a backup" in remember, remember
    assert "it is a folder, not a store file" in said["folder"][0]
    assert "another program's tables (users)" in said["other-program"][0]
    assert "Cannot reach the PostgreSQL store" in said["unreachable"][0]
    # Nothing was written into any of them.
    assert (tmp_path / "notes.txt").read_text().startswith("my shopping list")
    assert list((tmp_path / "folder").iterdir()) == []


def test_mcp_a_claim_too_long_says_what_an_agent_can_do(store_target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Ledger.open(store_target).close()

    async def go():
        async with connect(store_target) as s:
            return err(await s.call_tool("remember", {"claim": TOO_LONG, "cluster": "prefs"}))

    text = run(go)
    only_the_users(text)
    assert f"(max {MAX_TEXT_CHARS})" in text and "one `remember` call each" in text, text
    assert "ask the user to ingest it (their command: `ledger ingest <file>`)" in text, text
    assert "Give claim" not in text, text  # not the blank-claim example


# --------------------------------------------------------------- web
@pytest.fixture()
def web(store_target):
    from starlette.testclient import TestClient
    from test_web_api import BASE, ORIGIN

    from ledger.web.server import create_app

    with Ledger.open(store_target) as led:
        mid = led.remember("Tabs, not spaces", cluster="prefs", agent="claude").memory.id
        led.add_cluster("home & devices")
    with TestClient(create_app(str(store_target)), base_url=BASE, headers=ORIGIN) as c:
        yield c, mid


def test_web_a_text_too_long_names_no_command(web):
    client, mid = web
    r = client.patch(f"/api/memories/{mid}", json={"text": TOO_LONG})
    d = r.json()
    assert r.status_code == 400 and d["kind"] == "invalid-input" and d["field"] == "claim", d
    assert d["length"] == len(TOO_LONG.strip()) and d["limit"] == MAX_TEXT_CHARS
    no_cli(d["error"])
    assert "belongs in Sources" in d["error"], d["error"]


def test_web_the_quoted_value_warning_names_no_command(web):
    client, _ = web
    (w,) = client.get("/api/search", params={"q": 'cluster:"home & devices" router'}).json()["warnings"]
    assert w["kind"] == "quoted-value" and "cluster:home-devices" in w["warning"]
    no_cli(w["warning"])


def test_web_a_store_it_cannot_open_names_no_flag(tmp_path):
    from starlette.testclient import TestClient
    from test_web_api import BASE, ORIGIN

    from ledger.web.server import create_app

    for name, path in bad_stores(tmp_path).items():
        if name == "folder":
            continue  # `ledger serve` refuses it before the app exists
        with TestClient(create_app(str(path)), base_url=BASE, headers=ORIGIN) as c:
            r = c.get("/api/clusters")
            d = r.json()
            assert r.status_code == 503 and d["kind"] == "store-unavailable", d
            no_cli(d["error"])
            assert "restart ledger serve on it" in d["error"], d["error"]


# --------------------------------------------------------------- the CLI keeps its own words
def test_the_cli_still_names_its_commands(store_target, tmp_path):
    Ledger.open(store_target).close()
    cli = Cli(store_target)
    rc, _, e = cli("remember", TOO_LONG, "--cluster", "prefs")
    assert rc == 1 and f"(max {MAX_TEXT_CHARS}). Use `ledger ingest` for documents." in e, e
    rc, _, e = cli("forget")
    assert rc == 1 and "Which memories?" in e and "Try: ledger forget m_abc123" in e, e
    rc, _, e = cli("forget", "m_nope")
    assert rc == 1 and "Nothing was forgotten" in e and "`ledger search` lists ids." in e, e
    stores = bad_stores(tmp_path)
    rc, _, e = cli("remember", "Tabs, not spaces", "--cluster", "prefs", db=stores["not-sqlite"])
    assert rc == 1 and "`ledger doctor` checks it" in e and "--db, $LEDGER_DB" in e, e
    rc, _, e = cli("search", "tabs", db=stores["other-program"])
    assert rc == 1 and "another program's tables" in e and "--db, $LEDGER_DB" in e, e
    rc, _, e = cli("search", 'cluster:"home & devices" router')
    assert rc == 0 and "the list of clusters shows both (ledger clusters)." in e, e


# --------------------------------------------------------------- the library, read-only
def test_a_read_only_open_refuses_what_is_no_store(tmp_path):
    """``Ledger.open(path, readonly=True)`` creates and migrates nothing, so a file that
    is no ledger store (another program's tables, an empty file) is refused when opened,
    with what it is, instead of a first read failing on a missing table."""
    from ledger.errors import StoreUnavailable

    stores = bad_stores(tmp_path)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for path, what in ((stores["other-program"], "another program's tables (users)"), (empty, "no tables yet")):
        with pytest.raises(StoreUnavailable) as e:
            Ledger.open(path, readonly=True)
        assert f"{path} is not a ledger store ({what})" in str(e.value) and e.value.reason == "bad-path"
    assert sqlite3.connect(stores["other-program"]).execute("SELECT name FROM sqlite_master").fetchall() == [("users",)]
    assert empty.read_bytes() == b""
    good = tmp_path / "good.db"
    with Ledger.open(good) as led:
        led.remember("Tabs, not spaces", cluster="prefs", agent="a")
    with Ledger.open(good, readonly=True) as led:
        assert led.search("tabs").total == 1
