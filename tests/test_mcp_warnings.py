"""`ledger mcp` tells the agent what the CLI tells the user: every warning of a call is in
its result (``warnings``, in the structured content and in the JSON text the model
reads), and a read never creates a store. Before, a query whose filter matched nothing
(``cluster:nope``, ``kind:bogus``, ``strength:`` twice) or a mistyped store path came
back as ``{"hits": [], "total": 0}``, and a read on a missing path created the folder and
an empty store. Driven through the SDK's own client over a real stdio subprocess, as
tests/test_mcp.py; the CLI is run as a subprocess beside it for the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import LEDGER_BIN
from test_mcp import connect, err, ok, run, store  # noqa: F401  (store: the fixture, the store run from tmp_path)


def cli(*args, db=None, env=None) -> tuple[int, str, str]:
    """``ledger <args> [--db db]`` as a subprocess: (status, stdout, stderr)."""
    argv = [LEDGER_BIN, *args, *(("--db", str(db)) if db is not None else ())]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1", **(env or {})})
    return p.returncode, p.stdout, p.stderr


def stderr_warnings(text: str) -> list[dict]:
    """The JSON warnings a ``--json`` command wrote on stderr, one object a line."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# --------------------------------------------------------------- filter warnings
QUERIES = {
    # query: the warning kinds the CLI gives for it, in order
    "cluster:nope deploy": ["unknown-cluster"],
    "kind:bogus deploy": ["unknown-value"],
    "deploy strength:>10 strength:>90": ["repeated-filter"],
    # (asof:2h is also before this store's first memory, written a moment ago)
    "type:chat kind:nope cluster:prco cluster:proc deploy asof:1h asof:2h": ["unknown-cluster", "unknown-value",
                                                                          "repeated-filter", "early-asof"],
    "deploy cluster:proc": [],
    # filters that can never match (fresh-user defect: accepted in silence, warnings [])
    "strength:<0": ["empty-range"],
    "deploy strength:>100": ["empty-range"],
    # (before:2w is also before this store's first memory, written a moment ago)
    "deploy after:1w before:2w": ["empty-range", "early-before"],
    "deploy after:2099-01-01": ["empty-range"],
    # free text with nothing to search in it (fresh-user defect: `recall '*'` said nothing)
    "* cluster:proc": ["nothing-to-search"],
    # fresh-user findings, 2026-12-01 (tests/test_query_polish.py)
    "Type: error in build": ["empty-filter"],
    "cluster:proc,code deploy": ["list-value"],
    'cluster:"home & devices" deploy': ["quoted-value"],
    "what is it": ["stopwords-only"],
    # a star after one letter is the word (issue 14's user pass: d* said nothing)
    "d* deploys": ["short-prefix"],
    "ｃｌｕｓｔｅｒ：proc deploys": [],
    # a before: earlier than the first memory (fresh-user defect: 0 and no word)
    "deploy before:2020-01-01": ["early-before"],
    # more distinct terms than a query searches (a pasted page took seconds): the first 64
    " ".join(f"z{a}{b}x" for a in "bcdfghjklmnp" for b in "aeiouy") + " deploy": ["too-many-terms"],
}


def test_recall_and_search_carry_the_clis_query_warnings(store):  # noqa: F811
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")

    async def go():
        async with connect(store) as s:
            return {q: (ok(await s.call_tool("recall", {"query": q})), ok(await s.call_tool("search", {"query": q})),
                        (await s.call_tool("search", {"query": q})).content[0].text)
                    for q in QUERIES}

    got = run(go)
    for q, kinds in QUERIES.items():
        recalled, searched, text = got[q]
        rc, out, errout = cli("search", *q.split(), "--json", db=store)
        assert rc == 0, errout
        body = json.loads(out)["warnings"]
        # The same list as `ledger search --json`'s body, on both tools.
        assert [w["kind"] for w in body] == kinds, (q, body)
        assert recalled["warnings"] == searched["warnings"] == body, (q, recalled, body)
        # What the model reads (the text content) says it in words.
        for w in body:
            assert json.dumps(w["warning"])[1:-1] in text, (q, text)
        # And `ledger recall --json`, whose body is a list, says it on stderr.
        rc, _, errout = cli("recall", *q.split(), "--json", db=store)
        assert [w["kind"] for w in stderr_warnings(errout)] == kinds, (q, errout)
    assert got["deploy cluster:proc"][0]["total"] == 1 == got["ｃｌｕｓｔｅｒ：proc deploys"][0]["total"]
    assert "Known clusters:" in got["cluster:nope deploy"][0]["warnings"][0]["warning"]
    assert got["deploy strength:>10 strength:>90"][1]["warnings"][0]["used"] == ">90"


