"""Defects a second fresh-user pass found, each through the real CLI (subprocesses on a
real store): text ingests have an identity, ..."""

from __future__ import annotations

import json

from test_cli import fail, ok


def sources(cli) -> list[dict]:
    return json.loads(ok(*cli("sources", "--json")))


def hits(cli, query: str) -> list[str]:
    return [h["text"] for h in json.loads(ok(*cli("search", query, "--json")))["hits"]]


# ---------------------------------------------------------------- text ingests have an identity
def test_the_same_text_ingested_twice_is_one_source(cli):
    # The fresh-user case: --text twice made two `stdin` sources and the chunk showed twice.
    first = json.loads(ok(*cli("ingest", "--text", "The API key rotates every 30 days", "--cluster", "proc", "--json")))
    again = json.loads(ok(*cli("ingest", "--text", "The API key rotates every 30 days", "--cluster", "proc", "--json")))
    assert again["sourceId"] == first["sourceId"] and again["updated"], again
    assert hits(cli, "API key rotates") == ["The API key rotates every 30 days"]
    # The same text on stdin is the same source too; other text is another one.
    piped = json.loads(ok(*cli("ingest", "-", "--cluster", "proc", "--json", input="The API key rotates every 30 days")))
    assert piped["sourceId"] == first["sourceId"]
    other = json.loads(ok(*cli("ingest", "--text", "Backups run nightly at 02:00", "--cluster", "proc", "--json")))
    assert other["sourceId"] != first["sourceId"] and not other["updated"]
    assert len(sources(cli)) == 2
    # --as-new still adds a copy on purpose.
    copy = json.loads(ok(*cli("ingest", "--text", "Backups run nightly at 02:00", "--cluster", "proc", "--as-new",
                              "--json")))
    assert copy["sourceId"] != other["sourceId"]


def test_a_named_text_source_is_updated_by_name(cli):
    a = json.loads(ok(*cli("ingest", "-", "--name", "oncall.txt", "--cluster", "proc", "--json",
                           input="The pager rotates on Mondays")))
    b = json.loads(ok(*cli("ingest", "-", "--name", "oncall.txt", "--cluster", "proc", "--json",
                           input="The pager rotates on Fridays")))
    assert b["sourceId"] == a["sourceId"] and b["updated"] and b["retired"] == 1, b
    assert hits(cli, "pager rotates") == ["The pager rotates on Fridays"]
    assert [s["filename"] for s in sources(cli)] == ["oncall.txt"]
    # --text with --name names the source the same way.
    c = json.loads(ok(*cli("ingest", "--name", "oncall.txt", "--text", "The pager rotates on Sundays", "--cluster",
                           "proc", "--json")))
    assert c["sourceId"] == a["sourceId"], c
    assert "--name" in fail(*cli("ingest", "-", "--name", "x" * 300, "--cluster", "proc", input="text"))
    assert "a file is known by its path" in fail(*cli("ingest", "README.md", "--name", "r", "--cluster", "proc"))


# ---------------------------------------------------------------- agents' first/last seen after an import
def test_an_import_out_of_time_order_keeps_last_seen_after_first_seen(cli, tmp_path, new_store):
    from starlette.testclient import TestClient

    from ledger.service import Ledger
    from ledger.web.server import create_app

    for text in ("Cursor keeps its rules in .cursorrules", "Cursor indexes the repository on open"):
        ok(*cli("remember", text, "--cluster", "code", "--agent", "cursor"))
    ok(*cli("remember", "Codex reads AGENTS.md", "--cluster", "code", "--agent", "codex"))
    lines = [json.loads(x) for x in ok(*cli("export")).splitlines()]
    mems = [r for r in lines if "record" not in r and r.get("writer") == "cursor"]
    # The file's first cursor row is the newest, the next one is older: file order is not time order.
    for r, t in zip(mems, (1_700_000_900_000, 1_700_000_100_000)):
        r["createdAt"] = r["lastReadAt"] = t
    f = tmp_path / "moved.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    other = new_store("other")
    rc, _, err = cli("import", str(f), db=other)
    assert rc == 0, err

    def agents(db) -> dict:
        if str(db).startswith("postgresql"):
            with Ledger.open(db) as led:
                return {a["id"]: a for a in led.agents()["agents"]}
        with TestClient(create_app(str(db)), base_url="http://127.0.0.1:7444",
                        headers={"origin": "http://127.0.0.1:7444"}) as client:
            return {a["id"]: a for a in client.get("/api/agents").json()["agents"]}

    seen = agents(other)
    assert (seen["cursor"]["firstSeen"], seen["cursor"]["lastSeen"]) == (1_700_000_100_000, 1_700_000_900_000)
    assert all(a["lastSeen"] >= a["firstSeen"] for a in seen.values()), seen
    # A fresh row afterwards moves lastSeen on and leaves firstSeen where the history began.
    rc, _, err = cli("remember", "Cursor runs tests with pytest -q", "--cluster", "code", "--agent", "cursor", db=other)
    assert rc == 0, err
    now = agents(other)["cursor"]
    assert now["firstSeen"] == 1_700_000_100_000 and now["lastSeen"] > 1_700_000_900_000
    # An import of those old rows again does not move lastSeen back.
    cli("import", str(f), db=other)
    assert agents(other)["cursor"]["lastSeen"] == now["lastSeen"]


