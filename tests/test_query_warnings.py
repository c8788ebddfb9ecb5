"""A ``cluster:`` naming no cluster matches nothing, and every surface says so
(fresh-user defect: only the CLI warned). The library puts the warning on the result
(``SearchResult.warnings()``, JSON ``warnings``); the web API's search carries it; the
CLI prints it on stderr. Real store files and the real Starlette app."""

from __future__ import annotations

import pytest

from ledger.service import Ledger

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from ledger.web.server import create_app  # noqa: E402

BASE = "http://127.0.0.1:7444"


@pytest.fixture()
def db(store_target):
    p = store_target
    with Ledger.open(p) as led:
        led.remember("Deploys need the VPN", cluster="proc", agent="t")
    return p


@pytest.mark.parametrize("query,unknown", [
    ("deploy cluster:prco", ["prco"]),  # a typo of a known cluster
    ("cluster:nope cluster:zz", ["nope", "zz"]),  # several, no words
    ("deploy cluster:proc cluster:gone", ["gone"]),  # one known, one not
])
def test_library_search_recall_and_export_carry_the_warning(db, query, unknown):
    with Ledger.open(db) as led:
        for res in (led.search(query), led.recall(query, agent="t")):
            (w,) = res.warnings()
            assert w["kind"] == "unknown-cluster" and "proc" in w["known"]
            assert all(f'"{c}"' in w["warning"] for c in unknown) and "ledger" not in w["warning"]
            assert res.to_dict()["warnings"] == [w]
        assert led.query_warnings(query) == [w]


def test_no_warning_for_known_clusters_or_no_cluster_filter(db):
    with Ledger.open(db) as led:
        for q in ("deploy", "deploy cluster:proc", "cluster:proc cluster:code"):
            assert led.search(q).warnings() == [] and led.search(q).to_dict()["warnings"] == []
            assert led.query_warnings(q) == []


def test_web_search_answers_with_the_warning(db):
    with TestClient(create_app(str(db)), base_url=BASE) as c:
        d = c.get("/api/search", params={"q": "deploy cluster:prco"}).json()
        ok = c.get("/api/search", params={"q": "deploy cluster:proc"}).json()
    assert d["warnings"][0]["kind"] == "unknown-cluster" and '"prco"' in d["warnings"][0]["warning"]
    assert ok["warnings"] == [] and ok["total"] == 1
