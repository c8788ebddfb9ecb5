"""Every error `ledger mcp` sends tells the agent something it can do, in MCP terms: a
tool and argument to send instead, or "ask the user to ..." with the user's command
named as theirs (docs/mcp.md "Errors"). The review's open cases, each kept as a test:

1. texts that named a CLI command only the user can run (`ledger clusters add`, `ledger
   review`, a `ledger mcp --db` config line) as if the agent could;
2. an agent id the store refuses, worded for the CLI's --agent, where on MCP it comes
   from the client's config entry or the client's name;
3. requests the SDK refuses before any tool runs (tools/call before initialize,
   "arguments": [] or a JSON string, params without a name) got a bare -32602 "Invalid
   request parameters" with empty data; an unknown tool got "Unknown tool: x"; a
   wrong JSON type got pydantic's words and Python's type names.

Raw JSON-RPC lines to a real ``ledger mcp`` child (tests/test_mcp.py's ``_piped``), and
the SDK's own client where the request is well formed; both engines.
"""

from __future__ import annotations

import json

import pytest
from test_mcp import INIT, INITIALIZED, _piped, call, connect, err, ok, only_the_users, run, store  # noqa: F401  (store: the fixture)

#: What the SDK said alone, before: nothing an agent can act on.
BARE = "Invalid request parameters"


def raw(rid: int, method: str, params=None, *, with_params: bool = True) -> str:
    d = {"jsonrpc": "2.0", "id": rid, "method": method}
    if with_params:
        d["params"] = params
    return json.dumps(d)


def error_of(replies: dict, rid: int) -> dict:
    (msg,) = replies[rid]
    assert "error" in msg, msg
    return msg["error"]


def tool_error_of(replies: dict, rid: int) -> str:
    (msg,) = replies[rid]
    assert msg["result"]["isError"] is True, msg
    return msg["result"]["content"][0]["text"]


# ----------------------------------------------------------------- 3. the request
def test_requests_the_sdk_refuses_say_what_was_wrong_and_what_to_send(store):  # noqa: F811
    replies, stderr = _piped(store, [
        call(2, "search", {"query": "deploy"}),  # before initialize
        raw(3, "tools/list"),  # before initialize, no params
        INIT, INITIALIZED,
        call(4, "search", []),  # the review's example: a list for arguments
        call(5, "recall", '{"query": "deploy"}'),  # arguments encoded as a JSON string
        call(6, "recall", "deploy"),  # a plain string
        call(7, "show", 5),
        raw(8, "tools/call", {"arguments": {"query": "x"}}),  # no name
        raw(9, "tools/call", {"name": 7, "arguments": {}}),
        raw(10, "tools/call", with_params=False),
        raw(11, "tools/call", None),
        call(12, "search", {"query": "deploy"}),  # and the server goes on
    ])
    for rid in range(2, 12):
        if rid == 3:
            continue
        e = error_of(replies, rid)
        assert e["code"] == -32602 and BARE not in e["message"] and e["message"].strip(), (rid, e)
        assert "Traceback" not in e["message"] and "pydantic" not in e["message"], (rid, e)
    before = error_of(replies, 2)["message"]
    assert before.startswith("tools/call was sent before initialize") and "Send the initialize request first" in before
    assert error_of(replies, 3)["message"].startswith("tools/list was sent before initialize")
    listed = error_of(replies, 4)["message"]
    assert "params.arguments must be an object of argument names to values (got an array)" in listed, listed
    assert "send {} or leave it out for none" in listed and 'e.g. {"query": "deploy"}' in listed, listed
    encoded = error_of(replies, 5)["message"]
    assert "params.arguments is a string holding JSON; send the object itself" in encoded, encoded
    assert '(got the string "deploy")' in error_of(replies, 6)["message"]
    assert "(got the number 5)" in error_of(replies, 7)["message"]
    assert 'show takes id (id required), e.g. {"id": "m_abc123"}' in error_of(replies, 7)["message"]
    assert "params.name is missing" in error_of(replies, 8)["message"]
    assert "params.name must be the tool's name as a string (got the number 7)" in error_of(replies, 9)["message"]
    for rid in (10, 11):
        said = error_of(replies, rid)["message"]
        assert "params must be an object {\"name\": <tool>, \"arguments\":" in said and "(got null)" in said, said
        assert "Tools: recall, search, show, remember, conflicts, judge, checkpoint." in said, said
    assert "result" in replies[12][0] and not replies[12][0]["result"]["isError"]
    assert "Traceback" not in stderr


