"""``ledger import`` is the inverse of ``ledger export``, through the real command:
memories, sources, reads, readers, links and drops survive the move; importing twice
or merging two stores adds no duplicates; a bad file changes nothing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time

from conftest import LEDGER_BIN, is_pg, iso
from ptys import read_to_end

from ledger.service import Ledger

DOC = "# Staging\n\nStaging deploys need the VPN up.\n\n# Rollbacks\n\nRollbacks use the previous tag.\n"


def j(cli, *argv, db=True, input=None):
    rc, out, err = cli(*argv, "--json", db=db, input=input)
    assert rc == 0, err
    return json.loads(out)


def seed(cli, tmp_path):
    """A store with reads, readers, a link, a pin, a document and a dropped claim."""
    a = j(cli, "remember", "CI runs on Python 3.11", "--cluster", "code", "--agent", "claude")["id"]
    b = j(cli, "remember", "The deploy key lives in the vault", "--cluster", "proc", "--agent", "codex")["id"]
    gone = j(cli, "remember", "The old build server is ci-01", "--cluster", "code", "--agent", "claude")["id"]
    j(cli, "recall", "python CI", "--agent", "opencode")
    j(cli, "link", a, b)
    doc = tmp_path / "runbook.md"
    doc.write_text(DOC)
    j(cli, "ingest", str(doc), "--cluster", "proc", "--trust", "0.9")
    with Ledger.open(cli.db) as led:
        led.review(b, "pin")
    time.sleep(0.02)
    seed.before_drop = int(time.time() * 1000)
    time.sleep(0.02)
    j(cli, "forget", gone)
    return a, b, gone


def export(cli, tmp_path, *query):
    rc, out, err = cli("export", *query)
    assert rc == 0, err
    f = tmp_path / "all.jsonl"
    f.write_text(out)
    # the memory lines; a whole-store export also has history lines (test_import_history.py)
    return f, [r for r in map(json.loads, out.splitlines()) if "record" not in r]


def test_export_then_import_into_a_new_store(cli, tmp_path, new_store):
    a, b, gone = seed(cli, tmp_path)
    f, lines = export(cli, tmp_path, f"asof:{iso(seed.before_drop)}")  # as of before the drop: it comes along
    assert gone in {r["id"] for r in lines}
    chunk = next(r for r in lines if r["kind"] == "chunk")
    assert chunk["source"]["filename"].endswith("runbook.md") and chunk["source"]["trust"] == 0.9
    other = new_store("other")
    r = j(cli, "import", str(f), db=other)
    assert r["imported"] == len(lines) and r["merged"] == 0 and r["sources"] == 1 and r["links"] == 1
    old = {m["id"]: m for m in lines}
    for mid in (a, b, chunk["id"]):
        m = j(cli, "show", mid, db=other)
        for key in ("text", "kind", "clusterId", "writer", "createdAt", "lastReadAt", "hits", "pinned", "sourceId"):
            assert m[key] == old[mid][key], (mid, key)
        assert sorted(m["readers"]) == sorted(old[mid]["readers"])
    assert "opencode" in j(cli, "show", a, db=other)["readers"]
    assert j(cli, "show", gone, db=other)["deletedAt"] == old[gone]["deletedAt"]
    # searchable in the new store (words and context), the dropped one only by asof:
    assert any(h["id"] == a for h in j(cli, "search", "python", db=other)["hits"])
    assert any("VPN" in h["text"] for h in j(cli, "search", "staging vpn", db=other)["hits"])
    assert not any(h["id"] == gone for h in j(cli, "search", "build server", db=other)["hits"])
    before = iso(old[gone]["deletedAt"] - 1)
    assert any(h["id"] == gone for h in j(cli, "search", "build server", f"asof:{before}", db=other)["hits"])
    src = j(cli, "sources", db=other)
    assert len(src) == 1 and src[0]["trust"] == 0.9 and src[0]["chunkCount"] == 2
    st_old, st_new = j(cli, "stats"), j(cli, "stats", db=other)
    for key in ("memories", "claims", "chunks", "sources"):
        assert st_new[key] == st_old[key], key


def test_importing_twice_adds_nothing(new_store, cli, tmp_path):
    seed(cli, tmp_path)
    f, lines = export(cli, tmp_path)
    other = new_store("other")
    j(cli, "import", str(f), db=other)
    again = j(cli, "import", str(f), db=other)
    assert again["imported"] == 0 and again["merged"] == len(lines) and again["links"] == 0
    # A whole-store export carries the dropped memories too (dropped): stats counts live ones.
    assert any(r.get("deletedAt") for r in lines)
    assert j(cli, "stats", db=other)["memories"] == len([r for r in lines if not r.get("deletedAt")])
    rc, out, err = cli("import", str(f), db=other)
    assert rc == 0 and out.startswith("imported 0 memories") and f"merged {len(lines)} already here" in out


def test_merging_two_stores_unions_readers_of_the_same_claim(new_store, cli, tmp_path):
    j(cli, "remember", "Tests run with pytest -q", "--cluster", "code", "--agent", "claude")
    f, lines = export(cli, tmp_path)
    other = new_store("other")
    mine = j(cli, "remember", "Tests run with pytest -q", "--cluster", "code", "--agent", "codex", db=other)["id"]
    j(cli, "remember", "Only in the other store", "--cluster", "code", "--agent", "codex", db=other)
    r = j(cli, "import", str(f), db=other)
    assert r["merged"] == 1 and r["imported"] == 0
    assert sorted(j(cli, "show", mine, db=other)["readers"]) == ["claude", "codex"]
    assert j(cli, "stats", db=other)["claims"] == 2


def test_a_bad_file_changes_nothing_and_names_the_line(new_store, cli, tmp_path):
    seed(cli, tmp_path)
    f, lines = export(cli, tmp_path)
    text = f.read_text().splitlines()
    text.insert(2, "{not json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    other = new_store("other")
    rc, out, err = cli("import", str(bad), db=other)
    assert rc == 1 and "line 3" in err and "Nothing was imported" in err
    for content, needle in (('{"id": "m_x"}\n', "line 1"), ("[1, 2]\n", "line 1"), ("\n\n", "no memories")):
        bad.write_text(content)
        rc, out, err = cli("import", str(bad), "--json", db=other)
        assert rc == 1 and needle in json.loads(err)["error"] and json.loads(err)["kind"] == "invalid-input"
    rc, out, err = cli("import", str(tmp_path / "missing.jsonl"), db=other)
    assert rc == 1 and "Cannot read" in err
    if isinstance(other, str):  # a PostgreSQL schema: it exists, empty
        assert j(cli, "stats", db=other)["memories"] == 0
    else:  # a failed import did not even create the store file (stats says there is none)
        rc, out, err = cli("stats", "--json", db=other)
        assert rc == 1 and json.loads(err)["kind"] == "no-store" and not other.parent.exists(), err


def test_import_from_stdin_pipe(new_store, cli, tmp_path):
    seed(cli, tmp_path)
    rc, out, _ = cli("export")
    other = new_store("other")
    r = j(cli, "import", "-", db=other, input=out)
    assert r["imported"] == sum("record" not in json.loads(x) for x in out.splitlines())  # memories, not history
    assert r["events"] > 0


def _many(tmp_path, n: int) -> str:
    lines = []
    for i in range(n):
        lines.append(json.dumps({"id": f"m_bulk{i:06d}", "text": f"bulk fact number {i}", "kind": "claim", "origin": "chat",
                                 "clusterId": "code", "writer": "bulk", "createdAt": 1_700_000_000_000 + i,
                                 "lastReadAt": 1_700_000_000_000 + i, "hits": 0}))
    f = tmp_path / "bulk.jsonl"
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def test_progress_bar_only_on_a_terminal(new_store, cli, tmp_path):
    f = _many(tmp_path, 2500)
    target = new_store("a")
    rc, out, err = cli("import", f, db=target)
    # stderr: no bar off a terminal, only the line a new SQLite store gets (docs/cli.md)
    assert err == ("" if is_pg(target) else f"⚠ Created a new store at {target}.\n"), err
    assert rc == 0 and "imported 2,500" not in out and "imported 2500 memories" in out
    # stderr on a pseudo-terminal: rich draws the bar there, stdout stays the summary
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1", TERM="xterm")
    p = subprocess.Popen([LEDGER_BIN, "import", f, "--db", str(new_store("b"))], stdout=subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = read_to_end(master)
    out = p.stdout.read().decode()
    assert p.wait(timeout=60) == 0
    assert "importing" in seen.decode("utf-8", "replace")
    assert out.startswith("imported 2500 memories")


def test_the_same_claim_twice_in_one_file_is_stored_once(cli, tmp_path):
    rec = {"text": "Deploys need the VPN", "kind": "claim", "origin": "chat", "clusterId": "proc", "writer": "a",
           "createdAt": 1_700_000_000_000, "lastReadAt": 1_700_000_000_000, "hits": 2}
    f = tmp_path / "twice.jsonl"
    f.write_text(json.dumps({**rec, "id": "m_one"}) + "\n" + json.dumps({**rec, "id": "m_two", "writer": "b", "hits": 5}) + "\n")
    r = j(cli, "import", str(f))
    assert r["imported"] == 1 and r["merged"] == 1
    m = j(cli, "show", "m_one")
    assert sorted(m["readers"]) == ["a", "b"] and m["hits"] == 5


def test_a_blank_topic_is_no_topic_and_its_backup_imports(cli, tmp_path, new_store):
    """`remember --topic ""` stored "" and the store's export was then refused by import
    ("line 1: 'topic' is empty"): a backup that could not be restored. A blank topic is
    now no topic, and a line holding "" (from a store written before) imports."""
    mid = j(cli, "remember", "The build uses make", "--cluster", "code", "--topic", "  ")["id"]
    f, lines = export(cli, tmp_path)
    assert not [r for r in lines if r["id"] == mid][0].get("topic")
    older = tmp_path / "older.jsonl"  # the same line as an older store wrote it
    older.write_text("".join(json.dumps({**r, "topic": ""}) + "\n" for r in lines))
    target = new_store("restored")
    assert j(cli, "import", str(older), db=target)["imported"] == 1
    with Ledger.open(target) as led:
        assert led.get(mid).topic is None
