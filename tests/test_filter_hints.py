"""Filters that match nothing say why and what to do, as ``cluster:`` and ``asof:`` do:
an ``agent:`` naming no agent the store has seen gets the nearest known one
(``unknown-agent``), a ``before:`` no later than the first memory says nothing was
stored before then (``early-before``), and the warnings that said only what happened
(``future-asof``, a recall not counted) say what the user can do. The library on both
engines, the CLI as a subprocess; the MCP tools in tests/test_mcp_warnings.py.
"""

from __future__ import annotations

import json

from conftest import BOTH_ENGINES, iso

from ledger.clock import FixedClock
from ledger.query import parse_when
from ledger.service import Ledger

ENGINES = BOTH_ENGINES


def kinds(res, kind: str) -> list[dict]:
    return [w for w in res.warnings() if w["kind"] == kind]


# ------------------------------------------------------------------ agent:
def test_a_misspelt_agent_gets_the_nearest_known_one(store_target):
    """Fresh-user finding: ``agent:testr`` returned 0 with no word, while ``cluster:prco``
    asks "Did you mean cluster:proc?"."""
    with Ledger.open(store_target) as led:
        led.remember("deploy steps need the VPN up", cluster="proc", agent="tester")
        led.remember("deploy runs at noon on fridays", cluster="proc", agent="claude-code")
        for res in (led.search("deploy agent:testr"), led.recall("deploy agent:testr", agent="someone")):
            (w,) = kinds(res, "unknown-agent")
            assert res.total == 0
            assert w["values"] == ["testr"] and w["suggest"] == {"testr": "tester"} and w["key"] == "agent"
            assert w["warning"].startswith("agent:testr is no agent this store has seen, so it matches nothing. "
                                           "Did you mean agent:tester? Known agents: ")
            assert set(w["known"]) == {"tester", "claude-code"}  # recall's own agent is registered after
        # Several values: each named, a suggestion only for the near miss.
        (w,) = kinds(led.search("agent:claude-cod agent:zzzz"), "unknown-agent")
        assert w["values"] == ["claude-cod", "zzzz"] and w["suggest"] == {"claude-cod": "claude-code"}
        assert "agent:claude-cod and agent:zzzz are no agents this store has seen, so they match nothing. " \
               "Did you mean agent:claude-code for claude-cod?" in w["warning"]
        # Nothing close: no guess, the known ones listed.
        (w,) = kinds(led.search("agent:qqqqqq"), "unknown-agent")
        assert w["suggest"] == {} and "Did you mean" not in w["warning"] and "Known agents: " in w["warning"]
        # A known agent, in any case (the parser lowercases values), is no warning even
        # when it matches nothing; no agent: at all reads nothing.
        assert kinds(led.search("agent:Tester nosuchword"), "unknown-agent") == []
        assert led.search("agent:TESTER").total == 1
        assert led.query_warnings("agent:testr")[0]["suggest"] == {"testr": "tester"}


def test_an_empty_store_knows_no_agent(store_target):
    with Ledger.open(store_target) as led:
        (w,) = kinds(led.search("agent:claude"), "unknown-agent")
        assert w["known"] == [] and w["warning"].endswith("Known agents: (none).")


def test_the_agent_hint_reaches_cli_text_and_json(cli):
    with Ledger.open(cli.db) as led:
        led.remember("deploy steps need the VPN up", cluster="proc", agent="tester")
    rc, out, err = cli("search", "deploy", "agent:testr")
    assert rc == 0 and "⚠ agent:testr is no agent this store has seen" in err and "Did you mean agent:tester?" in err
    rc, out, err = cli("search", "deploy", "agent:testr", "--json")
    (w,) = json.loads(out)["warnings"]
    assert w["kind"] == "unknown-agent" and w["suggest"] == {"testr": "tester"}
    rc, out, err = cli("recall", "deploy", "agent:testr", "--agent", "me")
    assert rc == 0 and "Did you mean agent:tester?" in err


# ------------------------------------------------------------------ before:
def test_a_before_no_later_than_the_first_memory_says_nothing_was_stored_then(store_target):
    """Fresh-user finding: ``before:2020-01-01`` on a store begun later returned 0 and
    said nothing, while ``asof:`` says ``early-asof``."""
    clock = FixedClock(parse_when("2026-01-15", 0))
    with Ledger.open(store_target, clock=clock) as led:
        assert led.search("before:2020-01-01").warnings() == []  # an empty store: nothing to compare with
        first = led.remember("Deploys go out on Fridays", cluster="proc", agent="a").memory.id
        t0 = clock()
        clock.advance(ms=86_400_000)
        led.remember("Deploy freezes start in December", cluster="proc", agent="a")
        led.forget([first], agent="a")  # a dropped memory was still stored: it counts
        for q, typed in (("deploy before:2020-01-01", "2020-01-01"), (f"deploy before:{iso(t0)}", iso(t0)),
                         ("before:3w", "3w"), ("deploy before:1y Before:2y", "2y")):
            for res in (led.search(q), led.recall(q, agent="a")):
                (w,) = kinds(res, "early-before")
                assert res.total == 0 and w["key"] == "before" and w["values"] == [typed], (q, w)
                assert parse_when(w["first"], clock()) == t0
                assert w["warning"] == (f"before:{typed} is not later than this store's first memory ({w['first']}), "
                                        f"so it matches nothing: nothing was stored before then. Give a before: "
                                        f"later than {w['first']}, or drop it.")
        # Just after the first memory it is there (with include-archived it would show):
        # no warning; nor for a later one.
        for q in (f"deploy before:{iso(t0 + 1)}", "deploy before:1h", "deploy"):
            assert kinds(led.search(q), "early-before") == [], q
        # asof: and before: both too early: both said, asof: first.
        assert [w["kind"] for w in led.search("deploy asof:2020-01-01 before:2020-01-01").warnings()] == \
            ["early-asof", "early-before"]


def test_the_before_warning_reaches_cli_text_and_json(cli):
    with Ledger.open(cli.db) as led:
        led.remember("deploy steps need the VPN up", cluster="proc", agent="tester")
    rc, out, err = cli("search", "deploy", "before:2020-01-01", "--json")
    (w,) = json.loads(out)["warnings"]
    assert rc == 0 and w["kind"] == "early-before" and w["values"] == ["2020-01-01"]
    rc, out, err = cli("recall", "deploy", "before:2020-01-01")
    assert rc == 0 and "⚠ before:2020-01-01 is not later than this store's first memory" in err


# ------------------------------------------------------------------ what to do
def test_future_asof_and_a_recall_into_the_past_say_what_to_do(store_target):
    with Ledger.open(store_target) as led:
        led.remember("deploy steps need the VPN up", cluster="proc", agent="a")
        (w,) = kinds(led.search("deploy asof:2099-01-01"), "future-asof")
        assert w["warning"].endswith("Drop asof: to read the store as it is, or give a past instant to see what it "
                                     "held then (asof:2w, asof:2026-01-01).")
        res = led.recall("deploy asof:2099-01-01", agent="a")
        assert res.total == 1
        assert res.not_counted.endswith("The same recall without asof: reads the store as it is now and counts the "
                                        "read")
        led.remember("what is the staging password rotation policy", cluster="proc", agent="a")
        res = led.recall("what is the", agent="a")
        # (PostgreSQL's english index drops these words: no hits, nothing to say there)
        want = "Recall the words that name the topic (a name, a file, an error message) to count the read"
        assert res.not_counted is None if res.total == 0 else res.not_counted.endswith(want)