def test_arguments_missing_or_null_read_as_none_and_a_required_one_says_so(store):  # noqa: F811
    # The MCP spec makes arguments optional: a tool that needs none runs; one that needs
    # some says which, that arguments was missing (or null), and what to send.
    replies, _ = _piped(store, [
        INIT, INITIALIZED,
        raw(2, "tools/call", {"name": "search"}),
        raw(3, "tools/call", {"name": "search", "arguments": None}),
        raw(4, "tools/call", {"name": "show"}),
        raw(5, "tools/call", {"name": "remember", "arguments": None}),
    ])
    for rid in (2, 3):
        assert replies[rid][0]["result"]["isError"] is False, replies[rid]
    show = tool_error_of(replies, 4)
    assert show == ("Error executing tool show: bad arguments (arguments was missing), nothing was done: id is missing "
                    '(a string). show takes id (id required), e.g. {"id": "m_abc123"}.'), show
    remember = tool_error_of(replies, 5)
    assert "(arguments was null)" in remember and "claim is missing (a string); cluster is missing" in remember
    assert '{"claim": "Prefers metric units", "cluster": "prefs"}' in remember


def test_an_unknown_tool_names_the_tools_and_who_does_the_rest(store):  # noqa: F811
    async def go():
        async with connect(store) as s:
            return {name: err(await s.call_tool(name, {"id": "m_x"}))
                    for name in ("nope", "recal", "mcp__ledger__recall", "forget", "resolve", "x" * 5000)}

    e = run(go)
    tools = "This server's tools: recall, search, show, remember, conflicts, judge, checkpoint (tools/list gives"
    for name, text in e.items():
        assert tools in text and "nothing was done" in text and "Unknown tool:" not in text, (name, text)
        only_the_users(text)
    assert e["nope"].startswith("There is no tool 'nope'; nothing was done. This server's"), e["nope"]
    assert "Did you mean recall?" in e["recal"] and "Did you mean recall?" in e["mcp__ledger__recall"]
    assert "Dropping a memory is for the user (their `ledger forget` or `ledger review`)" in e["forget"], e["forget"]
    assert "`judge` gives your verdict" in e["resolve"]
    assert len(e["x" * 5000]) < 400


@pytest.mark.parametrize("tool,args,said", [
    ("search", {"query": 5}, "query must be a string (got the number 5)"),
    ("remember", {"claim": "x is y", "cluster": "code", "files": "a.txt"},
     'files must be an array of strings, or null (got the string "a.txt")'),
    ("remember", {"claim": "x is y", "cluster": "code", "files": ["a.txt", 7]}, "files[1] must be a string (got the number 7)"),
    ("remember", {"claim": "x is y", "cluster": "code", "supersedes": ["m_a"]},
     "supersedes must be a string, or null (got an array)"),
    ("remember", {"claim": {"text": "x"}, "cluster": "code"}, "claim must be a string (got an object)"),
    ("remember", {"claim": True, "cluster": "code"}, "claim must be a string (got true)"),
    ("judge", {"candidate": "cc_x", "verdict": "conflict", "detector": "high"},
     'detector must be a number, or null (got the string "high")'),
    ("recall", {"query": "x", "limit": [5]}, "limit must be a whole number from 1 to 1000 (got an array)"),
    ("checkpoint", {"project": 3}, "project must be a string, or null (got the number 3)"),
])
def test_a_wrong_json_type_is_named_in_json_terms_with_what_to_send(store, tool, args, said):  # noqa: F811
    async def go():
        async with connect(store) as s:
            return err(await s.call_tool(tool, args)), ok(await s.call_tool("search", {}))

    text, after = run(go)
    assert said in text, text
    assert f"{tool} takes " in text and "e.g. {" in text, text
    for python in ("Input should", "NoneType", "(got int)", "(got str)", "(got list)", "(got dict)", "validation error"):
        assert python not in text, (python, text)
    assert after["total"] == 0  # nothing was written


