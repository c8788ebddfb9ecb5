"""A store this process cannot write (on a read-only mount, a read-only file, a folder
where SQLite cannot make its journal files) is still a store to read: every read works
on every surface, and every write is answered with one clear error saying that nothing
was saved, that reads still work and what to do. The hook fails open and keeps its
observation in the spool where it can. (Issue: a read-only store made every tool of
``ledger mcp`` fail, reads included: "unable to open database file".)

Real processes on real files: the CLI, ``ledger mcp`` through the SDK client, a
``ledger serve`` child and ``ledger hook``, each in a mount namespace where the store's
folder (or the store file alone) is read-only (tests/readonly.py)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess

import httpx
import pytest
from conftest import LEDGER_BIN
from fakes.hooks import post_bash, pre_read
from liveserve import LiveServe
from readonly import require_ro_mounts, ro_prefix
from test_mcp import connect, err, ok, only_the_users, run

from ledger.filekeys import file_key
from ledger.service import Ledger

SAYS_READ_ONLY = "is read-only ("
SAYS_WHAT_TO_DO = "make the store file and its folder writable for this user, or use a writable copy"


@pytest.fixture(autouse=True)
def _mounts():
    require_ro_mounts()


@pytest.fixture()
def store(tmp_path):
    """``(db, ids)``: a store in its own folder ``tmp_path/store`` (the folder the tests
    mount read-only), closed cleanly so no ``-wal`` or ``-shm`` file is left beside it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "data.bin").write_bytes(b"\x00\x01binary")
    (proj / "deploy.md").write_text("# Deploys\n\nDeploys go out on Tuesdays.\n")
    db = tmp_path / "store" / "ledger.db"
    ids = {}
    with Ledger.open(db) as led:
        ids["make"] = led.remember("The build uses make, not ninja", cluster="code", agent="alice",
                                   files=[file_key(proj / "data.bin")]).memory.id
        ids["py311"] = led.remember("CI runs on Python 3.11", cluster="code", agent="alice").memory.id
        led.remember("CI runs on Python 3.12", cluster="code", agent="bob")
        ids["candidate"] = led.candidates(5)[0].id
        ids["source"] = led.ingest_chunks("notes.md", ["# Notes\n\nThe build uses make."], cluster="code",
                                          agent="alice").source_id
    assert not (db.parent / "ledger.db-wal").exists()
    return db, ids


def _digest(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _cli(db, *args, prefix=(), env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, LEDGER_BIN, *args, "--db", str(db)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})


def _says_read_only(text: str) -> None:
    assert SAYS_READ_ONLY in text and "nothing was saved" in text and SAYS_WHAT_TO_DO in text, text
    assert "unable to open" not in text and "Traceback" not in text and "ledger bug" not in text, text


@pytest.mark.parametrize("what", ["folder", "file"])
def test_cli_reads_work_and_writes_say_what_to_do(store, what):
    db, ids = store
    before = _digest(db.parent)
    ro = ro_prefix(db.parent if what == "folder" else db)
    reads = {
        "recall": ("recall", "build make", "--json"),
        "search": ("search", "build", "--json"),
        "show": ("show", ids["make"], "--json"),
        "stats": ("stats", "--json"),
        "sources": ("sources", "--json"),
        "export": ("export",),
        "clusters": ("clusters", "--json"),
        "conflicts": ("conflicts", "--json"),
    }
    for name, args in reads.items():
        p = _cli(db, *args, prefix=ro)
        assert p.returncode == 0, (name, p.stderr)
        assert "Traceback" not in p.stderr, (name, p.stderr)
    p = _cli(db, "recall", "build make", "--json", prefix=ro)
    assert ids["make"] in p.stdout
    assert "not counted" in p.stderr or "notCounted" in p.stdout  # the read could not be counted, and it says so
    assert json.loads(_cli(db, "stats", "--json", prefix=ro).stdout)["memories"] == 4
    assert sum(1 for line in _cli(db, "export", prefix=ro).stdout.splitlines() if '"record"' not in line) == 4
    writes = {
        "remember": ("remember", "Deploys go out on Tuesdays", "--cluster", "proc"),
        "forget": ("forget", ids["py311"]),
        "judge": ("judge", ids["candidate"], "--verdict", "conflict"),
        "clusters add": ("clusters", "add", "ops"),
        "ingest": ("ingest", str(db.parent.parent / "proj" / "deploy.md"), "--cluster", "proc"),
        "sources trust": ("sources", "trust", ids["source"], "0.9"),
    }
    for name, args in writes.items():
        p = _cli(db, *args, prefix=ro)
        assert p.returncode == 1, (name, p.stdout, p.stderr)
        _says_read_only(p.stderr)
    # Nothing written. With the file alone read-only SQLite may leave empty -wal/-shm
    # files in the (writable) folder to read it; the store file itself is untouched.
    after = _digest(db.parent)
    assert after == before if what == "folder" else after["ledger.db"] == before["ledger.db"]


