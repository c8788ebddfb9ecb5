"""The shapes of ``--json`` (docs/cli.md "The shapes of --json"): things are an array,
a report or one thing is an object, through the real commands on both engines.

``recall --json`` is pinned as an array on purpose: it is the agents' format, kept when
``search --json`` and the MCP tool wrap their hits (the reasons are in docs/cli.md); a
change to it must be a decision, not a drift. Its elements are what the MCP ``recall``
tool gives with ``detail: true``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def run(cli, *argv, input=None):
    rc, out, err = cli(*argv, "--json", input=input)
    assert rc == 0, (argv, err)
    return json.loads(out), err


@pytest.fixture
def seeded(cli, tmp_path):
    a, _ = run(cli, "remember", "The staging database renews every 12 months", "--cluster", "money", "--agent", "claude")
    b, _ = run(cli, "remember", "The staging database renews every 24 months", "--cluster", "money", "--agent", "codex")
    doc = tmp_path / "runbook.md"
    doc.write_text("# Staging\n\nStaging deploys need the VPN up.\n")
    run(cli, "ingest", str(doc), "--cluster", "proc")
    return a, b


ARRAYS = [("recall", "staging"), ("clusters",), ("sources",), ("conflicts",), ("checkpoints",)]
REPORTS = {("search", "staging"): {"hits", "total", "tookMs", "capped", "warnings"}, ("stats",): {"memories", "claims"},
           ("review",): {"claims", "conflicts"}}


@pytest.mark.parametrize("argv", ARRAYS, ids=lambda a: a[0])
def test_things_are_an_array(cli, seeded, argv):
    got, _ = run(cli, *argv)
    assert isinstance(got, list), got


@pytest.mark.parametrize("argv", list(REPORTS), ids=lambda a: a[0])
def test_reports_are_objects(cli, seeded, argv):
    got, _ = run(cli, *argv)
    assert isinstance(got, dict) and REPORTS[argv] <= set(got), got


def test_one_thing_is_an_object(cli, seeded, tmp_path):
    a, b = seeded
    assert isinstance(a, dict) and a["id"]
    for argv in (("show", a["id"]), ("link", a["id"], b["id"])):
        got, _ = run(cli, *argv)
        assert isinstance(got, dict), (argv, got)
    exported = tmp_path / "all.jsonl"
    rc, out, err = cli("export")
    assert rc == 0 and all(isinstance(json.loads(line), dict) for line in out.splitlines())  # JSON lines
    exported.write_text(out)
    got, _ = run(cli, "import", str(exported))
    assert isinstance(got, dict)
    got, _ = run(cli, "forget", b["id"])
    assert isinstance(got, dict)


def test_recall_is_an_array_of_what_show_and_search_give(cli, seeded):
    """The example: ``recall --json`` prints a bare array (decided: kept, docs/cli.md).
    Each element is the memory ``show --json`` gives, plus ``fileChanges`` and ``score``:
    the keys of a ``search --json`` hit and more, never fewer."""
    hits, _ = run(cli, "recall", "staging database")
    assert isinstance(hits, list) and len(hits) >= 2
    found, _ = run(cli, "search", "staging database")
    assert {h["id"] for h in hits} == {h["id"] for h in found["hits"]}
    same = {h["id"]: h for h in found["hits"]}
    for h in hits:
        assert set(same[h["id"]]) | {"fileChanges"} == set(h) and "score" in h
        if h["kind"] == "claim":  # show adds a chunk's sourceTrust, and every memory's history
            shown, _ = run(cli, "show", h["id"])
            assert set(shown) - {"history", "formerTexts"} <= set(h)


def test_recall_warnings_reach_a_json_reader_on_stderr(cli, seeded):
    """What ``search`` puts in its body, ``recall`` writes as JSON lines on stderr: the
    array on stdout stays the answer alone."""
    hits, err = run(cli, "recall", "cluster:nope staging")
    assert hits == []
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert [w["kind"] for w in lines] == ["unknown-cluster"], err
    found, _ = run(cli, "search", "cluster:nope staging")
    assert [w["kind"] for w in found["warnings"]] == ["unknown-cluster"]


def test_the_mcp_recall_detail_hits_are_recall_json_elements(cli, seeded, tmp_path, monkeypatch):
    """Item for item the MCP tool and the CLI agree (docs/mcp.md ``detail: true``): the
    same keys, the same memories in the same order; only the wrapper differs."""
    pytest.importorskip("mcp")
    from test_mcp import connect, ok
    from test_mcp import run as run_async

    monkeypatch.chdir(tmp_path)
    hits, _ = run(cli, "recall", "staging database")

    async def go():
        async with connect(cli.db) as s:
            return ok(await s.call_tool("recall", {"query": "staging database", "detail": True}))

    body = run_async(go)
    assert set(body) >= {"warnings", "hits", "total"}
    assert [h["id"] for h in body["hits"]] == [h["id"] for h in hits]
    assert [set(h) for h in body["hits"]] == [set(h) for h in hits]


def test_the_docs_table_names_every_shape_tested():
    text = DOCS.read_text()
    section = text[text.index("## The shapes of `--json`"):text.index("## Control characters")]
    for argv in [*ARRAYS, *REPORTS]:
        assert f"`{argv[0]}`" in section, argv[0]
    assert "Why `recall --json` stays an array" in section
