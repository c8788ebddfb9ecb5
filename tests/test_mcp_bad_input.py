"""`ledger mcp` against arguments an agent (or a broken client) can send that the SDK's
schema check lets through or words badly: paths no file system takes, megabyte strings,
wrong types. Each is one tool error that says what is wrong, never a blank
"Error executing tool" or a flood of echoed input, and the server goes on. Driven
through the SDK's own client over a real stdio subprocess, as tests/test_mcp.py.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import LEDGER_BIN
from test_mcp import connect, err, ok, run

from ledger.mcp.server import MAX_ERROR_CHARS


@pytest.fixture
def store(store_target):
    return store_target


def test_file_paths_no_file_system_takes_are_clear_tool_errors_or_keys_without_state(store):
    # A NUL byte and a name over the file system's limit crashed the tool (the client
    # saw only "Error executing tool remember", the server's stderr a traceback).
    long_name = "a" * 5000
    deep = "/".join(["d"] * 3000)

    async def go():
        async with connect(store) as s:
            out = {
                "nul": err(await s.call_tool("remember", {"claim": "x is y here", "cluster": "code",
                                                          "files": ["a\x00b.txt"]})),
                "long": ok(await s.call_tool("remember", {"claim": "a file with a long name", "cluster": "code",
                                                          "files": [long_name], "detail": True})),
                "deep": ok(await s.call_tool("remember", {"claim": "a file deep down", "cluster": "code",
                                                          "files": [deep]})),
            }
            out["after"] = ok(await s.call_tool("search", {}))
            return out

    e = run(go)
    assert "NUL byte" in e["nul"] and "Remove it" in e["nul"], e["nul"]
    assert e["long"]["files"][0]["path"].endswith(long_name)
    assert e["deep"]["id"].startswith("m_")
    assert e["after"]["total"] == 2  # the NUL one wrote nothing


def test_the_cli_says_the_same_about_a_name_too_long(store, tmp_path):
    # `ledger remember --file <5000 characters>` printed an OSError traceback.
    p = subprocess.run([LEDGER_BIN, "remember", "a fact about a long name", "--cluster", "code", "--file", "b" * 5000,
                        "--db", str(store), "--json"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "LEDGER_HOME": str(tmp_path / "home")}, cwd=tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr


def test_megabyte_arguments_get_a_short_answer(store):
    # A 1 MB id hit SQLite's LIKE limit ("pattern too complex ... report this as a ledger
    # bug"); errors echoed megabyte arguments back whole into the agent's context.
    big_id = "m_" + "a" * 1_000_000
    from ledger.service import Ledger

    Ledger.open(store).close()  # a store that exists (a missing one: tests/test_mcp_warnings.py)

    async def go():
        async with connect(store) as s:
            return {
                "show": err(await s.call_tool("show", {"id": big_id})),
                "kind": err(await s.call_tool("judge", {"candidate": "cc_x", "verdict": "conflict", "kind": "k" * 500_000})),
                "claim": err(await s.call_tool("remember", {"claim": "w " * 500_000, "cluster": "code"})),
                "supersedes": err(await s.call_tool("remember", {"claim": "x is y here", "cluster": "code",
                                                                 "supersedes": "m_" + "z" * 100_000})),
            }

    e = run(go)
    assert "No memory m_aaaa" in e["show"] and "ledger bug" not in e["show"] and "too complex" not in e["show"], e["show"]
    for name, text in e.items():
        assert len(text) <= MAX_ERROR_CHARS + 100, (name, len(text))
    # A megabyte "id" is named as too long to be one, not echoed back.
    assert "(1,000,002 characters): a memory id is about 16 characters" in e["show"], e["show"]
    assert e["show"].rstrip().endswith("`search` lists ids.")
    assert "characters cut" in e["kind"]  # other long arguments are cut by the server
    assert "Unknown kind" in e["kind"] and "max 20000" in e["claim"] and "Nothing was remembered" in e["supersedes"]


def test_queries_longer_than_a_claim_are_refused_at_once(store):
    # A 10 MB recall query took 18 s (MCP has no command-line limit on arguments). The
    # limit is the query parser's, so every surface has it; at the limit a query runs.
    from ledger.query.parser import MAX_QUERY_CHARS

    async def go():
        async with connect(store) as s:
            ok(await s.call_tool("remember", {"claim": "the boiler pressure is 2 bar", "cluster": "code"}))
            return {
                "recall": err(await s.call_tool("recall", {"query": "boiler " * 2_000_000})),
                "search": err(await s.call_tool("search", {"query": "x" * (MAX_QUERY_CHARS + 1)})),
                "at_limit": ok(await s.call_tool("search", {"query": ("boiler " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]})),
            }

    e = run(go)
    for name in ("recall", "search"):
        assert "The query is too long:" in e[name] and "the limit is 20,000" in e[name], e[name]
        assert "Cannot parse" not in e[name]
        assert len(e[name]) < 400, (name, len(e[name]))
    assert e["at_limit"]["total"] == 1


def test_wrong_types_are_named_per_argument_in_one_line(store):
    # The SDK passed pydantic's text on: "1 validation error for recallArguments ...
    # For further information visit https://errors.pydantic.dev/...".
    async def go():
        async with connect(store) as s:
            return {
                "query": err(await s.call_tool("recall", {"query": 123})),
                "two": err(await s.call_tool("remember", {"claim": 42})),
                "files": err(await s.call_tool("remember", {"claim": "x is y", "cluster": "code", "files": "a.txt"})),
                "note": err(await s.call_tool("remember", {"claim": "x is y", "cluster": "code", "note": None})),
                "limit": err(await s.call_tool("search", {"query": "x", "limit": 1.5})),
            }

    e = run(go)
    for text in e.values():
        assert "pydantic" not in text and "Arguments" not in text and "\n" not in text, text
        assert text.startswith("Error executing tool ") and "bad arguments, nothing was done: " in text
        assert "Input should" not in text and "NoneType" not in text, text  # JSON's words, not Python's
    assert "query must be a string (got the number 123)" in e["query"]
    assert e["query"].endswith('recall takes query, limit, mode, detail (query required), e.g. {"query": '
                               '"deploy steps"}.'), e["query"]
    assert "claim must be a string (got the number 42); cluster is missing (a string)" in e["two"], e["two"]
    assert 'files must be an array of strings, or null (got the string "a.txt")' in e["files"]
    assert "note must be a string (got null)" in e["note"]
    assert "limit must be a whole number from 1 to 10000 (got the number 1.5)" in e["limit"], e["limit"]


def test_a_crash_in_a_tool_is_answered_with_its_cause_and_clipped():
    # The SDK answers a crash with only "Error executing tool <name>"; the agent then
    # cannot tell a bug from its own mistake.
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from ledger.mcp.server import _MCPServer

    app = _MCPServer(name="t")

    def boom(n: int) -> str:
        """Fails."""
        raise RuntimeError("x" * 10 * MAX_ERROR_CHARS if n else "the disk went away")

    app.add_tool(boom, name="boom")
    for n in (0, 1):
        with pytest.raises(ToolError) as info:
            anyio.run(app.call_tool, "boom", {"n": n})
        text = str(info.value)
        assert text.startswith("Error executing tool boom: ledger failed unexpectedly (RuntimeError: ")
        assert text.endswith("The server goes on. This is a ledger bug, not a mistake in the call: tell the user, "
                             "who can report it.") and len(text) <= MAX_ERROR_CHARS + 100
        assert ("the disk went away" in text) == (n == 0)


def test_a_folder_as_a_remembered_file_is_a_clear_tool_error(store, tmp_path):
    # Fresh-user finding 9: `remember --file <folder>` was accepted; MCP's files too.
    async def go():
        async with connect(store) as s:
            e = err(await s.call_tool("remember", {"claim": "the port is 9090", "cluster": "code",
                                                   "files": [str(tmp_path)]}))
            return e, ok(await s.call_tool("search", {}))

    e, after = run(go)
    assert f"{tmp_path} is a folder; a fact is keyed to a file." in e, e
    assert after["total"] == 0


# A valid call of each tool: the one every bad-argument case below starts from.
VALID = {"recall": {"query": "deploy"}, "search": {"query": "deploy"}, "show": {"id": "m_nothere"},
         "remember": {"claim": "the deploy runs at noon", "cluster": "proc"}, "conflicts": {},
         "judge": {"candidate": "cc_nothere", "verdict": "conflict"}, "checkpoint": {}}


def test_every_listed_tool_refuses_arguments_it_does_not_take(store):
    # Fresh-user finding: search {"query": "deploy", "mode": "bogus"} and {"offset": -5}
    # answered normal hits (the SDK drops names a tool does not take), while the CLI and
    # /api/search refuse them. Every tool the server lists, so a new tool cannot slip by.
    async def go():
        async with connect(store) as s:
            tools = {t.name: t.input_schema for t in (await s.list_tools()).tools}
            out = {name: err(await s.call_tool(name, {**VALID[name], "bogus_arg": 1})) for name in tools}
            out["offset"] = err(await s.call_tool("search", {"query": "deploy", "offset": -5}))
            out["limt"] = err(await s.call_tool("recall", {"query": "deploy", "limt": 5}))
            out["two"] = err(await s.call_tool("conflicts", {"limit": 2, "page": 2, "Limit": 3}))
            return tools, out, ok(await s.call_tool("search", {}))

    tools, e, after = run(go)
    assert set(tools) == set(VALID)
    for name, schema in tools.items():
        assert schema["additionalProperties"] is False, name  # the schema says what the server enforces
        takes = ", ".join(schema["properties"]) or "no arguments"
        assert e[name] == (f"Error executing tool {name}: unknown argument bogus_arg: nothing was done. "
                           f"{name} takes {takes}."), e[name]
    assert e["offset"].endswith("unknown argument offset: nothing was done. search takes query, limit, mode, sort, "
                                "detail."), e["offset"]
    assert "unknown argument limt (did you mean limit?)" in e["limt"]
    assert "unknown arguments page, Limit (did you mean limit?):" in e["two"]
    assert after["total"] == 0  # the remember with a bogus argument wrote nothing


@pytest.mark.parametrize("tool,args,needle", [
    ("search", {"mode": "bogus"}, 'mode must be one of "hybrid", "keyword", "fuzzy" (got the string "bogus")'),
    ("recall", {"mode": "Keyword"}, 'mode must be one of "hybrid", "keyword", "fuzzy" (got the string "Keyword")'),
    ("search", {"sort": "size"}, 'sort must be one of "relevance", "strength", "hits", "created", "last", or null '
                                 '(got the string "size")'),
    ("search", {"limit": -5}, "limit must be a whole number from 1 to 10000 (got the number -5)"),
    ("recall", {"limit": 1001}, "limit must be a whole number from 1 to 1000 (got the number 1001)"),
    ("conflicts", {"limit": 0}, "limit must be a whole number from 1 to 500 (got the number 0)"),
    ("search", {"detail": "maybe"}, 'detail must be true or false (got the string "maybe")'),
    ("judge", {"verdict": "maybe"}, 'verdict must be "conflict" or "unrelated", got "maybe".'),
    ("judge", {"detector": 5}, "detector must be from 0 to 1 (your confidence), got 5.0."),
    ("judge", {"kind": "bogus"}, 'Unknown kind "bogus". Kinds: direct contradiction, value drift'),
])
def test_values_out_of_range_or_choice_say_what_is_allowed(store, tool, args, needle):
    # The CLI's choices and ranges, in the argument's own name (never --mode).
    async def go():
        async with connect(store) as s:
            return err(await s.call_tool(tool, {**VALID[tool], **args}))

    e = run(go)
    assert needle in e and "--" not in e, e


def test_mode_and_sort_are_the_clis(store):
    # The CLI's search takes --mode and --sort, recall --mode: the tools take the same,
    # with the same answers.
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("the deploy script lives in ops/deploy.sh", cluster="proc", agent="t")
        led.remember("deployment happens every friday at noon", cluster="proc", agent="t")
        led.remember("the deploy needs the VPN up", cluster="proc", agent="t")

    async def go():
        async with connect(store) as s:
            return {(mode, sort): [h["id"] for h in ok(await s.call_tool("search", {"query": "deploy", "mode": mode,
                                                                                     "sort": sort}))["hits"]]
                    for mode in ("keyword", "fuzzy") for sort in ("created", "relevance")}

    got = run(go)
    for (mode, sort), ids in got.items():
        cli = subprocess.run([LEDGER_BIN, "search", "deploy", "--mode", mode, "--sort", sort, "--db", str(store),
                              "--json"], capture_output=True, text=True, timeout=60, env=dict(os.environ))
        assert cli.returncode == 0, cli.stderr
        import json

        assert ids == [m["id"] for m in json.loads(cli.stdout)["hits"]], (mode, sort)
    newest_first = got[("fuzzy", "created")]
    assert len(newest_first) == 3 and newest_first == sorted(newest_first, reverse=True)  # ids grow with time
