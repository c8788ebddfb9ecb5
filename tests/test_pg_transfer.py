"""``ledger export`` / ``ledger import`` move a local SQLite store into a shared
PostgreSQL store and back (issue 20), through the real command: every memory, read,
reader, link, source and drop survives both moves, and moving twice adds nothing."""

from __future__ import annotations

import json
import time

from conftest import Cli, iso

DOC = "# Staging\n\nStaging deploys need the VPN up.\n\n# Rollbacks\n\nRollbacks use the previous tag.\n"
KEYS = ("id", "text", "kind", "clusterId", "writer", "createdAt", "lastReadAt", "hits", "pinned", "sourceId", "deletedAt")


def j(cli, *argv, db=True, input=None):
    rc, out, err = cli(*argv, "--json", db=db, input=input)
    assert rc == 0, err
    return json.loads(out)


def dump(cli, db, asof: str) -> dict[str, dict]:
    """The memories of the store at ``db`` as of ``asof`` (before the drop, so the
    dropped one is among them, with its ``deletedAt``)."""
    rc, out, err = cli("export", f"asof:{asof}", db=db)
    assert rc == 0, err
    return {r["id"]: r for r in map(json.loads, out.splitlines())}


def test_a_local_store_moves_into_a_shared_one_and_back(db_file, pg_url, tmp_path):
    cli = Cli(db_file)
    a = j(cli, "remember", "CI runs on Python 3.11", "--cluster", "code", "--agent", "claude")["id"]
    b = j(cli, "remember", "The deploy key lives in the vault", "--cluster", "proc", "--agent", "codex")["id"]
    gone = j(cli, "remember", "The old build server is ci-01", "--cluster", "code", "--agent", "claude")["id"]
    j(cli, "recall", "python CI", "--agent", "opencode")
    j(cli, "link", a, b)
    doc = tmp_path / "runbook.md"
    doc.write_text(DOC)
    j(cli, "ingest", str(doc), "--cluster", "proc", "--trust", "0.9")
    time.sleep(0.02)
    before_drop = iso(int(time.time() * 1000))
    time.sleep(0.02)
    j(cli, "forget", gone)
    local = dump(cli, db_file, before_drop)
    assert len(local) == 5 and local[gone]["deletedAt"]

    # local -> shared, as the README says: export piped into import
    rc, out, err = cli("export", f"asof:{before_drop}")
    assert rc == 0, err
    moved = j(cli, "import", "-", db=pg_url, input=out)
    assert moved["imported"] == 5 and moved["sources"] == 1 and moved["links"] == 1
    shared = dump(cli, pg_url, before_drop)
    assert set(shared) == set(local)
    for mid, m in local.items():
        assert {k: shared[mid][k] for k in KEYS} == {k: m[k] for k in KEYS}, mid
        assert sorted(shared[mid]["readers"]) == sorted(m["readers"])
    assert "opencode" in shared[a]["readers"]
    # the shared store answers as the local one did: words, context, asof:
    assert [h["id"] for h in j(cli, "search", "python", db=pg_url)["hits"]] == [a]
    assert any("VPN" in h["text"] for h in j(cli, "search", "staging vpn", db=pg_url)["hits"])
    assert not j(cli, "search", "build server", db=pg_url)["hits"]
    assert [h["id"] for h in j(cli, "search", "build server", f"asof:{before_drop}", db=pg_url)["hits"]] == [gone]

    # moving again adds nothing
    again = j(cli, "import", "-", db=pg_url, input=out)
    assert again["imported"] == 0 and len(dump(cli, pg_url, before_drop)) == 5

    # shared -> a new local store: the same memories again
    rc, out2, err = cli("export", f"asof:{before_drop}", db=pg_url)
    assert rc == 0, err
    back_db = tmp_path / "back" / "ledger.db"
    assert j(cli, "import", "-", db=back_db, input=out2)["imported"] == 5
    back = dump(cli, back_db, before_drop)
    for mid, m in local.items():
        assert {k: back[mid][k] for k in KEYS} == {k: m[k] for k in KEYS}, mid