def test_a_store_that_needs_upgrading_says_it_must_be_writable_once(store):
    db, _ = store
    conn = sqlite3.connect(db)
    last = conn.execute("SELECT name FROM _migrations ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    conn.execute("DELETE FROM _migrations WHERE name = ?", (last,))  # as if an older ledger wrote it
    conn.commit()
    conn.close()
    p = _cli(db, "stats", prefix=ro_prefix(db.parent))
    assert p.returncode == 1
    assert "must upgrade it first" in p.stderr and last in p.stderr and "Open it once with write access" in p.stderr, p.stderr


def test_mcp_reads_work_and_writes_are_clear_tool_errors(store):
    db, ids = store

    async def go():
        async with connect(db, prefix=ro_prefix(db.parent), LEDGER_HOME=str(db.parent.parent / "home")) as s:
            return {
                "recall": ok(await s.call_tool("recall", {"query": "build make"})),
                "search": ok(await s.call_tool("search", {"query": "python"})),
                "show": ok(await s.call_tool("show", {"id": ids["make"]})),
                "conflicts": ok(await s.call_tool("conflicts", {})),
                "remember": err(await s.call_tool("remember", {"claim": "Deploys go out on Tuesdays", "cluster": "proc"})),
                "judge": err(await s.call_tool("judge", {"candidate": ids["candidate"], "verdict": "unrelated"})),
                "after": ok(await s.call_tool("search", {})),  # the server goes on after a refused write
            }

    r = run(go)
    assert ids["make"] in [h["id"] for h in r["recall"]["hits"]]
    assert "read-only" in r["recall"].get("notCounted", "")
    # and what to do about it: nothing for the hits; counting needs a writable store
    assert r["recall"]["notCounted"].endswith("The hits are complete; reads are counted only in a store this user "
                                              "can write to")
    assert r["search"]["total"] == 2 and r["show"]["id"] == ids["make"] and r["conflicts"]
    _says_read_only(r["remember"])
    _says_read_only(r["judge"])
    for name in ("remember", "judge"):  # only the user can make it writable: the agent is told to ask
        only_the_users(r[name])
        assert "These tools cannot change that: ask the user to make the store" in r[name], r[name]
    assert r["after"]["total"] == 4


def test_serve_browses_a_read_only_store_and_refuses_changes_clearly(store):
    db, ids = store
    before = _digest(db.parent)
    with LiveServe(db, prefix=ro_prefix(db.parent)) as srv:
        assert "read-only file system" in srv.banner["readOnly"]
        get = {path: httpx.get(srv.url + path, timeout=30) for path in (
            "api/stats", "api/search?q=build", f"api/memories/{ids['make']}", "api/review", "api/sources",
            "api/export", "api/graph", "api/clusters")}
        changes = [
            httpx.post(srv.url + "api/clusters", json={"label": "ops"}, headers=srv.origin, timeout=30),
            httpx.patch(srv.url + f"api/memories/{ids['make']}", json={"text": "The build uses ninja"}, headers=srv.origin,
                        timeout=30),
            httpx.post(srv.url + "api/memories/bulk", json={"op": "pin", "ids": [ids["make"]]}, headers=srv.origin,
                       timeout=30),
            httpx.request("DELETE", srv.url + f"api/sources/{ids['source']}", json={}, headers=srv.origin, timeout=30),
        ]
    for path, r in get.items():
        assert r.status_code == 200, (path, r.text[:300])
    assert get["api/stats"].json()["memories"] == 4 and get["api/search?q=build"].json()["total"] >= 1
    for r in changes:
        assert r.status_code == 403, (r.request.method, r.request.url, r.status_code, r.text)
        body = r.json()
        assert body["kind"] == "store-unavailable" and body["reason"] == "read-only"
        _says_read_only(body["error"])
    assert _digest(db.parent) == before


def _hook(db, event: str, payload: dict, home, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, LEDGER_BIN, "hook", "claude-code", event], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=60,
                          env={**os.environ, "LEDGER_DB": str(db), "LEDGER_HOME": str(home)})


def test_the_hook_fails_open_and_spools_what_it_could_not_write(store, tmp_path):
    db, _ = store
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    # The store file alone is read-only: its folder takes the spool.
    ro = ro_prefix(db)
    pre = _hook(db, "PreToolUse", pre_read(proj / "data.bin", cwd=proj), home, ro)
    assert pre.returncode == 0 and pre.stderr == b"", pre.stderr
    post = _hook(db, "PostToolUse", post_bash("make -j4", stdout="built", cwd=proj), home, ro)
    assert post.returncode == 0 and post.stdout == b"" and post.stderr == b"", post
    log = (home / "hook.log").read_text()
    assert "read-only" in log and SAYS_WHAT_TO_DO in log.lower() and "spooled" in log, log
    assert "built" in (db.parent / "ledger.db.spool" / "pending.jsonl").read_text()
    # Once the store can be written again, the next hook drains the spool into it.
    again = _hook(db, "PostToolUse", post_bash("make test", stdout="ok", cwd=proj, session="s2"), home)
    assert again.returncode == 0
    conn = sqlite3.connect(db)
    assert sorted(r[0] for r in conn.execute("SELECT output FROM observations")) == ["built", "ok"]
    conn.close()


def test_the_hook_fails_open_on_a_read_only_folder(store, tmp_path):
    db, _ = store
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    before = _digest(db.parent)
    for event, payload in (("PreToolUse", pre_read(proj / "data.bin", cwd=proj)),
                           ("PostToolUse", post_bash("make", stdout="built", cwd=proj)),
                           ("SessionStart", {"session_id": "s1", "cwd": str(proj), "hook_event_name": "SessionStart",
                                             "source": "startup"})):
        p = _hook(db, event, payload, home, ro_prefix(db.parent))
        assert p.returncode == 0 and p.stderr == b"", (event, p.stderr)
        assert b"Traceback" not in p.stdout
    assert "read-only" in (home / "hook.log").read_text()
    assert _digest(db.parent) == before
