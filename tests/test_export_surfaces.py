"""One export whichever surface asks: ``ledger export``, the web UI's ``/api/export``
(EXPORT ALL in Browse) and its export of selected memories write the same records
through one code path (``Ledger.export_lines``), history lines included, so a file saved
from the browser restores as much as one from the command line (issue: ``/api/export``
carried memories only, without links, sources, conflicts or the log).

Real processes throughout: the CLI, a ``ledger serve`` child and ``ledger import``."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import Cli
from liveserve import LiveServe

from ledger.service import Ledger

pytest.importorskip("starlette")

#: Computed at read time (strength moves with the clock), so two reads a moment apart differ.
VOLATILE = ("strength", "factors", "score")


@pytest.fixture()
def store(store_target):
    db = store_target
    ids = {}
    with Ledger.open(db) as led:
        ids["old"] = led.remember("CI runs on Python 3.11 in GitHub Actions", cluster="code", agent="claude").memory.id
        ids["new"] = led.remember("CI runs on Python 3.12 in GitHub Actions", cluster="code", agent="codex").memory.id
        cand = led.candidates(10)
        assert cand, "the proposer pairs the two Python claims"
        ids["conflict"] = led.judge(cand[0].id, "conflict", agent="claude", kind="value drift", detector=0.9)
        ids["deploy"] = led.remember("Deploys go out on Tuesdays", cluster="proc", agent="claude").memory.id
        src = led.ingest_chunks("runbook.md", ["# Runbook\n\nCheck CI first.", "Then tag the release."],
                                cluster="proc", agent="claude", trust=0.8)
        ids["source"] = src.source_id
        led.link(ids["deploy"], ids["old"], agent="claude")
    return db, ids


def _stable(text: str) -> list[dict]:
    rows = [json.loads(line) for line in text.splitlines()]
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def _cli_export(db, *query) -> str:
    rc, out, err = Cli(db)("export", *query)
    assert rc == 0, err
    return out


def test_the_web_export_is_the_cli_export(store):
    db, ids = store
    with LiveServe(db) as srv:
        whole = httpx.get(srv.url + "api/export", timeout=30)
        part = httpx.get(srv.url + "api/export", params={"q": "cluster:code"}, timeout=30)
    assert whole.status_code == 200 and whole.headers["content-type"].startswith("application/x-ndjson")
    cli_whole = _stable(_cli_export(db))
    assert _stable(whole.text) == cli_whole
    kinds = {r.get("record", "memory") for r in cli_whole}
    assert {"memory", "conflict", "event"} <= kinds, kinds  # history lines, not memories only
    deploy = next(r for r in cli_whole if r.get("id") == ids["deploy"])
    assert deploy["links"] == [ids["old"]]
    chunk = next(r for r in cli_whole if r.get("sourceId") == ids["source"])
    assert chunk["source"]["filename"] == "runbook.md"
    # A query exports its matches and the conflicts among them, on both surfaces alike.
    assert _stable(part.text) == _stable(_cli_export(db, "cluster:code"))
    # (the candidate pair the conflict was judged from comes along with its verdict)
    assert [r["record"] for r in _stable(part.text) if "record" in r] == ["conflict", "candidate"]


def test_exporting_selected_memories_carries_their_links_source_and_conflicts(store):
    db, ids = store
    with LiveServe(db) as srv:
        r = httpx.post(srv.url + "api/memories/bulk", json={"op": "export", "ids": [ids["new"], ids["old"], ids["new"]]},
                       headers=srv.origin, timeout=30)
        unknown = httpx.post(srv.url + "api/memories/bulk", json={"op": "export", "ids": [ids["old"], "m_nosuchid"]},
                             headers=srv.origin, timeout=30)
    assert r.status_code == 200, r.text
    rows = _stable(r.text)
    assert [x["id"] for x in rows if "record" not in x] == [ids["new"], ids["old"]]  # as asked, once each
    assert [x["record"] for x in rows if "record" in x] == ["conflict", "candidate"]
    assert next(x for x in rows if x.get("id") == ids["old"])["links"] == [ids["deploy"]]
    # An unknown id is an error naming it, not a file missing a memory.
    assert unknown.status_code == 404 and "m_nosuchid" in unknown.json()["error"]


def test_a_file_saved_from_the_browser_restores_the_history(store, tmp_path, new_store):
    db, ids = store
    with LiveServe(db) as srv:
        saved = httpx.get(srv.url + "api/export", timeout=30).text
    dump = tmp_path / "from-browser.jsonl"
    dump.write_text(saved, encoding="utf-8")
    other = new_store("other")
    cli = Cli(other)
    rc, out, err = cli("import", str(dump), "--json")
    assert rc == 0, err
    r = json.loads(out)
    assert r["conflicts"] == 1 and r["events"] >= 4 and r["links"] == 1 and r["sources"] == 1, r
    with Ledger.open(other) as led:
        assert [c.id for c in led.conflicts()] == [ids["conflict"]]
