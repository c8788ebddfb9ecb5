"""`ledger mcp` driven by the MCP SDK's own client over a real stdio subprocess, with a
private store: the tools and their annotations, every tool called, bad arguments, a store
locked by another writer, and a client that goes away mid-call.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from conftest import LEDGER_BIN, WriteLock, is_pg, store_sql
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation

TOOLS = {"recall", "search", "show", "remember", "conflicts", "judge", "checkpoint"}
#: What an MCP client must not be told to type: the CLI commands of the tools and flags.
CLI_SYNTAX = ("ledger recall", "ledger search", "ledger remember", "ledger show", "ledger conflicts", "ledger judge",
              "ledger checkpoint", "Try: ledger", " --")
COMPACT = {"id", "strength", "text", "cluster"}
#: A sentence naming something only the user can run or set: a CLI command, a flag, a
#: store or agent setting.
USERS_THINGS = re.compile(r"`ledger |\bledger (?:clusters|review|doctor|ingest|install|config|sources|serve)\b|"
                          r"\$LEDGER_|(?<![\w-])--[a-z]|pip install|sqlite3 <")


def only_the_users(text: str) -> None:
    """An MCP error or warning names a command or setting only as the user's: each
    sentence that names one also says whose it is ("ask the user", "their command"). An
    agent told "set $LEDGER_DB" or "run `ledger review`" cannot; one told to ask the user
    can (docs/mcp.md "Errors")."""
    for sentence in re.split(r"(?<=[.?!])\s+(?=[A-Z`])", text):
        if USERS_THINGS.search(sentence):
            assert re.search(r"\buser\b|\buser's\b|\btheir\b|\bthem\b", sentence), (sentence, text)


@pytest.fixture
def store(store_target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the servers' working folder (connect)
    return store_target


def server_env(store: Path, **extra) -> dict:
    env = {"LEDGER_DB": str(store), "LEDGER_HOME": os.environ["LEDGER_HOME"], "NO_COLOR": "1"}
    env.update(extra)
    return env


@asynccontextmanager
async def connect(store: Path, client: str = "pytest-client", errlog=None, prefix: tuple[str, ...] = (), **extra):
    """A client session with a real ``ledger mcp`` child on ``store``; ``prefix`` runs the
    server under another command (tests/readonly.py's read-only mount)."""
    argv = [*prefix, LEDGER_BIN, "mcp"]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env(store, **extra),
                                   cwd=os.getcwd())
    with open(os.devnull, "w") if errlog is None else errlog as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, client_info=Implementation(name=client, version="1.0")) as s:
                await s.initialize()
                yield s


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


def ok(result) -> dict:
    """The JSON a successful call returned (its text content, which every client reads)."""
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def err(result) -> str:
    assert result.is_error, result.content
    return result.content[0].text