# ----------------------------------------------------------------- 1. only the user can
def test_what_only_the_user_can_do_is_asked_of_the_user(tmp_path, monkeypatch):
    from ledger.service import MAX_TEXT_CHARS

    monkeypatch.chdir(tmp_path)

    missing = tmp_path / "elsewhere" / "ledger.db"  # no store there yet

    async def go():
        async with connect(missing) as s:
            out = {"no-store": ok(await s.call_tool("search", {"query": "x"}))["warnings"][0]["warning"],
                   "show-no-store": err(await s.call_tool("show", {"id": "m_abc"})),
                   "judge-no-store": err(await s.call_tool("judge", {"candidate": "cc_abc", "verdict": "conflict"}))}
            out["new-store"] = ok(await s.call_tool("remember", {"claim": "Tabs, not spaces", "cluster": "prefs"}))[
                "warnings"][0]["warning"]
            out["cluster"] = err(await s.call_tool("remember", {"claim": "x is y", "cluster": "nope"}))
            out["too-long"] = err(await s.call_tool("remember", {"claim": "word " * MAX_TEXT_CHARS, "cluster": "prefs"}))
            return out

    e = run(go)
    for name, text in e.items():
        only_the_users(text)
        assert "ledger mcp --db" not in text, (name, text)  # the entry's args, not a command to run
    for name in ("no-store", "show-no-store", "judge-no-store", "new-store"):
        assert "Only the user can choose this server's store: ask them to set $LEDGER_DB in the env" in e[name], e[name]
    assert "ask the user to add one (their command: `ledger clusters add <label>`)" in e["cluster"], e["cluster"]
    assert "ask the user to ingest it (their command: `ledger ingest <file>`)" in e["too-long"], e["too-long"]


def test_every_store_failure_says_who_can_fix_it():
    # Most reasons cannot be made on demand (a full disk, a missing driver, a newer
    # store): each reason of the kind goes through the server's phrase().
    from ledger.errors import STORE_REASONS, NotAClaim, store_unavailable
    from ledger.mcp.wording import phrase

    for reason in STORE_REASONS:
        text = phrase(store_unavailable(f"The store failed ({reason}).", reason=reason, path="/x/ledger.db"))
        only_the_users(text)
        if reason == "locked":
            continue  # "Try again": the agent can
        if reason != "migrating":  # only hooks defer migrations; the server's opens apply them
            assert "ask the user" in text or "ask them" in text or "tell the user" in text, (reason, text)
    chunk = phrase(NotAClaim("m_c is a chunk of source s_1.", source_id="s_1"))
    only_the_users(chunk)
    assert "`search` lists memories" in chunk and "s_1" in chunk


# ----------------------------------------------------------------- 2. the agent id
@pytest.mark.parametrize("agent,said", [
    ("a" * 100, "The agent id is 100 characters long; at most 64 are allowed"),  # the review's example
    ("my agent", "The agent id 'my agent' has a space"),
])
def test_an_agent_id_the_store_refuses_names_what_the_client_controls(store, agent, said):  # noqa: F811
    async def go():
        async with connect(store, LEDGER_AGENT=agent) as s:
            return (err(await s.call_tool("remember", {"claim": "Tabs, not spaces", "cluster": "prefs"})),
                    err(await s.call_tool("recall", {"query": "tabs"})),
                    ok(await s.call_tool("search", {"query": "tabs"})))

    w, r, s = run(go)
    for text in (w, r):
        assert said in text, text
        only_the_users(text)
        assert "On this server the agent id is no tool argument: it is $LEDGER_AGENT in the env (or --agent ID in the " \
               "args) of the ledger entry in the client's MCP config" in text, text
        assert "clientInfo.name" in text and "The CLI's agent id" not in text and "the server's --agent" not in text
        assert "Use my-agent." not in text, text  # the core's words to whoever set it: the user, here
    if agent == "my agent":
        assert "Ask the user to change it to my-agent (or remove it) and reload the client." in w, w
    assert s["total"] == 0  # a tool that names no agent still works


