"""What a write takes, found by a fresh-user pass: a repeated one-value option of
``remember`` (``--supersedes m_A --supersedes m_B`` used m_B only) is refused, and so is
a ``supersedes`` listing several ids; ``note`` and ``topic`` (and a verdict's note, a
cluster colour, an agent id) have size limits the library enforces, so the CLI, the MCP
server and the web API refuse alike and store nothing (docs/cli.md "How much a write
takes"). Real CLI subprocesses, a real ``ledger mcp`` child, the web app on the store."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient
from test_cli import fail, ok, remember
from test_mcp import connect, err, run
from test_mcp import ok as mcp_ok

from ledger.service import MAX_NOTE_CHARS, MAX_TOPIC_CHARS, Ledger
from ledger.web.server import create_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient` is deprecated")
BASE = "http://127.0.0.1:7444"


def texts(db) -> list[str]:
    with Ledger.open(db) as led:
        return sorted(m.text for m in led.search("", limit=100).hits)


def open_conflicts(db) -> list:
    with Ledger.open(db) as led:
        return led.conflicts()


# ---------------------------------------------------------------- 2. --supersedes twice
# The fast path reads these; "--note -" (a value starting with "-") sends the same call
# through click instead (cli/fast.py leaves such values to click).
@pytest.mark.parametrize("route", [(), ("--note", "-from-a-dash")], ids=["fast", "click"])
def test_supersedes_twice_is_refused_and_nothing_is_remembered(cli, route):
    a = remember(cli, "Alice leads the platform team", "people")
    b = remember(cli, "Bob leads the billing team", "people")
    msg = fail(*cli("remember", "Carol leads the platform team", "--cluster", "people",
                    "--supersedes", a, f"--supersedes={b}", *route))
    assert "--supersedes was given 2 times" in msg and a in msg and b in msg and "Nothing was remembered" in msg
    assert texts(cli.db) == ["Alice leads the platform team", "Bob leads the billing team"]
    assert open_conflicts(cli.db) == []
    # one --supersedes still opens its conflict
    out = ok(*cli("remember", "Carol leads the platform team", "--cluster", "people", "--supersedes", a, "--json"))
    assert json.loads(out)["conflictId"].startswith("cf_")


@pytest.mark.parametrize("option, values", [("--cluster", ("people", "proc")), ("--note", ("a", "b")),
                                            ("--topic", ("x:1", "x:2")), ("--text", ("One fact", "Another")),
                                            ("--agent", ("codex", "claude"))])
def test_any_one_value_option_of_remember_given_twice_is_refused(cli, option, values):
    cli.create_store()
    args = ["--cluster", "people"] if option != "--cluster" else []
    words = [] if option == "--text" else ["Dana owns the release checklist"]
    msg = fail(*cli("remember", *words, *args, option, values[0], option, values[1]))
    assert f"{option} was given 2 times" in msg and f"Give {option} once" in msg
    assert texts(cli.db) == []


def test_file_still_repeats_and_an_option_after_dashdash_is_text(cli, tmp_path):
    cli.create_store()
    (tmp_path / "a.py").write_text("x")
    (tmp_path / "b.py").write_text("y")
    out = ok(*cli("remember", "Both modules import the settings", "--cluster", "code",
                  "--file", str(tmp_path / "a.py"), "--file", str(tmp_path / "b.py"), "--json"))
    assert len(json.loads(out)["files"]) == 2
    # after --, option names are the claim's words, never counted as repeats
    ok(*cli("remember", "--cluster", "code", "--db", str(cli.db), "--", "--note", "x", "--note", "y", db=False))
    assert "--note x --note y" in texts(cli.db)


@pytest.mark.parametrize("ids", ["{a}, {b}", "{a} {b}", "{a},{b}"])
def test_supersedes_listing_several_ids_is_refused(cli, ids):
    a = remember(cli, "Alice leads the platform team", "people")
    b = remember(cli, "Bob leads the billing team", "people")
    msg = fail(*cli("remember", "Carol leads the platform team", "--cluster", "people",
                    "--supersedes", ids.format(a=a, b=b)))
    assert msg.startswith("--supersedes takes one memory id, not several") and "Nothing was remembered" in msg
    assert len(texts(cli.db)) == 2


# ---------------------------------------------------------------- 3. sizes
def test_note_and_topic_limits_through_the_cli(cli):
    cli.create_store()
    msg = fail(*cli("remember", "Eve leads QA", "--cluster", "people", "--note", "n" * 100_000))
    assert msg.startswith("The note is 100,000 characters long; at most 2,000 are allowed") and "Nothing was written" in msg
    msg = fail(*cli("remember", "Eve leads QA", "--cluster", "people", "--topic", "t" * (MAX_TOPIC_CHARS + 1)))
    assert f"at most {MAX_TOPIC_CHARS} are allowed" in msg
    assert texts(cli.db) == []
    # at the limit both are taken
    out = ok(*cli("remember", "Eve leads QA", "--cluster", "people", "--note", "n" * MAX_NOTE_CHARS,
                  "--topic", "t" * MAX_TOPIC_CHARS, "--json"))
    assert json.loads(out)["topic"] == "t" * MAX_TOPIC_CHARS
    # a repeat carries its note into the log: the same limit holds there
    msg = fail(*cli("remember", "Eve leads QA", "--cluster", "people", "--note", "n" * (MAX_NOTE_CHARS + 1)))
    assert "at most 2,000" in msg


def test_a_verdicts_note_has_the_same_limit(cli):
    remember(cli, "Office opens at 08:00", "home")
    remember(cli, "Office opens at 09:00", "home")
    (cand,) = json.loads(ok(*cli("conflicts", "--json")))
    msg = fail(*cli("judge", cand["id"], "--verdict", "conflict", "--note", "w" * 5000))
    assert "The note is 5,000 characters long; at most 2,000" in msg
    assert open_conflicts(cli.db) == []
    assert json.loads(ok(*cli("conflicts", "--json")))[0]["id"] == cand["id"]  # still waiting


def test_an_agent_id_is_limited_on_every_path(cli):
    cli.create_store()
    msg = fail(*cli("remember", "Eve leads QA", "--cluster", "people", "--agent", "a" * 1000))
    assert "The agent id is 1,000 characters long" in msg
    assert texts(cli.db) == []


def test_mcp_refuses_a_big_note_a_big_topic_and_several_superseded_ids(store_target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def go():
        async with connect(store_target) as s:
            a = mcp_ok(await s.call_tool("remember", {"claim": "CI runs on Python 3.11", "cluster": "code"}))
            big_note = err(await s.call_tool("remember", {"claim": "CI runs on Python 3.12", "cluster": "code",
                                                          "note": "n" * 2_000_000}))
            big_topic = err(await s.call_tool("remember", {"claim": "CI runs on Python 3.12", "cluster": "code",
                                                           "topic": "t" * 100_000}))
            listed = err(await s.call_tool("remember", {"claim": "CI runs on Python 3.12", "cluster": "code",
                                                        "supersedes": [a["id"], a["id"]]}))
            several = err(await s.call_tool("remember", {"claim": "CI runs on Python 3.12", "cluster": "code",
                                                         "supersedes": f"{a['id']}, {a['id']}"}))
            return big_note, big_topic, listed, several

    big_note, big_topic, listed, several = run(go)
    assert "The note is 2,000,000 characters long; at most 2,000 are allowed" in big_note
    assert "The topic is 100,000 characters long; at most 500 are allowed" in big_topic
    assert "supersedes" in listed
    assert "supersedes takes one memory id, not several" in several and " --" not in several
    assert texts(store_target) == ["CI runs on Python 3.11"]


def test_web_refuses_a_long_colour_and_a_long_by(store_target):
    with Ledger.open(store_target) as led:
        mid = led.remember("Deploys go out on Tuesdays", cluster="proc", agent="t").memory.id
    with TestClient(create_app(str(store_target)), base_url=BASE, headers={"origin": BASE}) as client:
        r = client.post("/api/clusters", json={"label": "Zed", "color": "c" * 100})
        assert r.status_code == 400 and "The cluster colour is 100 characters long; at most 64" in r.json()["error"]
        r = client.patch(f"/api/memories/{mid}", json={"text": "Deploys go out on Wednesdays", "by": "b" * 500})
        assert r.status_code == 400 and "The agent id is 500 characters long" in r.json()["error"]
    with Ledger.open(store_target) as led:
        assert "zed" not in {c.id for c in led.clusters()}
        assert led.get(mid).text == "Deploys go out on Tuesdays"