def cli_json(store: Path, *args) -> object:
    p = subprocess.run([LEDGER_BIN, *args, "--db", str(store), "--json"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def cli_error(store: Path, *args) -> str:
    p = subprocess.run([LEDGER_BIN, *args, "--db", str(store)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    assert p.returncode == 1, p
    return p.stderr.strip().removeprefix("✕ ")


# ----------------------------------------------------------------------------- the tools
def test_tools_are_listed_with_true_annotations(store):
    async def go():
        async with connect(store) as s:
            return (await s.list_tools()).tools

    tools = {t.name: t for t in run(go)}
    assert set(tools) == TOOLS  # no resolve, no forget: those stay with people
    hints = {n: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint,
                 t.annotations.open_world_hint) for n, t in tools.items()}
    assert hints == {
        "recall": (True, False, False, False),  # counts a use: calling again strengthens again
        "search": (True, False, True, False),
        "show": (True, False, True, False),
        "conflicts": (True, False, True, False),
        "checkpoint": (True, False, True, False),
        "remember": (False, False, False, False),
        "judge": (False, False, True, False),
    }
    assert tools["remember"].input_schema["required"] == ["claim", "cluster"]
    assert set(tools["remember"].input_schema["properties"]) >= {"claim", "cluster", "topic", "files", "supersedes",
                                                                 "note", "detail"}
    assert tools["judge"].input_schema["required"] == ["candidate", "verdict"]
    for t in tools.values():
        assert t.description and "ctx" not in t.input_schema["properties"]


def test_remember_stores_a_secret_redacted_and_says_how_many(store):
    """Finding 4 of 2026-12-01: what an agent remembers is redacted before it is stored."""

    async def go():
        async with connect(store) as s:
            w = ok(await s.call_tool("remember", {"claim": "staging deploy uses DB_PASS=DbPass7 and auth: AuthOnly3",
                                                  "cluster": "code"}))
            plain = ok(await s.call_tool("remember", {"claim": "staging deploy runs at noon", "cluster": "code"}))
            found = ok(await s.call_tool("search", {"query": "DbPass7"}))
            return w, plain, found

    w, plain, found = run(go)
    assert w["redacted"] == 2 and w["text"] == "staging deploy uses DB_PASS=[REDACTED:password] and auth: [REDACTED:auth]"
    assert plain["redacted"] == 0 and found["total"] == 0


def test_remember_recall_show_search_and_who_read_it(store, tmp_path):
    model = tmp_path / "model.ckpt"
    model.write_bytes(b"weights")

    async def go():
        async with connect(store, client="Cursor Agent") as s:
            w = ok(await s.call_tool("remember", {"claim": "model.ckpt is a safetensors file, not a pickle",
                                                  "cluster": "code", "files": [str(model)], "topic": "file-format:model.ckpt",
                                                  "note": "checked the header"}))
            r = ok(await s.call_tool("recall", {"query": "model.ckpt safetensors"}))
            full = ok(await s.call_tool("recall", {"query": "safetensors", "detail": True}))
            found = ok(await s.call_tool("search", {"query": "safetensors"}))
            shown = ok(await s.call_tool("show", {"id": w["id"]}))
            return w, r, full, found, shown

    w, r, full, found, shown = run(go)
    assert set(w) >= COMPACT | {"duplicate", "proposed", "conflictId", "pendingCandidates"} and not w["duplicate"]
    assert r["total"] == 1 and set(r["hits"][0]) == COMPACT
    assert r["hits"][0] == {"id": w["id"], "strength": w["strength"], "text": w["text"], "cluster": "code"}
    # detail is what `ledger recall --json` prints for the same memory (one wire module).
    cli = cli_json(store, "show", w["id"])
    # A hit in full is the memory as `ledger show --json` gives it, less its history.
    assert set(full["hits"][0]) - {"score"} == set(cli) - {"history", "formerTexts"}
    assert full["hits"][0]["files"][0]["path"] == str(model.resolve())
    assert shown["history"] == cli["history"] and [e["op"] for e in shown["history"]] == ["memory.write"]
    assert shown["formerTexts"] == cli["formerTexts"] == []
    assert set(found["hits"][0]) == COMPACT
    # Two recalls counted, by the client's own name; search and show did not count.
    assert shown["hits"] == 2 and shown["readers"] == ["cursor-agent"] and shown["writer"] == "cursor-agent"
    assert cli["hits"] == 2 and shown["topic"] == "file-format:model.ckpt"
    # The file changes: the compact form says the fact may be stale.
    model.write_bytes(b"other weights")

    async def again():
        async with connect(store) as s:
            return ok(await s.call_tool("search", {"query": "safetensors"}))

    assert "model.ckpt changed" in run(again)["hits"][0]["stale"]


def test_ledger_agent_overrides_the_clients_name(store):
    async def go():
        async with connect(store, client="claude-code", LEDGER_AGENT="reviewer-bot") as s:
            w = ok(await s.call_tool("remember", {"claim": "Staging deploys need the VPN up", "cluster": "proc"}))
            ok(await s.call_tool("recall", {"query": "staging vpn"}))
            return ok(await s.call_tool("show", {"id": w["id"]}))

    m = run(go)
    assert m["writer"] == "reviewer-bot" and m["readers"] == ["reviewer-bot"]


def test_the_same_fact_twice_corroborates_and_supersedes_opens_a_conflict(store):
    async def go():
        async with connect(store) as s:
            a = ok(await s.call_tool("remember", {"claim": "CI runs on Python 3.11", "cluster": "code"}))
            again = ok(await s.call_tool("remember", {"claim": "CI runs on Python 3.11", "cluster": "code"}))
            b = ok(await s.call_tool("remember", {"claim": "CI now runs on Python 3.12", "cluster": "code",
                                                  "supersedes": a["id"]}))
            return a, again, b

    a, again, b = run(go)
    assert again["duplicate"] and again["id"] == a["id"]
    assert b["conflictId"].startswith("cf_")


def test_conflicts_and_judge(store):
    async def go():
        async with connect(store) as s:
            ok(await s.call_tool("remember", {"claim": "The Acme invoice is due on the 25th of each month",
                                              "cluster": "money"}))
            w = ok(await s.call_tool("remember", {"claim": "The Acme invoice is due on the 28th of each month",
                                                  "cluster": "money"}))
            c = ok(await s.call_tool("conflicts", {}))
            cand = c["candidates"][0]["id"]
            full = ok(await s.call_tool("conflicts", {"detail": True}))
            j = ok(await s.call_tool("judge", {"candidate": cand, "verdict": "conflict", "kind": "value drift",
                                               "detector": 0.9, "note": "the day moved"}))
            twice = err(await s.call_tool("judge", {"candidate": cand, "verdict": "conflict"}))
            left = ok(await s.call_tool("conflicts", {}))
            return w, c, full, j, twice, left, cand

    w, c, full, j, twice, left, cand = run(go)
    assert w["proposed"] == [cand]
    assert c["waiting"] == len(c["candidates"]) == 1 and left["waiting"] == 0
    assert set(c["candidates"][0]["a"]) == COMPACT and set(c["candidates"][0]["signals"])
    assert "factors" in full["candidates"][0]["a"]
    assert j["candidate"] == cand and j["verdict"] == "conflict"
    assert j["conflict"]["id"].startswith("cf_") and j["conflict"]["kind"] == "value drift"
    assert j["conflict"]["detector"] == 0.9 and j["conflict"]["status"] == "open"
    assert cand in twice and left["candidates"] == []


def test_judge_unrelated_settles_the_pair(store):
    async def go():
        async with connect(store) as s:
            ok(await s.call_tool("remember", {"claim": "The staging server restarts at 02:00 on Mondays",
                                              "cluster": "proc"}))
            w = ok(await s.call_tool("remember", {"claim": "The staging server restarts at 03:00 on Mondays",
                                                  "cluster": "proc"}))
            j = ok(await s.call_tool("judge", {"candidate": w["proposed"][0], "verdict": "unrelated"}))
            return j, ok(await s.call_tool("conflicts", {}))

    j, left = run(go)
    assert j["conflict"] is None and left["candidates"] == []


def test_checkpoint_is_the_last_one_of_the_project(store, tmp_path):
    from ledger.service import Ledger

    proj, other = tmp_path / "proj", tmp_path / "other"
    proj.mkdir()
    other.mkdir()
    with Ledger.open(store) as led:
        led.store.watch.add_checkpoint(session="claude-code:s1", project=str(proj), event="Stop", branch="main",
                                       content="# Task\nfirst", now=1_000)
        led.store.watch.add_checkpoint(session="claude-code:s2", project=str(proj), event="Stop", branch="fix",
                                       content="# Task\nsecond", now=2_000)
        led.store.watch.add_checkpoint(session="opencode:s3", project=str(other), event="idle", branch=None,
                                       content="elsewhere", now=3_000)

    async def go():
        async with connect(store) as s:
            here = ok(await s.call_tool("checkpoint", {"project": str(proj)}))
            relative = ok(await s.call_tool("checkpoint", {"project": "other"}))  # the server runs in tmp_path
            none = ok(await s.call_tool("checkpoint", {"project": str(tmp_path / "nowhere")}))
            return here, relative, none

    here, relative, none = run(go)
    assert here["checkpoint"]["content"] == "# Task\nsecond" and here["checkpoint"]["branch"] == "fix"
    assert relative["project"] == str(other) and relative["checkpoint"]["content"] == "elsewhere"
    (w,) = none.pop("warnings")
    assert none == {"project": str(tmp_path / "nowhere"), "checkpoint": None}
    assert w["kind"] == "no-project" and w["path"] == str(tmp_path / "nowhere") and "is not a folder" in w["warning"]
    assert relative["warnings"] == [] and here["warnings"] == []


# ----------------------------------------------------------------------------- bad input
def test_bad_arguments_are_tool_errors_with_the_clis_words_and_the_server_goes_on(store):
    from ledger.service import Ledger

    Ledger.open(store).close()  # a store that exists: a missing one is tests/test_mcp_warnings.py's

    async def go():
        async with connect(store) as s:
            out = {
                "cluster": err(await s.call_tool("remember", {"claim": "x is y", "cluster": "nope"})),
                "cluster_typo": err(await s.call_tool("remember", {"claim": "x is y", "cluster": "prefz"})),
                "empty": err(await s.call_tool("remember", {"claim": "   ", "cluster": "code"})),
                "show": err(await s.call_tool("show", {"id": "m_doesnotexist"})),
                "verdict": err(await s.call_tool("judge", {"candidate": "cc_x", "verdict": "maybe"})),
                "query": err(await s.call_tool("recall", {"query": "strength:>abc"})),
                "nothing": err(await s.call_tool("recall", {"query": ""})),
                "missing": err(await s.call_tool("remember", {"claim": "no cluster given"})),
                "type": err(await s.call_tool("recall", {"query": "x", "limit": "many"})),
                "range": err(await s.call_tool("recall", {"query": "x", "limit": 0})),
                "files": err(await s.call_tool("remember", {"claim": "a b", "cluster": "code", "files": [" "]})),
                "files_2": err(await s.call_tool("remember", {"claim": "a b", "cluster": "code",
                                                              "files": ["a.py", "", "b.py", "\t"]})),
                "supersedes": err(await s.call_tool("remember", {"claim": "a b", "cluster": "code",
                                                                 "supersedes": "m_nothere"})),
                "tool": err(await s.call_tool("forget", {"id": "m_x"})),
            }
            out["after"] = ok(await s.call_tool("search", {}))
            return out

    e = run(go)
    # After the SDK's "Error executing tool <name>: ", the core's message as the CLI gives
    # it, with what to do next in the tools' terms (argument names, tool names) where the
    # CLI names its commands and flags: "e.g. ledger recall deploy steps" reached agents.
    known = cli_error(store, "remember", "x is y", "--cluster", "nope").split(" Create it with")[0]
    assert e["cluster"] == (f"Error executing tool remember: {known} Write to one of them; if none fits, ask the "
                            "user to add one (their command: `ledger clusters add <label>`).")
    assert e["cluster_typo"].startswith(f"Error executing tool remember: {known.replace('nope', 'prefz')}")
    assert e["show"].endswith(cli_error(store, "show", "m_doesnotexist").replace("`ledger search`", "`search`"))
    assert e["query"].endswith(cli_error(store, "recall", "strength:>abc"))
    assert e["verdict"].endswith(cli_error(store, "judge", "cc_x", "--verdict", "maybe").replace("--verdict", "verdict"))
    assert e["empty"].endswith('Nothing to remember. Give claim one self-contained sentence, e.g. "Prefers metric '
                               'units", with a cluster such as "prefs".')
    assert e["nothing"].endswith('What should I recall? Give words or a filter. For example query "deploy steps" or '
                                 'query "cluster:proc"; `search` with an empty query lists the strongest memories '
                                 '(sort "created" for the newest).')
    for name, text in e.items():
        if name != "after":
            assert not any(cli in text for cli in CLI_SYNTAX), (name, text)
    assert "cluster is missing (a string)" in e["missing"] and "(claim, cluster required)" in e["missing"]
    assert "limit must be a whole number from 1 to 1000 (got the string \"many\")" in e["type"], e["type"]
    assert "limit must be a whole number from 1 to 1000 (got the number 0)" in e["range"], e["range"]
    assert "entry 0 (counting from 0) is empty" in e["files"] and "entries 1, 3 (counting from 0) are empty" in e["files_2"]
    assert "files needs paths" in e["files"] and "m_nothere" in e["supersedes"] and "Nothing was remembered" in e["supersedes"]
    assert "forget" in e["tool"]
    assert e["after"]["total"] == 0  # nothing was written by any of them


def test_a_store_locked_by_another_writer_is_a_clear_tool_error(store):
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")
    holder = WriteLock(store)

    async def go():
        async with connect(store) as s:
            t0 = time.monotonic()
            w = await s.call_tool("remember", {"claim": "The VPN needs a token", "cluster": "proc"})
            waited = time.monotonic() - t0
            r = ok(await s.call_tool("recall", {"query": "staging vpn"}))
            cli = cli_error(store, "remember", "The VPN needs a token", "--cluster", "proc")
            holder.release()
            after = ok(await s.call_tool("remember", {"claim": "The VPN needs a token", "cluster": "proc"}))
            return err(w), waited, r, after, cli

    try:
        message, waited, r, after, cli = run(go)
    finally:
        holder.release()
    # The CLI's words: the store is busy, try again; a lock is not a ledger bug.
    assert ("locked" in message or "busy" in message) and message.endswith(cli) and "ledger bug" not in message, message
    assert waited < 30
    # Reading still works; the read is returned and says it was not counted.
    assert r["total"] == 1 and "notCounted" in r
    assert after["id"].startswith("m_")


def test_a_client_that_disconnects_mid_call_leaves_the_server_to_exit_cleanly(store, tmp_path):
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")
    holder = WriteLock(store)  # the remember below waits on this lock: mid-call for sure
    p = subprocess.Popen([LEDGER_BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, **server_env(store)})
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "gone", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "remember", "arguments": {"claim": "The VPN needs a hardware token", "cluster": "proc"}}}]
    p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs).encode())
    p.stdin.flush()
    assert json.loads(p.stdout.readline())["id"] == 1  # initialized; the call is now in flight
    time.sleep(0.5)
    # The client dies: both pipes close under the server.
    p.stdin.close()
    p.stdout.close()
    threading.Timer(1.0, holder.release).start()
    try:
        rc = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    stderr = p.stderr.read().decode()
    p.stderr.close()
    assert rc == 0, stderr
    assert "Traceback" not in stderr, stderr
    if not is_pg(store):
        assert store_sql(store, "PRAGMA integrity_check") == [("ok",)]
    [(n,)] = store_sql(store, "SELECT count(*) FROM memories WHERE text LIKE '%hardware token%'")
    # The call in flight was finished (the lock went 1 s after the client), whole: one row.
    assert n == 1, n
    assert cli_json(store, "search", "staging")["total"] == 1