def test_an_id_left_blank_or_of_another_kind_points_to_the_tool_that_lists_them(store):  # noqa: F811
    # "a search shows the ids" and "No pending conflict candidate cf_x." named no tool;
    # an agent holding a conflict or memory id for judge learns what judge takes.
    from ledger.service import Ledger

    Ledger.open(store).close()

    async def go():
        async with connect(store) as s:
            return {"show": err(await s.call_tool("show", {"id": "  "})),
                    "conflict": err(await s.call_tool("judge", {"candidate": "cf_abc", "verdict": "conflict"})),
                    "memory": err(await s.call_tool("judge", {"candidate": "m_abc", "verdict": "conflict"})),
                    "blank": err(await s.call_tool("judge", {"candidate": "", "verdict": "conflict"}))}

    e = run(go)
    for text in e.values():
        only_the_users(text)
    assert e["show"].endswith("Which memory? The memory id is empty: give one such as m_abc123. `search` lists ids.")
    assert "That is a conflict id: that pair was judged already and waits for the user (their `ledger review`)." \
        in e["conflict"] and e["conflict"].endswith("`conflicts` lists the ones waiting."), e["conflict"]
    assert "That is a memory id: judge takes a candidate id (cc_...)" in e["memory"], e["memory"]
    assert "`conflicts` lists the ones waiting" in e["blank"]


def test_other_requests_with_bad_params_name_the_field_in_json_terms(store):  # noqa: F811
    # The same bare -32602 answered any method's params the SDK's model refuses.
    replies, _ = _piped(store, [
        raw(1, "initialize", {"protocolVersion": "2025-06-18"}),  # no capabilities, no clientInfo
        INIT.replace('"id": 1', '"id": 2'), INITIALIZED,
        raw(3, "tools/list", {"cursor": 5}),
        raw(4, "tools/call", {"name": "search", "arguments": {}, "_meta": 5}),
        raw(5, "ping"),
    ])
    said = {rid: error_of(replies, rid)["message"] for rid in (1, 3, 4)}
    assert said[1] == "Invalid params for initialize: params.capabilities is missing; params.clientInfo is missing."
    assert said[3] == "Invalid params for tools/list: params.cursor must be a string (got the number 5)."
    assert said[4] == "Invalid params for tools/call: params._meta must be an object (got the number 5)."
    assert "result" in replies[2][0] and replies[5][0]["result"] == {}


def test_a_store_of_a_newer_ledger_asks_the_user_to_upgrade(store):  # noqa: F811
    # The core's fix is a command ("Upgrade ledger (pip install -U ledger-memory)"): on
    # MCP it is the user's to run, and the server needs reloading after.
    from conftest import store_sql

    from ledger.service import Ledger

    Ledger.open(store).close()
    store_sql(store, "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", ("9999_from_a_newer_ledger", 0))

    async def go():
        async with connect(store) as s:
            return (err(await s.call_tool("search", {"query": "x"})),
                    err(await s.call_tool("remember", {"claim": "Tabs, not spaces", "cluster": "prefs"})))

    for text in run(go):
        only_the_users(text)
        assert "written by a newer ledger" in text, text
        assert "Only the user can upgrade ledger (their command: pip install -U ledger-memory)" in text, text
        assert "Ask them to, then to reload the client." in text, text


def test_a_postgresql_store_without_its_driver_asks_the_user_to_install_it(tmp_path, monkeypatch):
    # psycopg hidden from the server (a package of that name that fails to import,
    # first on its path): the server cannot speak to PostgreSQL, and only the user can
    # install the driver.
    shadow = tmp_path / "shadow" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    monkeypatch.chdir(tmp_path)

    async def go():
        async with connect("postgresql://nobody@127.0.0.1:9/nostore", PYTHONPATH=str(shadow.parent)) as s:
            return err(await s.call_tool("search", {"query": "x"}))

    text = run(go)
    only_the_users(text)
    assert "the psycopg package is missing. Only the user can install it, with their command: pip install" in text, text
    assert text.endswith("Ask them to, then to reload the client."), text