# --------------------------------------------------------------- a store that does not exist
def test_a_mistyped_store_path_is_said_and_never_created_by_a_read(tmp_path, monkeypatch):
    """Finding 2: LEDGER_DB=.../nostore3/y.db, one search: the folder and an empty store
    were created and the answer was empty."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "nostore3" / "y.db"

    async def go():
        async with connect(target) as s:
            return {
                "search": ok(await s.call_tool("search", {"query": "deploy"})),
                "browse": ok(await s.call_tool("search", {})),
                "recall": ok(await s.call_tool("recall", {"query": "cluster:nope deploy"})),
                "conflicts": ok(await s.call_tool("conflicts", {})),
                "checkpoint": ok(await s.call_tool("checkpoint", {})),
                "show": err(await s.call_tool("show", {"id": "m_abc123"})),
                "judge": err(await s.call_tool("judge", {"candidate": "cc_abc123", "verdict": "conflict"})),
                "big": err(await s.call_tool("show", {"id": "m_" + "a" * 1_000_000})),
                # Writes that fail create nothing either.
                "bad_cluster": err(await s.call_tool("remember", {"claim": "Deploys need the VPN", "cluster": "nope"})),
                "supersedes": err(await s.call_tool("remember", {"claim": "Deploys need the VPN", "cluster": "proc",
                                                                 "supersedes": "m_abc123"})),
            }

    r = run(go)
    assert not (tmp_path / "nostore3").exists()
    for tool in ("search", "browse", "recall", "conflicts", "checkpoint"):
        w = r[tool]["warnings"][0]
        assert w["kind"] == "no-store" and w["path"] == str(target), (tool, r[tool])
        assert w["warning"].startswith(f"No store at {target}: nothing to read, and nothing was created."), w
        assert "LEDGER_DB" in w["warning"] and "first `remember` creates" in w["warning"], w
    assert r["search"]["hits"] == [] and r["checkpoint"]["checkpoint"] is None
    # The filter warning still follows: both are true.
    assert [w["kind"] for w in r["recall"]["warnings"]] == ["no-store", "unknown-cluster"]
    # An id cannot be in a store that does not exist: the error says that, as the CLI's.
    rc, _, cli_err = cli("show", "m_abc123", db=target)
    assert rc == 1 and not (tmp_path / "nostore3").exists()
    first = f"No store at {target}: nothing to read, and nothing was created, so m_abc123 is not there."
    assert cli_err.startswith(f"✕ {first}") and first in r["show"] and "LEDGER_DB" in r["show"], (cli_err, r["show"])
    assert "cc_abc123 is not there" in r["judge"] and str(target) in r["judge"], r["judge"]
    assert "m_abc123 is not there" in r["supersedes"], r["supersedes"]
    assert 'No cluster "nope"' in r["bad_cluster"], r["bad_cluster"]
    # A megabyte "id" is not echoed back into the agent's context.
    assert "is not there" in r["big"] and len(r["big"]) < 1000, r["big"][:300]


def test_the_first_remember_creates_the_store_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "fresh" / "ledger.db"

    async def go():
        async with connect(target) as s:
            first = ok(await s.call_tool("remember", {"claim": "Staging deploys need the VPN up", "cluster": "proc"}))
            second = ok(await s.call_tool("remember", {"claim": "Prod deploys need two approvals", "cluster": "proc"}))
            found = ok(await s.call_tool("search", {"query": "deploys"}))
            return first, second, found

    first, second, found = run(go)
    assert target.is_file()
    [w] = first["warnings"]
    assert w["kind"] == "new-store" and w["path"] == str(target) and "created" in w["warning"], w
    assert "LEDGER_DB" in w["warning"], w
    # Written once: the stand-in the call was tried on first left nothing behind.
    assert second["warnings"] == [] and found["warnings"] == [] and found["total"] == 2, found


def test_the_default_store_missing_is_named_and_not_created(tmp_path, monkeypatch):
    """No $LEDGER_DB: the server reads $LEDGER_HOME/ledger.db; a fresh machine has none."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "fresh-home"

    async def go():
        async with connect(Path(""), LEDGER_DB="", LEDGER_HOME=str(home)) as s:
            return ok(await s.call_tool("recall", {"query": "deploy"}))

    r = run(go)
    assert not home.exists()
    assert r["warnings"][0]["kind"] == "no-store" and r["warnings"][0]["path"] == str(home / "ledger.db"), r


# --------------------------------------------------------------- remember's warnings
def test_remember_gives_the_warnings_the_cli_prints(store, tmp_path):  # noqa: F811
    """The CLI warns on stderr about secrets replaced and a file that does not exist;
    the MCP result carried only ``redacted: 1`` and nothing about the file."""
    from ledger.service import Ledger

    Ledger.open(store).close()
    claim = "staging deploy uses DB_PASS=DbPass7 from the vault"

    async def go():
        async with connect(store) as s:
            return ok(await s.call_tool("remember", {"claim": claim, "cluster": "code", "files": ["no-such.cfg"]}))

    got = run(go)
    rc, _, errout = cli("remember", claim, "--cluster", "code", "--file", "no-such.cfg", "--json", db=store)
    assert rc == 0, errout
    want = stderr_warnings(errout)
    assert [w["kind"] for w in got["warnings"]] == [w["kind"] for w in want] == ["redacted", "missing-file"]
    assert got["warnings"][0] == {"kind": "redacted", "warning": want[0]["warning"], "count": 1}
    # The same sentence, naming the argument as each surface calls it.
    assert got["warnings"][1]["warning"] == want[1]["warning"].replace("--file no-such.cfg", "files: no-such.cfg")
    assert got["warnings"][1]["path"] == want[1]["path"] == str(tmp_path / "no-such.cfg")