def test_ledger_mcp_help_goes_through_click_and_bad_options_exit_2(store):
    p = subprocess.run([LEDGER_BIN, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "MCP client" in p.stdout
    p = subprocess.run([LEDGER_BIN, "mcp", "--bogus"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "--bogus" in p.stderr and p.stdout == ""
    # The CLI's own form, not argparse's usage block.
    assert p.stderr.startswith("✕ ") and "usage:" not in p.stderr and "ledger mcp --help" in p.stderr, p.stderr


@pytest.mark.parametrize("make, needle", [
    (lambda p: p.write_text("this is a text file, not a store\n"), "not a usable SQLite file"),
    (lambda p: (p.parent / "blocker").write_text("x"), "is a file, not a folder"),
])
@pytest.mark.sqlite_only  # a SQLite file that is not a database, or whose folder cannot be made
def test_a_store_that_cannot_be_used_is_a_tool_error_in_the_servers_words(store, make, needle):
    # Of the same kind as a locked store: the file is there but unusable, or cannot be.
    store.parent.mkdir(parents=True)
    make(store)
    target = store if store.exists() else store.parent / "blocker" / "ledger.db"

    async def go():
        async with connect(target) as s:
            a = err(await s.call_tool("recall", {"query": "anything"}))
            b = err(await s.call_tool("remember", {"claim": "x is y", "cluster": "code"}))
            return a, b, (await s.list_tools()).tools

    a, b, tools = run(go)
    # The read's words and the write's, what went wrong as the CLI says it: under a regular
    # file a read finds no store there, a write cannot create one (docs/cli.md). The way
    # out is the server's own: where its store is set, not the CLI's --db (which the
    # tool error used to repeat; tests/test_error_surfaces.py).
    from ledger.cli.hints import STORE_IS_CHOSEN
    from ledger.mcp.server import WHERE_THE_STORE_IS_SET

    cli = cli_error(target, "recall", "anything")
    cli_write = cli_error(target, "remember", "x is y", "--cluster", "code")
    for mcp_text, cli_text in ((a, cli), (b, cli_write)):
        said = cli_text[: cli_text.index(". ") + 1]  # the first sentence: what is wrong
        assert said in mcp_text and needle.lower() in said.lower(), (mcp_text, cli_text)
        assert STORE_IS_CHOSEN in cli_text and STORE_IS_CHOSEN not in mcp_text, (mcp_text, cli_text)
        assert mcp_text.endswith(WHERE_THE_STORE_IS_SET), mcp_text
    assert len(tools) == len(TOOLS)  # the server is still there


def test_a_client_that_closes_while_idle_ends_the_server_at_once(store):
    p = subprocess.Popen([LEDGER_BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, **server_env(store)})
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    p.stdin.write((json.dumps(init) + "\n").encode())
    p.stdin.flush()
    assert json.loads(p.stdout.readline())["id"] == 1
    p.stdin.close()
    try:
        rc = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    out, errout = p.stdout.read(), p.stderr.read().decode()
    p.stdout.close()
    p.stderr.close()
    assert rc == 0 and out == b"" and "Traceback" not in errout, errout


def _piped(store: Path, lines: list[str], hold_lock: bool = False) -> tuple[dict, str]:
    """Write every line to a fresh ``ledger mcp`` and close stdin at once (as ``printf ... |
    ledger mcp``); the replies by id (None for id-less errors, as a list) and stderr.
    ``hold_lock``: a writer holds the store for 1 s, so the calls are surely in flight at EOF."""
    holder = None
    if hold_lock:
        from ledger.service import Ledger

        with Ledger.open(store) as led:
            led.remember("Staging deploys need the VPN up", cluster="proc", agent="a")
        holder = WriteLock(store)
        threading.Timer(1.0, holder.release).start()
    try:
        p = subprocess.run([LEDGER_BIN, "mcp"], input="".join(x + "\n" for x in lines), capture_output=True,
                           text=True, timeout=120, env={**os.environ, **server_env(store)})
    finally:
        if holder is not None:
            time.sleep(1.2)
            holder.release()
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    replies: dict = {}
    for line in p.stdout.splitlines():
        msg = json.loads(line)
        replies.setdefault(msg.get("id"), []).append(msg)
    return replies, p.stderr


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "piped", "version": "1"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def call(rid: int, name: str, arguments: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})


def test_every_request_read_before_stdin_closes_is_answered(store):
    # The fresh-user case: initialize, initialized and a recall piped in, stdin closed at
    # once. The SDK cancels running handlers at EOF; ledger waits for them (docs/mcp.md).
    replies, _ = _piped(store, [INIT, INITIALIZED,
                                call(2, "remember", {"claim": "The VPN needs a hardware token", "cluster": "proc"}),
                                call(3, "recall", {"query": "staging VPN"}),
                                json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})], hold_lock=True)
    assert set(replies) == {1, 2, 3, 4}, replies
    assert not replies[2][0]["result"]["isError"], replies[2]
    assert json.loads(replies[3][0]["result"]["content"][0]["text"])["hits"]
    assert cli_json(store, "search", "hardware token")["total"] == 1


def test_lines_that_are_not_json_rpc_get_the_specs_error_and_the_server_goes_on(store):
    replies, _ = _piped(store, [INIT, INITIALIZED, "garbage{", "", '{"id": 7, "x": 1}', "[1, 2]",
                                call(2, "search", {"query": "anything"})])
    nulls = replies.pop(None)
    assert [m["error"]["code"] for m in nulls] == [-32700, -32600], nulls  # parse error; a batch is not served
    assert replies[7][0]["error"]["code"] == -32600  # valid JSON, not a message: invalid request, its id echoed
    assert set(replies) == {1, 2, 7} and "result" in replies[2][0]


def test_an_empty_search_lists_the_strongest_and_the_texts_say_so(store):
    """Fresh-user finding: the `search` tool and the `recall` error said an empty query
    lists the newest; it lists the strongest (sort "created" gives the newest). A pinned
    old memory is the strongest and not the newest."""
    from ledger.service import Ledger

    with Ledger.open(store) as led:
        old = led.remember("Staging deploys need the VPN up", cluster="proc", agent="a").memory
        led.remember("The cache lives in Redis", cluster="code", agent="a")
        new = led.remember("Invoices go out on Mondays", cluster="money", agent="a").memory
        led.bulk("pin", [old.id])

    async def go():
        async with connect(store) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            return (ok(await s.call_tool("search", {}))["hits"], ok(await s.call_tool("search", {"sort": "created"}))["hits"],
                    tools["search"].input_schema)

    strongest, newest, schema = run(go)
    assert strongest[0]["id"] == old.id and strongest == sorted(strongest, key=lambda h: -h["strength"])
    assert newest[0]["id"] == new.id
    said = schema["properties"]["query"]["description"]
    assert "strongest" in said and "newest" not in said.split("(")[0]
