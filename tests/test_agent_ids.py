"""Agent ids have one normal form on every write path, and ``agent:`` matches it (fresh-user
defect: ``remember --agent Claude`` then ``search "agent:Claude giraffes"`` found nothing
and warned of nothing: the CLI stored the id as typed, the parser lowercased the value).
docs/search.md "agent:", docs/cli.md "Agent ids". Real CLI and MCP processes, both
engines; the web API in-process."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import store_exists

from ledger.errors import InvalidInput
from ledger.service import Ledger
from ledger.text import agent_id, agent_key


@pytest.mark.parametrize("raw, key", [
    ("Claude", "claude"), ("  CLAUDE ", "claude"), ("claude-code", "claude-code"), ("Ünal", "ünal"),
    ("Ｃｌａｕｄｅ", "claude"), ("ÉQUIPE-2", "équipe-2"),
])
def test_the_normal_form_is_trimmed_folded_and_lowercased(raw, key):
    assert agent_key(raw) == key and agent_id(raw) == key and agent_id(raw, slug=True) == key


@pytest.mark.parametrize("raw, fixed", [
    ("my agent", "my-agent"), ("My  Agent\t2", "my-agent-2"), ("a\x1bb", "ab"), ("evil\u202eid", "evilid"),
])
def test_an_id_a_query_could_not_name_is_refused_with_the_one_to_use(raw, fixed):
    with pytest.raises(InvalidInput) as e:
        agent_id(raw)
    assert f"Use {fixed}." in e.value.message and "Nothing was written" in e.value.message
    assert e.value.field == "agent" and e.value.suggestion == fixed
    assert agent_id(raw, slug=True) == fixed  # a client's or a harness's name is slugged


def _write(cli, text, *args, env=None):
    return cli("remember", "--db", str(cli.db), "--cluster", "code", "--json", *args, "--", text, db=None, env=env)


def test_the_reported_example_mixed_case_agent_is_found(cli):
    rc, out, err = _write(cli, "Mixed case agent wrote about giraffes", "--agent", "Claude")
    assert rc == 0, err and json.loads(out)["writer"] == "claude"
    for q in ("agent:Claude giraffes", "agent:claude giraffes", "agent:CLAUDE giraffes"):
        rc, out, err = cli("search", q, "--json")
        assert rc == 0 and json.loads(out)["total"] == 1, (q, out, err)
        assert not json.loads(out)["warnings"], (q, out)
    rc, out, err = cli("search", "agent:Claude giraffes")
    assert rc == 0 and "1 memory" in out and err == ""


def test_ledger_agent_in_the_environment_is_normalised_too(cli):
    rc, out, err = _write(cli, "Environment agent wrote about okapis", env={"LEDGER_AGENT": "Codex"})
    assert rc == 0 and json.loads(out)["writer"] == "codex", err
    rc, out, err = cli("recall", "okapis", "--json", env={"LEDGER_AGENT": "CODEX"})
    assert rc == 0 and json.loads(out)[0]["readers"] == ["codex"], out
    rc, out, _ = cli("search", "agent:Codex okapis", "--json")
    assert json.loads(out)["total"] == 1


def test_a_store_written_before_keeps_matching_without_rewriting_ids(cli):
    """Ids an older store holds as typed (the library stores what it is given)."""
    with Ledger.open(cli.db) as led:
        led.remember("Zebras were counted by the Claude agent", cluster="code", agent="Claude")
        led.remember("Zebras were counted by Ünal as well", cluster="code", agent="Ünal")
    for q, n in (("agent:claude zebras", 1), ("agent:Claude zebras", 1), ("agent:ünal zebras", 1),
                 ("agent:ÜNAL zebras", 1), ("agent:claude agent:ünal zebras", 2)):
        rc, out, err = cli("search", q, "--json")
        assert rc == 0 and json.loads(out)["total"] == n and not json.loads(out)["warnings"], (q, out, err)
    rc, out, _ = cli("search", "agent:claud zebras", "--json")  # a near miss still warns, with the stored id
    w = json.loads(out)["warnings"]
    assert [x["kind"] for x in w] == ["unknown-agent"] and w[0]["suggest"] == {"claud": "Claude"}, w


@pytest.mark.parametrize("how", ["flag", "env"])
def test_an_id_with_a_space_is_refused_and_nothing_is_written(cli, how):
    args, env = (("--agent", "my agent"), None) if how == "flag" else ((), {"LEDGER_AGENT": "my agent"})
    rc, out, err = _write(cli, "A fact by an agent with a space", *args, env=env)
    assert rc == 1 and out == "" and "Use my-agent." in err and "has a space" in err, err
    assert not store_exists(cli.db)
    rc, out, err = cli("recall", "fact", *args, env=env)  # a counted read adds a reader: refused too
    assert rc == 1 and "Use my-agent." in err


def test_mcp_ids_are_the_same_normal_form(store_target, tmp_path, monkeypatch):
    import test_mcp as M

    monkeypatch.chdir(tmp_path)

    async def go():
        async with M.connect(store_target, client="Cursor Desktop") as s:
            w = M.ok(await s.call_tool("remember", {"claim": "Lemurs live on Madagascar", "cluster": "code"}))
        async with M.connect(store_target, client="x", LEDGER_AGENT="Reviewer") as s:
            r = M.ok(await s.call_tool("recall", {"query": "lemurs agent:Cursor-Desktop"}))
        async with M.connect(store_target, client="x", LEDGER_AGENT="my reviewer") as s:
            e = M.err(await s.call_tool("remember", {"claim": "Lemurs again", "cluster": "code"}))
        return w, r, e

    w, r, e = M.run(go)
    assert [h["id"] for h in r["hits"]] == [w["id"]]
    # The user set it (the client's MCP config), so the way out is theirs (tests/test_mcp_errors.py).
    assert "Ask the user to change it to my-reviewer" in e and "Use my-reviewer." not in e, e
    m = M.cli_json(store_target, "show", w["id"])
    assert m["writer"] == "cursor-desktop" and m["readers"] == ["cursor-desktop", "reviewer"], m


def test_a_long_client_name_is_cut_to_an_id_the_store_takes(store_target, tmp_path, monkeypatch):
    """A client's name nobody can retype, longer than an agent id may be (64), is cut
    rather than failing every call (fresh-user pass: "Very Long Client Name " x 4)."""
    import test_mcp as M

    monkeypatch.chdir(tmp_path)
    name = "Very Long Client Name " * 4

    async def go():
        async with M.connect(store_target, client=name) as s:
            return M.ok(await s.call_tool("remember", {"claim": "Okapis live in the Congo", "cluster": "code"}))

    w = M.run(go)
    writer = M.cli_json(store_target, "show", w["id"])["writer"]
    assert writer == ("very-long-client-name-" * 4)[:64] and len(writer) == 64, writer
    assert agent_id("x" * 80 + " y", slug=True) == "x" * 64 and agent_id("a " * 40, slug=True) == "-".join("a" * 32)[:64].rstrip("-")


def test_the_web_apis_by_is_normalised(store_target):
    pytest.importorskip("starlette")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from ledger.web.server import create_app

    with Ledger.open(store_target) as led:
        mid = led.remember("Tapirs sleep by day", cluster="code", agent="claude").memory.id
    base = "http://127.0.0.1:7444"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with TestClient(create_app(str(store_target)), base_url=base, headers={"origin": base}) as c:
            r = c.patch(f"/api/memories/{mid}", json={"text": "Tapirs sleep by day and feed at night", "by": "Alice"})
            assert r.status_code == 200, r.text
            bad = c.patch(f"/api/memories/{mid}", json={"text": "x y z", "by": "Bob Smith"})
            assert bad.status_code == 400 and "Use bob-smith." in bad.json()["error"], bad.text
    with Ledger.open(store_target) as led:
        events, former = led.history(mid)
        assert [by for _, _, by in former] == ["alice"], former


def test_a_hooks_reader_is_the_normal_form(monkeypatch):
    from types import SimpleNamespace

    from ledger.watcher.engine import reader_agent

    monkeypatch.setenv("LEDGER_AGENT", "My Agent")
    assert reader_agent(SimpleNamespace(harness="claude-code")) == "my-agent"
    monkeypatch.delenv("LEDGER_AGENT")
    assert reader_agent(SimpleNamespace(harness="claude-code")) == "claude-code"


# ------------------------------------------------------------------ ids agent: cannot name
@pytest.mark.parametrize("raw, fixed", [
    ("a,b", "a-b"), ("x,", "x"), ("a，b", "a-b"), ("a、b", "a-b"), ("a،b", "a-b"), ('"x', "x"), ('"x"', "x"),
    ("'x'", "x"), ("“y”", "y"), ("«z»", "z"), ("「w」", "w"), (" ,a, b", "a-b"),
])
def test_an_id_with_a_comma_or_a_leading_quote_is_refused_saying_what_is_allowed(raw, fixed):
    with pytest.raises(InvalidInput) as e:
        agent_id(raw)
    msg = e.value.message
    assert f"Use {fixed}." in msg and "Nothing was written" in msg and e.value.suggestion == fixed, msg
    assert "may hold letters, digits and punctuation" in msg and "comma" in msg and "quote" in msg, msg
    assert agent_id(raw, slug=True) == fixed  # a client's or a harness's name becomes one agent: can name


@pytest.mark.parametrize("raw", ["it's", 'x"y', "a.b", "ops@host", "team/bot", "a;b", "«ok"[1:]])
def test_punctuation_elsewhere_is_an_id(raw):
    assert agent_id(raw) == raw


def test_the_refused_characters_are_the_parsers():
    """What the parser reads as a list or a quoted value is exactly what is refused."""
    from ledger.query import parser
    from ledger.text import ID_COMMAS, ID_QUOTES

    assert set(ID_COMMAS) == set(parser.LIST_COMMAS) and set(ID_QUOTES) == set(parser._QUOTES)
    for c in ID_COMMAS:
        assert [w["kind"] for w in parser.filter_warnings(f"agent:a{c}b")] == ["list-value"]
    for q in ID_QUOTES:
        assert [w["kind"] for w in parser.filter_warnings(f"agent:{q}x")] == ["quoted-value"]


@pytest.mark.parametrize("how, value", [("flag", "a,b"), ("flag", '"x'), ("env", "a,b"), ("env", "“x")])
def test_the_cli_refuses_them_and_writes_nothing(cli, how, value):
    args, env = (("--agent", value), None) if how == "flag" else ((), {"LEDGER_AGENT": value})
    rc, out, err = _write(cli, "A fact by an agent no filter could name", *args, env=env)
    assert rc == 1 and out == "" and "Nothing was written" in err and "may not start with a quote" in err, err
    assert not store_exists(cli.db)


def test_such_ids_an_older_store_holds_stay_readable_and_nameable(cli):
    """Written before the refusal (the library stores what it is given): shown as they
    are, found by agent:, and no warning says the filter matches nothing."""
    with Ledger.open(cli.db) as led:
        led.remember("Pangolins were counted by a comma agent", cluster="code", agent="a,b")
        led.remember("Pangolins were counted by a quoted agent", cluster="code", agent='"x')
    for q in ("agent:a,b pangolins", 'agent:"x pangolins'):
        rc, out, err = cli("search", q, "--json")
        body = json.loads(out)
        assert rc == 0 and body["total"] == 1 and body["warnings"] == [], (q, out, err)
    rc, out, err = cli("search", "pangolins")
    assert rc == 0 and "a,b" in out and '"x' in out, out
    # A value that names no stored agent still says what is wrong with it.
    rc, out, _ = cli("search", "agent:c,d pangolins", "--json")
    assert "list-value" in [w["kind"] for w in json.loads(out)["warnings"]]
