"""``asof:`` answers what the store said at that moment, for every way a text can change:
an edit, a review edit, a merge that takes the other side's text (issue 21: the merged
memory showed today's text twice and the old one nowhere)."""

from __future__ import annotations

import json
import time

from conftest import BOTH_ENGINES, iso

from ledger.clock import FixedClock
from ledger.query import parse_when
from ledger.service import Ledger

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)


def texts(led: Ledger, query: str) -> list[str]:
    return sorted(m.text for m in led.search(query, limit=50).hits)


def test_supersede_then_merge_through_the_cli(cli):
    """The issue's example, through the real command."""
    a = json.loads(cli("remember", "The cache TTL is 300 seconds", "--cluster", "code", "--json")[1])["id"]
    b = json.loads(cli("remember", "The cache TTL is 600 seconds", "--cluster", "code", "--supersedes", a, "--json")[1])
    time.sleep(0.05)
    before_merge = iso(int(time.time() * 1000))
    time.sleep(0.05)
    rc, out, err = cli("resolve", b["conflictId"], "merge")
    assert rc == 0, err
    rc, out, err = cli("search", f"cache TTL asof:{before_merge}", "--json")
    assert rc == 0, err
    shown = sorted(h["text"] for h in json.loads(out)["hits"])
    assert shown == ["The cache TTL is 300 seconds", "The cache TTL is 600 seconds"]
    now = sorted(h["text"] for h in json.loads(cli("search", "cache TTL", "--json")[1])["hits"])
    assert now == ["The cache TTL is 600 seconds"]


def test_every_edit_is_answerable(store_target, clock: FixedClock):
    with Ledger.open(store_target, clock=clock) as led:
        mid = led.remember("Staging runs on host kestrel", cluster="proc", agent="claude").memory.id
        t1 = clock()
        clock.advance(ms=60_000)
        led.update(mid, text="Staging runs on host osprey", by="human")           # an edit
        t2 = clock()
        clock.advance(ms=60_000)
        led.review(mid, "edit", text="Staging runs on host harrier", by="human")  # a review edit
        t3 = clock()
        clock.advance(ms=60_000)
        assert texts(led, f"staging asof:{iso(t1)}") == ["Staging runs on host kestrel"]
        assert texts(led, f"staging asof:{iso(t2)}") == ["Staging runs on host osprey"]
        assert texts(led, f"staging asof:{iso(t3)}") == ["Staging runs on host harrier"]
        assert texts(led, "staging") == ["Staging runs on host harrier"]
        assert [m.text for m in led.export(f"staging asof:{iso(t1)}")] == ["Staging runs on host kestrel"]


def test_resolve_merge_with_a_fixed_clock(store_target, clock: FixedClock):
    with Ledger.open(store_target, clock=clock) as led:
        a = led.remember("The invoice terms are net 30", cluster="money", agent="claude").memory.id
        clock.advance(ms=1_000)
        res = led.remember("The invoice terms are net 45", cluster="money", agent="codex", supersedes=a)
        clock.advance(ms=1_000)
        before = clock()
        clock.advance(ms=1_000)
        led.resolve(res.conflict_id, "merge", by="human")
        assert texts(led, f"invoice terms asof:{iso(before)}") == ["The invoice terms are net 30", "The invoice terms are net 45"]
        assert texts(led, "invoice terms") == ["The invoice terms are net 45"]


# ------------------------------------------------------------------ an asof: before the store
def test_an_asof_before_the_first_memory_says_why(store_target, clock: FixedClock):
    """Fresh-user defect: an ``asof:`` earlier than the store's first memory returned
    nothing and said nothing. The result carries ``early-asof`` naming the first
    memory's instant (a dropped memory counts: it existed); not at or after it."""
    with Ledger.open(store_target, clock=clock) as led:
        empty = led.search("deploy asof:2020-01-01")
        assert empty.total == 0 and empty.warnings() == []  # an empty store: nothing to compare with
        first = led.remember("Deploys go out on Fridays", cluster="proc", agent="a").memory.id
        t0 = clock()
        clock.advance(ms=86_400_000)
        led.remember("Deploy freezes start in December", cluster="proc", agent="a")
        led.forget([first], agent="a")
        for q, typed in ((f"deploy asof:{iso(t0 - 1)}", iso(t0 - 1)), ("deploy asof:2020-01-01", "2020-01-01"),
                         ("asof:2020-01-01", "2020-01-01"), ("deploy asof:1d asof:2w", "2w")):
            for res in (led.search(q), led.recall(q, agent="a")):
                assert res.total == 0
                w = [x for x in res.warnings() if x["kind"] == "early-asof"]
                assert len(w) == 1, (q, res.warnings())
                (w,) = w
                assert w["values"] == [typed] and w["key"] == "asof"
                assert parse_when(w["first"], clock()) == t0  # the instant, as a query value
                assert f"asof:{typed} is before this store's first memory ({w['first']})" in w["warning"]
            assert led.query_warnings(q)[-1] == w
        # At the first memory's instant, or later: it was there, no warning.
        for q in (f"deploy asof:{iso(t0)}", "deploy asof:1h", "deploy"):
            assert [x for x in led.search(q).warnings() if x["kind"] == "early-asof"] == [], q
        assert led.search(f"deploy asof:{iso(t0)}").total == 1
