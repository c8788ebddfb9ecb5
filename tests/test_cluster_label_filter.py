"""``cluster:`` takes a cluster's label as well as its id. A fresh user typed
``cluster:procedures deploy`` (the label the output shows) and got nothing, because the
cluster's id is ``proc``. A value that is no id but is a cluster's label (any case, or
the label's slug) now searches that cluster, and a ``cluster-label`` warning says which
id it took; an id always wins over a label. Both engines; the CLI as a subprocess, MCP
through its stdio server."""

from __future__ import annotations

import json

import pytest
from conftest import BOTH_ENGINES
from test_mcp import connect, ok, run
from test_mcp_warnings import cli, stderr_warnings

from ledger.service import Ledger

ENGINES = BOTH_ENGINES


@pytest.fixture
def store(store_target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Ledger.open(store_target) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")
        led.remember("The deploy budget is 40 EUR a month", cluster="money", agent="a")
        # A cluster whose id is another cluster's label: the id wins.
        led.add_cluster("spending", cluster_id="finances")
        led.remember("Deploy receipts go to the finance inbox", cluster="finances", agent="a")
        for label in ("Client work", "Side quests", "Side projects"):
            led.add_cluster(label)
    return store_target


@pytest.mark.parametrize("query,ids,hits", [
    ("cluster:procedures deploy", ["proc"], ["Staging deploys need the VPN up"]),
    ("cluster:PROCEDURES deploy", ["proc"], ["Staging deploys need the VPN up"]),
    ("deploy cluster:home-devices", ["home"], []),  # the slug of "home & devices"
])
def test_a_label_searches_its_cluster_and_says_so(store, query, ids, hits):
    rc, out, errout = cli("search", *query.split(), "--json", db=store)
    assert rc == 0, errout
    body = json.loads(out)
    assert [h["text"] for h in body["hits"]] == hits
    (w,) = body["warnings"]
    assert w["kind"] == "cluster-label" and w["ids"] == ids
    assert f"searched cluster:{ids[0]}" in w["warning"] and "ledger" not in w["warning"]
    rc, out, errout = cli("recall", *query.split(), db=store)
    assert rc == 0, errout
    assert all(h in out for h in hits)
    assert f"⚠ cluster:{query.split('cluster:')[1].split()[0].lower()} is the label" in errout
    rc, _, errout = cli("recall", *query.split(), "--json", db=store)
    assert [x["kind"] for x in stderr_warnings(errout)] == ["cluster-label"]


def test_an_id_wins_over_a_label_and_ids_do_not_warn(store):
    with Ledger.open(store) as led:
        # "finances" is the id of one cluster and the label of money: the id wins.
        res = led.search("deploy cluster:finances")
        assert [m.text for m in res.hits] == ["Deploy receipts go to the finance inbox"] and res.warnings() == []
        # "spending" is that cluster's label and no id.
        res = led.search("deploy cluster:spending")
        assert [m.text for m in res.hits] == ["Deploy receipts go to the finance inbox"]
        assert [(w["kind"], w["ids"]) for w in res.warnings()] == [("cluster-label", ["finances"])]
        for q in ("deploy cluster:proc", "deploy cluster:money", "deploy cluster:money cluster:proc"):
            assert led.search(q).warnings() == [] and led.query_warnings(q) == []
        # A label beside an unknown value: the label's cluster is searched, the other warns.
        res = led.search("deploy cluster:procedures cluster:nope")
        assert [w["kind"] for w in res.warnings()] == ["unknown-cluster", "cluster-label"]
        assert res.total == 1
        assert led.query_warnings("deploy cluster:procedures")[0]["ids"] == ["proc"]


def test_mcp_recall_and_search_take_a_label(store):
    q = "cluster:procedures deploy"

    async def go():
        async with connect(store) as s:
            return ok(await s.call_tool("recall", {"query": q})), ok(await s.call_tool("search", {"query": q}))

    recalled, searched = run(go)
    assert recalled["total"] == searched["total"] == 1
    assert [w["kind"] for w in recalled["warnings"]] == ["cluster-label"] == [w["kind"] for w in searched["warnings"]]


# A misspelt cluster (fresh-user defect: cluster:procedurs got no "did you mean"), then our own.
@pytest.mark.parametrize("query,suggest,named", [
    ("cluster:procedurs deploy", {"procedurs": "proc"}, 'Did you mean cluster:proc ("procedures")?'),
    ("cluster:prco deploy", {"prco": "proc"}, 'Did you mean cluster:proc ("procedures")?'),  # a swap in the id
    ("deploy cluster:finaces", {"finaces": "finances"}, 'Did you mean cluster:finances ("spending")?'),
    ("deploy cluster:hom-devices", {"hom-devices": "home"}, 'Did you mean cluster:home ("home & devices")?'),
    ("deploy cluster:zzzz", {}, None),  # nothing near: no suggestion
    # a label of two words typed with a space: the value is its first word
    ("cluster:Client work", {"client": "client-work"}, 'Did you mean cluster:client-work ("Client work")?'),
    ("deploy cluster:side quests", {}, None),  # the first word of two labels: no guess
])
def test_a_misspelt_cluster_gets_the_nearest_one(store, query, suggest, named):
    with Ledger.open(store) as led:
        res = led.search(query)
        (w,) = res.warnings()
        assert w["kind"] == "unknown-cluster" and w["suggest"] == suggest and res.total == 0
        assert (named in w["warning"]) if named else ("Did you mean" not in w["warning"])
        assert w["warning"].endswith("Known clusters: " + ", ".join(w["known"]) + ".")
        assert led.query_warnings(query) == [w] == led.recall(query, agent="a").warnings()
    rc, out, errout = cli("recall", *query.split(), db=store)
    assert rc == 0 and (named in errout if named else "Did you mean" not in errout), errout
    rc, out, errout = cli("search", *query.split(), "--json", db=store)
    assert json.loads(out)["warnings"][0]["suggest"] == suggest


def test_several_misspelt_clusters_each_get_theirs(store):
    with Ledger.open(store) as led:
        (w,) = led.search("deploy cluster:procedurs cluster:mony").warnings()
    assert w["suggest"] == {"procedurs": "proc", "mony": "money"}
    assert 'Did you mean cluster:proc ("procedures") for procedurs or cluster:money ("finances") for mony?' in w["warning"]