def _one_memory_both_tools_and_json(store, q: str) -> tuple[dict, dict, dict]:  # noqa: F811
    """On a store of one memory: what MCP ``recall`` and ``search`` answer to ``q``, and
    the body of ``ledger search <q> --json``."""
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")

    async def go():
        async with connect(store) as s:
            return ok(await s.call_tool("recall", {"query": q})), ok(await s.call_tool("search", {"query": q}))

    recalled, searched = run(go)
    rc, out, errout = cli("search", *q.split(), "--json", db=store)
    assert rc == 0, errout
    return recalled, searched, json.loads(out)


def test_a_future_asof_is_read_as_now_and_every_surface_says_so(store):  # noqa: F811
    """``asof:2099-01-01`` reads what the store holds now: its hits are the plain
    query's, and the CLI (text and --json) and both MCP tools carry ``future-asof``."""
    q = "deploy asof:2099-01-01"
    recalled, searched, body = _one_memory_both_tools_and_json(store, q)
    (w,) = body["warnings"]
    assert w["kind"] == "future-asof" and w["used"] == "now" and w["values"] == ["2099-01-01"]
    assert "asof:2099-01-01 is in the future" in w["warning"] and "read as now" in w["warning"]
    assert body["total"] == 1 == searched["total"] == recalled["total"]
    assert searched["warnings"] == [w] == recalled["warnings"]
    rc, out, errout = cli("recall", *q.split(), db=store)
    assert rc == 0 and "Staging deploys" in out
    assert "⚠ asof:2099-01-01 is in the future" in errout
    # A past asof (after the first memory) is not in the future: no such warning.
    import time

    from conftest import iso

    rc, out, _ = cli("search", "deploy", f"asof:{iso(int(time.time() * 1000))}", "--json", db=store)
    assert json.loads(out)["warnings"] == [] and json.loads(out)["total"] == 1


def test_an_asof_before_the_first_memory_says_why_on_every_surface(store):  # noqa: F811
    """``asof:2020-01-01`` on a store begun today matched nothing and said nothing; the
    CLI (text and --json) and both MCP tools carry ``early-asof`` naming the first memory."""
    q = "deploy asof:2020-01-01"
    recalled, searched, body = _one_memory_both_tools_and_json(store, q)
    (w,) = body["warnings"]
    assert w["kind"] == "early-asof" and w["values"] == ["2020-01-01"] and w["first"] > "2020"
    assert body["total"] == 0 == searched["total"] == recalled["total"]
    assert searched["warnings"] == [w] == recalled["warnings"]
    rc, out, errout = cli("recall", *q.split(), db=store)
    assert rc == 0 and "⚠ asof:2020-01-01 is before this store's first memory" in errout, errout
    rc, _, errout = cli("recall", *q.split(), "--json", db=store)
    assert [x["kind"] for x in stderr_warnings(errout)] == ["early-asof"]


@pytest.mark.parametrize("query,words", [
    ("strength:<0", "strength:<0 matches nothing"),
    ("deploy strength:>100", "strength:>100 matches nothing"),
    ("deploy after:1w before:2w", "Did you mean after:2w before:1w?"),
    ("deploy after:3d before:3d", "the same instant as before:"),
    ("deploy after:2099-01-01", "after:2099-01-01 is in the future"),
])
def test_filters_that_can_never_match_warn_in_cli_text(store, query, words):  # noqa: F811
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")
    for verb in ("recall", "search"):
        rc, out, errout = cli(verb, *query.split(), db=store)
        assert rc == 0, errout
        assert "⚠ " in errout and words in errout, (verb, errout)


def test_a_misspelt_agent_gets_the_nearest_known_one_on_both_tools(store):  # noqa: F811
    """Fresh-user finding: ``agent:testr`` returned 0 with no did-you-mean, while
    ``cluster:`` had one. (Apart from QUERIES: each recall registers its caller, so the
    list of known agents grows between the calls.)"""
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="tester")

    async def go():
        async with connect(store) as s:
            return [ok(await s.call_tool(t, {"query": "deploy agent:testr"})) for t in ("recall", "search")]

    for res in run(go):
        (w,) = res["warnings"]
        assert res["total"] == 0 and w["kind"] == "unknown-agent" and w["suggest"] == {"testr": "tester"}
        assert "agent:testr is no agent this store has seen, so it matches nothing. Did you mean agent:tester?" \
            in w["warning"] and "tester" in w["known"]
