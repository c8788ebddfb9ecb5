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
    # --text with a PATH names the source the same way.
    c = json.loads(ok(*cli("ingest", "oncall.txt", "--text", "The pager rotates on Sundays", "--cluster", "proc",
                           "--json")))
    assert c["sourceId"] == a["sourceId"], c
    assert "--name" in fail(*cli("ingest", "-", "--name", "x" * 300, "--cluster", "proc", input="text"))
    assert "a file is known by its path" in fail(*cli("ingest", "README.md", "--name", "r", "--cluster", "proc"))