# ---------------------------------------------------------------- a whole-store export carries dropped memories
def test_asof_before_a_drop_reads_the_same_after_a_move(cli, tmp_path, new_store):
    import time

    from conftest import iso
    from test_import import export, j, seed

    from ledger.service import Ledger

    a, b, gone = seed(cli, tmp_path)  # `gone` is forgotten after seed.before_drop
    linked = j(cli, "remember", "The cache server is redis-02", "--cluster", "code")["id"]
    j(cli, "link", a, linked)  # written, linked, then dropped: the log names it three times
    time.sleep(0.02)
    when = iso(int(time.time() * 1000))
    time.sleep(0.02)
    j(cli, "forget", linked)
    f, lines = export(cli, tmp_path)  # whole store: no query
    assert gone in {r["id"] for r in lines} and next(r for r in lines if r["id"] == gone)["deletedAt"]
    other = new_store("other")
    j(cli, "import", str(f), db=other)

    def asof(db) -> list[tuple[str, str]]:
        hits = j(cli, "search", f"asof:{when}", "--limit", "100", db=db)["hits"]
        return sorted((h["id"], h["text"]) for h in hits)

    before = asof(cli.db)
    assert linked in {i for i, _ in before} and gone not in {i for i, _ in before}
    assert asof(other) == before
    with Ledger.open(other) as led:  # the link to the dropped memory came along
        assert (min(a, linked), max(a, linked)) in led.links([linked])
    # Now (after the drop) both stores agree it is gone, and the import added nothing live.
    now = sorted(h["id"] for h in j(cli, "search", "", "--limit", "100")["hits"])
    assert sorted(h["id"] for h in j(cli, "search", "", "--limit", "100", db=other)["hits"]) == now
    assert gone not in now
    # Importing the same file again changes nothing.
    again = j(cli, "import", str(f), db=other)
    assert again.get("imported", 0) == 0, again
    assert asof(other) == before


# ---------------------------------------------------------------- small ones
def test_import_of_an_empty_file_name_names_it(cli):
    for name in ("", "  "):
        msg = fail(*cli("import", name))
        assert repr(name) in msg and "Nothing was imported" in msg and "Cannot read :" not in msg, msg


def test_long_cluster_labels_and_agent_ids_are_refused_and_change_nothing(cli):
    msg = fail(*cli("clusters", "add", "x" * 5000))
    assert "5,000 characters" in msg and "at most 80" in msg and "x" * 100 not in msg, msg
    assert "x" * 80 not in ok(*cli("clusters"))  # nothing was created
    long_agent = {"LEDGER_AGENT": "a" * 3000}
    msg = fail(*cli("remember", "The agent id is long", "--cluster", "proc", env=long_agent))
    assert "3,000 characters" in msg and "$LEDGER_AGENT" in msg and "a" * 100 not in msg, msg
    msg = fail(*cli("remember", "The agent id is long", "--cluster", "proc", "--agent", "b" * 65))
    assert "at most 64" in msg, msg
    assert json.loads(ok(*cli("search", "agent id is long", "--json")))["total"] == 0  # nothing was written
    ok(*cli("remember", "The agent id is 64 long", "--cluster", "proc", env={"LEDGER_AGENT": "c" * 64}))


def test_remember_with_a_missing_file_warns_and_still_remembers(cli, tmp_path):
    cli.create_store()  # only the missing file's warning (a first write also says it created the store)
    missing = tmp_path / "nope" / "file.py"
    rc, out, err = cli("remember", "The parser lives in file.py", "--cluster", "code", "--file", str(missing))
    assert rc == 0 and out.startswith("remembered "), (out, err)
    assert err.startswith("⚠ --file") and "no such file" in err, err
    rc, out, err = cli("remember", "The lexer lives in file.py", "--cluster", "code", "--file", str(missing), "--json")
    assert rc == 0 and json.loads(out)["files"][0]["path"] == str(missing)
    assert json.loads(err)["kind"] == "missing-file"
    present = tmp_path / "here.py"
    present.write_text("x = 1\n")
    rc, out, err = cli("remember", "The config lives in here.py", "--cluster", "code", "--file", str(present))
    assert rc == 0 and err == "", err


def test_a_named_text_source_has_no_fake_type_and_one_row(cli):
    """A --name is not a file name: its tail after a '.' was shown as the type, and a line
    break in it started a fake row of `ledger sources` (second fresh-user pass)."""
    ok(*cli("ingest", "-", "--name", "Meeting notes v2. Final version agreed by everyone", "--cluster", "proc",
            input="body one"))
    ok(*cli("ingest", "-", "--name", "a.md\nFAKE x.md 99 1 chunk", "--cluster", "proc", input="body two"))
    out = ok(*cli("sources"))
    rows = out.splitlines()[1:]
    assert len(rows) == 2 and all(r.startswith("—     ") for r in rows), out
    assert "a.md FAKE x.md 99 1 chunk" in out and "FINAL VERSION" not in out
    assert {s["ext"] for s in json.loads(ok(*cli("sources", "--json")))} == {""}
