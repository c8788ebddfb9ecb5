"""The web server's JSON API, in-process (Starlette TestClient over httpx), plus the
request guards, the static front end's safety rules and ``serve`` itself."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette")

with warnings.catch_warnings():  # Starlette 1.x nudges towards httpx2; httpx is what we ship with
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from conftest import BOTH_ENGINES

from ledger.service import Ledger  # noqa: E402
from ledger.web import security  # noqa: E402
from ledger.web.server import STATIC, create_app, serve  # noqa: E402
from ledger.web.views import NODE_TEXT  # noqa: E402

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient` is deprecated")

BASE = "http://127.0.0.1:7444"
ORIGIN = {"origin": BASE}


@pytest.fixture()
def store(store_target):
    """A small store: claims by two agents, a conflict, a candidate, a document with a
    distilled claim, a link and a dropped memory."""
    db = store_target
    ids: dict = {}
    with Ledger.open(db) as led:
        ids["python"] = led.remember("CI runs on Python 3.11 in GitHub Actions", cluster="code", agent="claude").memory.id
        ids["python2"] = led.remember("CI runs on Python 3.12 in GitHub Actions", cluster="code", agent="codex").memory.id
        cand = led.candidates(10)
        assert cand, "the proposer should pair the two Python claims"
        ids["conflict"] = led.judge(cand[0].id, "conflict", agent="claude", kind="value drift", detector=0.9, note="one of them is stale")
        ids["deploy"] = led.remember("Deploys go out on Tuesdays", cluster="proc", agent="claude").memory.id
        ids["tabs"] = led.remember("Prefers tabs over spaces in Makefiles", cluster="prefs", agent="codex").memory.id
        ids["gone"] = led.remember("The staging server is called kestrel", cluster="home", agent="claude").memory.id
        src = led.ingest_chunks("runbook.md", ["# Runbook\n\nCheck CI first.", "Then tag the release.", "Roll back by re-tagging."],
                                cluster="proc", agent="claude", trust=0.8)
        ids["source"] = src.source_id
        ids["distilled"] = led.remember("Rollback means re-tagging the previous release", cluster="proc", agent="claude",
                                        source_id=src.source_id).memory.id
        led.link(ids["deploy"], ids["tabs"], agent="claude")
        led.recall("deploys", agent="codex")
        led.forget([ids["gone"]], agent="claude")
        ids["chunk"] = led.source_detail(src.source_id)["chunks"][0].id
    return db, ids


@pytest.fixture()
def client(store):
    db, _ = store
    with TestClient(create_app(str(db)), base_url=BASE, headers=ORIGIN) as c:
        yield c


def hits_of(db, mid):
    with Ledger.open(db) as led:
        return led.get(mid).hits


# ---------------------------------------------------------------- reads
def test_health_and_stats(client, store):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json()["ok"] is True and r.json()["memories"] >= 8
    st = client.get("/api/stats").json()
    for key in ("memories", "claims", "chunks", "pending", "conflicts", "candidates", "sources", "agents", "requestsToday",
                "diskBytes", "clusters", "uptimeMs", "reviewQueue", "db"):
        assert key in st, key
    assert st["conflicts"] == 1 and st["sources"] == 1 and st["chunks"] == 3
    assert {c["id"] for c in st["clusters"]} >= {"code", "proc", "prefs"}


def test_meta_exposes_query_keys_for_autocomplete(client):
    m = client.get("/api/meta").json()
    assert m["keys"][:2] == ["agent", "cluster"] and "asof" in m["keys"]
    assert "asof" in m["keyHints"] and m["modes"] == ["hybrid", "keyword", "fuzzy"]
    assert "<40" in m["presets"]["strength"]


def test_search_never_counts_as_a_retrieval(client, store):
    db, ids = store
    before = hits_of(db, ids["deploy"])
    events_before = client.get("/api/stats").json()["requestsToday"]
    for _ in range(3):
        r = client.get("/api/search", params={"q": "deploys"})
        assert r.status_code == 200 and ids["deploy"] in [h["id"] for h in r.json()["hits"]]
    client.get(f"/api/memories/{ids['deploy']}")
    client.get("/api/graph", params={"q": "deploys"})
    assert hits_of(db, ids["deploy"]) == before
    assert client.get("/api/stats").json()["requestsToday"] == events_before  # no search events logged


def test_search_shape_sort_and_flags(client, store):
    _, ids = store
    r = client.get("/api/search", params={"q": "python"}).json()
    assert set(r) >= {"hits", "total", "tookMs", "capped"}
    assert r["total"] == 2 and all("score" in h for h in r["hits"])
    scores = [h["score"] for h in r["hits"]]
    assert scores == sorted(scores, reverse=True)  # relevance by default with text
    by_hits = client.get("/api/search", params={"sort": "hits", "dir": "desc"}).json()["hits"]
    assert [h["hits"] for h in by_hits] == sorted((h["hits"] for h in by_hits), reverse=True)
    conflicted = client.get("/api/search", params={"conflicted": "1"}).json()
    assert {h["id"] for h in conflicted["hits"]} == {ids["python"], ids["python2"]}
    pending = client.get("/api/search", params={"pending": "1", "kind": "claim"}).json()
    assert all(h["reviewedAt"] is None and h["kind"] == "claim" for h in pending["hits"])
    chunks = client.get("/api/search", params={"kind": "chunk"}).json()
    assert chunks["total"] == 3
    page = client.get("/api/search", params={"limit": 2, "offset": 2}).json()
    assert len(page["hits"]) == 2 and page["total"] == client.get("/api/search").json()["total"]


def test_search_mode_is_honoured(client):
    # "pyth" is a prefix: hybrid (prefix match) finds it, keyword (whole words) does not.
    assert client.get("/api/search", params={"q": "pyth", "mode": "hybrid"}).json()["total"] >= 2
    assert client.get("/api/search", params={"q": "pyth", "mode": "keyword"}).json()["total"] == 0
    # A typo: fuzzy finds it by trigrams, keyword does not.
    assert client.get("/api/search", params={"q": "kubernets", "mode": "keyword"}).json()["total"] == 0
    assert client.get("/api/search", params={"q": "deplois", "mode": "fuzzy"}).json()["total"] >= 1


def test_search_errors_are_json(client):
    r = client.get("/api/search", params={"q": "asof:yesterdayish"})
    assert r.status_code == 400
    body = r.json()
    assert body["kind"] == "invalid-query" and "asof:yesterdayish" in body["error"] and "date" in body["error"]
    assert client.get("/api/search", params={"mode": "psychic"}).json()["kind"] == "invalid-input"
    assert client.get("/api/search", params={"sort": "vibes"}).status_code == 400
    assert client.get("/api/search", params={"limit": "lots"}).status_code == 400
    assert client.get("/api/search", params={"limit": "100000"}).status_code == 400


def test_memory_detail_with_related(client, store):
    _, ids = store
    d = client.get(f"/api/memories/{ids['deploy']}").json()
    assert d["memory"]["id"] == ids["deploy"] and d["memory"]["factors"].keys() == {"used", "fresh", "corroborated"}
    assert [m["id"] for m in d["related"]] == [ids["tabs"]]  # linked first
    r = client.get("/api/memories/m_nope")
    assert r.status_code == 404 and r.json()["kind"] == "unknown-memory"
    # A dropped memory is still readable (asof: answers about it).
    assert client.get(f"/api/memories/{ids['gone']}").json()["memory"]["deletedAt"] is not None


def test_update_text_and_cluster(client, store):
    _, ids = store
    r = client.patch(f"/api/memories/{ids['tabs']}", json={"text": "Prefers tabs in Makefiles and spaces in Python"})
    assert r.status_code == 200 and "spaces in Python" in r.json()["memory"]["text"]
    assert client.get("/api/search", params={"q": "spaces", "mode": "keyword"}).json()["total"] == 1
    r = client.patch(f"/api/memories/{ids['tabs']}", json={"cluster": "code"})
    assert r.json()["memory"]["clusterId"] == "code"
    assert client.patch(f"/api/memories/{ids['tabs']}", json={}).status_code == 400
    assert client.patch(f"/api/memories/{ids['tabs']}", json={"cluster": "nowhere"}).json()["kind"] == "unknown-cluster"
    assert client.patch(f"/api/memories/{ids['chunk']}", json={"text": "x"}).json()["kind"] == "not-a-claim"


@pytest.mark.parametrize("body,field,suggestion", [
    ({"cluster": "Procedures"}, "cluster", "proc"),  # the label of an existing cluster
    ({"cluster": "code "}, "cluster", "code"),  # its id with a stray space
    ({"cluster": "nowhere"}, "cluster", None),
])
def test_errors_carry_fields_and_name_no_cli_flag(client, store, body, field, suggestion):
    _, ids = store
    d = client.patch(f"/api/memories/{ids['tabs']}", json=body).json()
    assert d["kind"] == "unknown-cluster" and d["field"] == field and d.get("suggestion") == suggestion
    assert "proc" in d["choices"] and "--" not in d["error"] and "ledger " not in d["error"]
    if suggestion:
        assert f'"{suggestion}"' in d["error"]


def test_a_bad_outcome_or_trust_names_no_cli_flag(client, store):
    _, ids = store
    d = client.post(f"/api/conflicts/{ids['conflict']}/resolve", json={"resolution": "maybe"}).json()
    assert d["kind"] == "invalid-input" and d["field"] == "outcome" and d["choices"] == ["a", "b", "both", "merge", "dismiss"]
    assert "--" not in d["error"] and "ledger resolve" not in d["error"]
    d = client.post(f"/api/sources/{ids['source']}/trust", json={"trust": 3}).json()
    assert d["field"] == "trust" and "--trust" not in d["error"]


# ---------------------------------------------------------------- bulk
def test_bulk_pin_archive_drop(client, store):
    db, ids = store
    r = client.post("/api/memories/bulk", json={"op": "pin", "ids": [ids["deploy"], ids["tabs"]]})
    assert r.json() == {"affected": 2}
    assert client.get(f"/api/memories/{ids['deploy']}").json()["memory"]["strength"] == 0.99
    client.post("/api/memories/bulk", json={"op": "unpin", "ids": [ids["deploy"]]})
    assert client.get(f"/api/memories/{ids['deploy']}").json()["memory"]["pinned"] is False
    client.post("/api/memories/bulk", json={"op": "archive", "ids": [ids["tabs"]]})
    assert ids["tabs"] not in [h["id"] for h in client.get("/api/search").json()["hits"]]
    assert ids["tabs"] in [h["id"] for h in client.get("/api/search", params={"archived": "1", "limit": 100}).json()["hits"]]
    assert client.post("/api/memories/bulk", json={"op": "drop", "ids": [ids["deploy"]]}).json() == {"affected": 1}
    assert client.get(f"/api/memories/{ids['deploy']}").json()["memory"]["deletedAt"] is not None


def test_bulk_merge_and_errors(client, store):
    _, ids = store
    r = client.post("/api/memories/bulk", json={"op": "merge", "ids": [ids["deploy"], ids["tabs"]]})
    assert r.status_code == 200 and r.json()["merged"]["id"] == ids["deploy"]
    assert client.post("/api/memories/bulk", json={"op": "merge", "ids": [ids["deploy"]]}).json()["error"] == "merge needs at least two memories"
    r = client.post("/api/memories/bulk", json={"op": "pin", "ids": []})
    assert r.status_code == 400 and r.json()["error"] == "no memories selected"
    assert client.post("/api/memories/bulk", json={"op": "explode", "ids": [ids["deploy"]]}).json()["kind"] == "invalid-input"
    assert client.post("/api/memories/bulk", json={"op": "pin", "ids": "m_1"}).status_code == 400
    assert client.post("/api/memories/bulk", json={"op": "pin", "ids": ["m_missing"]}).status_code == 404


def test_export_is_ndjson(client, store):
    _, ids = store
    r = client.post("/api/memories/bulk", json={"op": "export", "ids": [ids["deploy"], ids["tabs"]]})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-ndjson")
    assert 'filename="ledger-export.jsonl"' in r.headers["content-disposition"]
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert [x["id"] for x in lines] == [ids["deploy"], ids["tabs"]] and "factors" in lines[0]
    whole = client.get("/api/export", params={"q": "cluster:proc"})
    rows = [json.loads(x) for x in whole.text.splitlines()]
    assert len(rows) == client.get("/api/search", params={"q": "cluster:proc"}).json()["total"] and rows


# ---------------------------------------------------------------- review and conflicts
def test_review_bundle_and_actions(client, store):
    _, ids = store
    b = client.get("/api/review").json()
    assert set(b) >= {"claims", "conflicts", "candidates", "claimCount", "conflictCount", "candidateCount"}
    lane = [m["id"] for m in b["claims"]]
    assert ids["python"] not in lane and ids["deploy"] in lane  # conflicted claims are in the other lane
    assert b["conflicts"][0]["id"] == ids["conflict"] and b["conflicts"][0]["kind"] == "value drift"
    r = client.post(f"/api/review/{ids['deploy']}/keep", json={})
    assert r.status_code == 200 and r.json()["memory"]["reviewedAt"] is not None
    r = client.post(f"/api/review/{ids['tabs']}/edit", json={"text": "Prefers tabs in Makefiles only"})
    assert r.json()["memory"]["text"] == "Prefers tabs in Makefiles only"
    assert client.post(f"/api/review/{ids['distilled']}/pin", json={}).json()["memory"]["pinned"] is True
    assert client.post(f"/api/review/{ids['tabs']}/drop", json={}).json() == {"dropped": ids["tabs"]}
    assert client.post(f"/api/review/{ids['deploy']}/bless", json={}).status_code == 400
    r = client.post(f"/api/review/{ids['chunk']}/keep", json={})
    assert r.status_code == 400 and r.json()["kind"] == "not-a-claim"
    assert client.get("/api/review").json()["claimCount"] == b["claimCount"] - 3


def test_resolve_conflict(client, store):
    _, ids = store
    assert client.post(f"/api/conflicts/{ids['conflict']}/resolve", json={}).status_code == 400
    assert client.post(f"/api/conflicts/{ids['conflict']}/resolve", json={"resolution": "maybe"}).json()["kind"] == "invalid-input"
    r = client.post(f"/api/conflicts/{ids['conflict']}/resolve", json={"resolution": "b"})
    assert r.status_code == 200 and r.json()["resolved"] == ids["conflict"] and r.json()["resolution"] == "b"
    # A (the older claim) is retired, B kept and reviewed.
    assert client.get(f"/api/memories/{ids['python']}").json()["memory"]["deletedAt"] is not None
    assert client.get(f"/api/memories/{ids['python2']}").json()["memory"]["reviewedAt"] is not None
    again = client.post(f"/api/conflicts/{ids['conflict']}/resolve", json={"resolution": "a"})
    assert again.status_code == 404 and again.json()["kind"] == "unknown-conflict"


# ---------------------------------------------------------------- sources
def test_sources_trust_and_drop(client, store):
    _, ids = store
    d = client.get("/api/sources").json()
    (s,) = d["sources"]
    assert s["chunkCount"] == 3 and s["claimCount"] == 1 and len(s["chunkPreview"]) == 3
    assert s["claimList"][0]["id"] == ids["distilled"] and d["totals"]["documents"] == 1
    r = client.post(f"/api/sources/{ids['source']}/trust", json={"trust": 0.3})
    assert r.json()["trust"] == 0.3
    chunk = client.get(f"/api/memories/{ids['chunk']}").json()["memory"]
    assert chunk["strength"] == 0.3  # every chunk moves with its document
    assert client.post(f"/api/sources/{ids['source']}/trust", json={"trust": "high"}).status_code == 400
    assert client.post(f"/api/sources/{ids['source']}/trust", json={"trust": True}).status_code == 400
    assert client.post("/api/sources/s_nope/trust", json={"trust": 0.5}).status_code == 404
    one = client.get(f"/api/sources/{ids['source']}", params={"preview": 1}).json()
    assert len(one["chunkPreview"]) == 1
    client.post(f"/api/review/{ids['distilled']}/keep", json={})
    r = client.request("DELETE", f"/api/sources/{ids['source']}", json={})
    assert r.json() == {"chunks": 3, "flagged": 1}
    assert client.get("/api/sources").json()["sources"] == []
    # The distilled claim is back in review.
    assert ids["distilled"] in [m["id"] for m in client.get("/api/review").json()["claims"]]


# ---------------------------------------------------------------- graph, overview
def test_graph_nodes_links_and_asof(client, store):
    _, ids = store
    g = client.get("/api/graph").json()
    kinds = {n["kind"] for n in g["nodes"]}
    assert kinds == {"claim"}  # claims by default
    node_ids = {n["id"] for n in g["nodes"]}
    assert {"a": min(ids["deploy"], ids["tabs"]), "b": max(ids["deploy"], ids["tabs"]), "kind": "link"} in g["links"]
    assert any(link["kind"] == "conflict" for link in g["links"])
    assert all(link["a"] in node_ids and link["b"] in node_ids for link in g["links"])
    assert {c["id"] for c in g["clusters"]} >= {"code", "proc"}
    n = next(n for n in g["nodes"] if n["id"] == ids["python"])
    assert n["conflict"] is True and n["color"].startswith("#") and {"strength", "hits", "createdAt", "writer"} <= set(n)
    assert ids["gone"] not in node_ids
    assert {n["kind"] for n in client.get("/api/graph", params={"kind": "all"}).json()["nodes"]} == {"claim", "chunk"}
    assert {n["kind"] for n in client.get("/api/graph", params={"kind": "chunk"}).json()["nodes"]} == {"chunk"}
    # A true as-of view: the memory dropped since is back, with its drop time.
    with Ledger.open(store[0]) as led:
        gone = led.get(ids["gone"])
    at = gone.deleted_at - 1
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at / 1000)) + f".{at % 1000:03d}Z"
    past = client.get("/api/graph", params={"q": f"asof:{iso}"}).json()
    back = [n for n in past["nodes"] if n["id"] == ids["gone"]]
    assert back and back[0]["deletedAt"] == gone.deleted_at
    limited = client.get("/api/graph", params={"limit": 2}).json()
    assert len(limited["nodes"]) == 2 and limited["capped"] is True and limited["total"] > 2


def test_graph_node_text_is_truncated():
    from ledger.web.views import graph_node

    with Ledger.open(":memory:") as led:
        m = led.remember("word " * 100, cluster="code", agent="a").memory
    n = graph_node(m)
    assert len(n["text"]) == NODE_TEXT and n["text"].endswith("…")


def test_clusters_agents_events_facets_timeline(client, store):
    r = client.post("/api/clusters", json={"label": "Client work"})
    assert r.status_code == 200 and r.json()["id"] == "client-work"
    assert client.post("/api/clusters", json={}).json() == {"error": "label is required", "kind": "invalid-input"}
    assert any(c["id"] == "client-work" for c in client.get("/api/clusters").json())
    ag = client.get("/api/agents").json()
    by = {a["id"]: a for a in ag["agents"]}
    assert by["codex"]["calls"] >= 1 and by["codex"]["hitRate"] == 1.0 and by["claude"]["wrote"] >= 4
    assert any({p["a"], p["b"]} == {"claude", "codex"} for p in ag["overlap"])
    ev = client.get("/api/events", params={"limit": 5}).json()["events"]
    assert len(ev) == 5 and ev[0]["id"] > ev[-1]["id"]
    newer = client.get("/api/events", params={"after": ev[1]["id"]}).json()["events"]
    assert [e["id"] for e in newer] == [ev[0]["id"]]
    f = client.get("/api/facets").json()
    assert f["cluster"]["proc"] >= 4 and f["flags"]["conflicted"] == 2 and f["origin"]["doc"] == 4
    t = client.get("/api/timeline", params={"buckets": 10}).json()
    assert len(t["counts"]) == 10 and sum(t["counts"]) == client.get("/api/stats").json()["memories"]


def test_unknown_api_path_is_json_404(client):
    r = client.get("/api/nothing/here")
    assert r.status_code == 404 and r.json()["kind"] == "not-found"


def test_concurrent_requests_use_per_thread_connections(client, store):
    _, ids = store

    def hit(i):
        r = client.get("/api/search", params={"q": "python" if i % 2 else "deploys"})
        return r.status_code

    with ThreadPoolExecutor(8) as ex:
        assert set(ex.map(hit, range(48))) == {200}


# ---------------------------------------------------------------- security
@pytest.mark.parametrize("host", ["127.0.0.1:7444", "localhost:7444", "[::1]:7444", "localhost", "127.0.0.1"])
def test_loopback_hosts_are_served(store, host):
    with TestClient(create_app(str(store[0]), port=7444), base_url=BASE) as c:
        assert c.get("/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:7444", "127.0.0.1.nip.io:7444", "localhost:9999", "127.0.0.1:7444@evil", ""])
def test_foreign_hosts_are_refused(store, host):
    with TestClient(create_app(str(store[0]), port=7444), base_url=BASE) as c:
        r = c.get("/api/stats", headers={"host": host})
        assert r.status_code == 403 and r.json()["kind"] == "forbidden-host"


def test_state_changes_need_same_origin_and_json(store):
    _, ids = store
    url = f"/api/review/{ids['deploy']}/keep"
    with TestClient(create_app(str(store[0]), port=7444), base_url=BASE) as c:
        assert c.post(url, json={}).status_code == 403  # no Origin, no Sec-Fetch-Site
        r = c.post(url, json={}, headers={"origin": "http://evil.example"})
        assert r.status_code == 403 and r.json()["kind"] == "cross-origin"
        assert c.post(url, json={}, headers={"origin": "http://127.0.0.1:9999"}).status_code == 403
        assert c.post(url, json={}, headers={"origin": "null"}).status_code == 403
        assert c.post(url, json={}, headers={"origin": BASE, "sec-fetch-site": "cross-site"}).status_code == 403
        form = c.post(url, content=b"a=1", headers={"origin": BASE, "content-type": "application/x-www-form-urlencoded"})
        assert form.status_code == 415 and form.json()["kind"] == "unsupported-media-type"
        plain = c.post(url, content=b"{}", headers={"origin": BASE, "content-type": "text/plain"})
        assert plain.status_code == 415
        assert c.request("DELETE", f"/api/sources/{ids['source']}", headers={"origin": BASE}).status_code == 415
        # Nothing above changed the store.
        assert c.get(f"/api/memories/{ids['deploy']}").json()["memory"]["reviewedAt"] is None
        assert c.post(url, json={}, headers={"sec-fetch-site": "same-origin"}).status_code == 200
        assert c.post(f"/api/review/{ids['tabs']}/keep", json={}, headers={"origin": BASE}).status_code == 200
        bad = c.post(f"/api/review/{ids['gone']}/keep", content=b"{not json", headers={"origin": BASE, "content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["kind"] == "invalid-input"


def test_security_headers_and_no_cors(client):
    r = client.get("/", headers={"origin": "http://evil.example"})
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    api = client.get("/api/stats", headers={"origin": "http://evil.example"})
    assert "access-control-allow-origin" not in api.headers


def test_guard_helpers():
    assert security.split_host("localhost:7444") == ("localhost", 7444)
    assert security.split_host("[::1]:80") == ("::1", 80)
    assert security.split_host("[::1]") == ("::1", None)
    assert security.split_host("::1") is None and security.split_host("a:b") is None and security.split_host("[::1") is None
    assert security.host_allowed("LOCALHOST:7444", names=security.LOOPBACK_NAMES, port=7444)
    assert not security.host_allowed(None, names=security.LOOPBACK_NAMES, port=None)
    assert not security.host_allowed("box.lan:7444", names=(), port=7444, ip_literals=True)
    assert security.host_allowed("192.168.1.5:7444", names=(), port=7444, ip_literals=True)
    assert security.host_allowed("box.lan:7444", names=("box.lan",), port=7444)
    assert security.is_loopback_host("127.0.0.2") and security.is_loopback_host("[::1]") and not security.is_loopback_host("0.0.0.0")
    assert security.same_origin("GET", "x", None, None) is None
    assert security.same_origin("POST", "127.0.0.1:1", "http://127.0.0.1:1", None) is None
    assert security.same_origin("POST", "127.0.0.1:1", None, "same-site") is not None


# ---------------------------------------------------------------- the front end's files
def test_index_and_static_assets(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/js/app.js">' in r.text
    js = client.get("/static/js/app.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert client.get("/static/app.css").status_code == 200
    assert client.get("/static/js/nope.js").status_code == 404


def test_front_end_never_parses_html_and_loads_nothing_remote():
    """Memory text is rendered as text: no innerHTML-style sinks anywhere, no inline
    scripts or handlers in the page, no CDN."""
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|setAttribute\(\s*['\"]on")
    files = list((STATIC / "js").glob("*.js"))
    assert {f.name for f in files} >= {"api.js", "app.js", "review.js", "browse.js", "sources.js", "canvas.js", "connections.js"}
    for f in files:
        text = f.read_text()
        assert not sinks.search(text), f.name
        assert "http://" not in text and "https://" not in text, f.name
    html = (STATIC / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and not re.search(r"\son[a-z]+=", html)
    assert "https://" not in html and "http://" not in html


def test_first_run_commands_are_current():
    text = (STATIC / "js" / "connections.js").read_text()
    for cmd in ("pipx install .", "uv tool install .", "pip install git+<repository URL>", "ledger install claude-code", "ledger remember", "--cluster code", "ledger recall",
                "ledger ingest notes.md --cluster reading"):
        assert cmd in text
    everything = " ".join(p.read_text() for p in STATIC.rglob("*") if p.is_file() and p.suffix in (".js", ".html"))
    assert "mcp" not in everything.lower() and "skill install" not in everything


def test_web_package_import_is_light():
    code = "import sys, ledger.web, ledger.web.views, ledger.web.security; print(any(m.split('.')[0] in ('starlette', 'uvicorn') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- serve()
def test_serve_refuses_remote_without_flag(store_target, capsys):
    assert serve(str(store_target), host="0.0.0.0", port=0) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_serve_reports_a_busy_port(store_target, capsys):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        assert serve(str(store_target), port=s.getsockname()[1]) == 1
        assert "--port 0" in capsys.readouterr().err
    finally:
        s.close()


def test_serve_port_zero_prints_banner_and_answers(store):
    db, _ = store
    code = f"import sys; from ledger.web.server import serve; sys.exit(serve({str(db)!r}, port=0))"
    with subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            first = proc.stdout.readline()
            m = re.match(r"● LEDGER running   (http://127\.0\.0\.1:(\d+)/)$", first.rstrip("\n"))
            assert m, first
            url, port = m.group(1), int(m.group(2))
            assert port != 0
            second, third = proc.stdout.readline(), proc.stdout.readline()
            assert re.search(r"\d+ memories · \d+ pending review · ", second) and second.rstrip().endswith(str(db))
            assert ("Bound to loopback. Nothing in this store leaves this machine." in third if isinstance(db, Path)
                    else "Bound to loopback. The store is a shared PostgreSQL database" in third)
            for _ in range(50):
                try:
                    r = httpx.get(url + "health", timeout=2)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert r.json()["ok"] is True
            assert httpx.get(url + "api/stats", headers={"host": f"evil.example:{port}"}).status_code == 403
            assert httpx.get(url + "api/stats", headers={"host": f"localhost:{port + 1}"}).status_code == 403
        finally:
            proc.terminate()
            proc.communicate(timeout=10)
    assert not isinstance(db, Path) or db.exists()


def test_serve_remote_needs_the_flag_and_warns(store):
    db, _ = store
    code = f"import sys; from ledger.web.server import serve; sys.exit(serve({str(db)!r}, host='0.0.0.0', port=0, allow_remote=True))"
    with subprocess.Popen([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            first = proc.stdout.readline()
            port = int(re.search(r":(\d+)/", first).group(1))
            proc.stdout.readline()
            warning = proc.stdout.readline()
            assert "⚠ Bound to 0.0.0.0, not loopback" in warning and "token" in warning and "every memory" in warning
            for _ in range(50):
                try:
                    r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert r.status_code == 200
            # The Host check stays on: a name nobody allowed is refused (DNS rebinding).
            assert httpx.get(f"http://127.0.0.1:{port}/health", headers={"host": f"box.lan:{port}"}).status_code == 403
            # Same-origin rules still hold for writes.
            assert httpx.post(f"http://127.0.0.1:{port}/api/clusters", json={"label": "x"},
                              headers={"host": f"127.0.0.1:{port}", "origin": "http://evil.example"}).status_code == 403
        finally:
            proc.terminate()
            proc.communicate(timeout=10)
