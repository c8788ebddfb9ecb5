"""Input over a limit is said as such on every surface: how long it is, the limit, and
what to do, never a parse error quoting a token (issue: a 20,001-character query read
'Cannot parse "a a a …"') nor the input echoed back whole. Real processes: the CLI and a
``ledger serve`` child; MCP is in tests/test_mcp_bad_input.py."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import Cli
from liveserve import LiveServe

from ledger.query.parser import MAX_QUERY_CHARS
from ledger.service import Ledger

TOO_LONG = "deploy steps " * 2_000  # 26,000 characters
LIMIT = f"the limit is {MAX_QUERY_CHARS:,}"


@pytest.fixture()
def db(store_target):
    path = store_target
    with Ledger.open(path) as led:
        led.remember("Deploy steps: tag, build, push", cluster="proc", agent="claude")
    return path


def _said(text: str) -> None:
    assert f"The query is too long: {len(TOO_LONG):,} characters, and {LIMIT}." in text, text
    assert "Search for the few words that matter" in text and "Cannot parse" not in text, text
    assert len(text) < 400, len(text)  # the query is not echoed back


@pytest.mark.parametrize("verb", ["recall", "search", "export"])
def test_the_cli_says_a_query_is_too_long(db, verb):
    rc, out, err = Cli(db)(verb, TOO_LONG)
    assert rc == 1 and out == "", out[:200]
    _said(err)
    rc, out, err = Cli(db)(verb, TOO_LONG, "--json")
    assert rc == 1
    e = json.loads(err or out)
    assert e["kind"] == "invalid-query"
    _said(e["error"])
    # At the limit a query still runs.
    rc, out, err = Cli(db)(verb, ("deploy " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS])
    assert rc == 0 and "Deploy steps" in out, err


def test_the_web_api_says_a_query_is_too_long(db):
    with LiveServe(db) as srv:
        for path in ("api/search", "api/export"):
            r = httpx.get(srv.url + path, params={"q": TOO_LONG}, timeout=30)
            assert r.status_code == 400, (path, r.text[:200])
            body = r.json()
            _said(body["error"])
            assert body["kind"] == "invalid-query" and body["length"] == len(TOO_LONG) and body["limit"] == MAX_QUERY_CHARS


def test_an_id_too_long_to_be_one_is_named_as_such_not_echoed(db):
    text = "m_" + "x" * 30_000
    rc, out, err = Cli(db)("show", text)
    assert rc == 1
    assert "(30,002 characters): a memory id is about 16 characters long" in err and len(err) < 400, err[:300]
    rc, out, err = Cli(db)("forget", text)
    assert rc == 1 and "a memory id is about 16 characters long" in err and len(err) < 400, err[:300]
