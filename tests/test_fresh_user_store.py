"""Defects a fresh-user pass found, each through the real surface (CLI subprocess or
the web API on a real SQLite file): short ids work everywhere an id is taken, ..."""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient
from test_cli import fail, memory, ok, remember

from ledger.service import Ledger
from ledger.web.server import create_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient` is deprecated")
BASE = "http://127.0.0.1:7444"


def short_ids(cli, query: str) -> list[str]:
    """The short ids `ledger search` prints, in its order."""
    out = ok(*cli("search", query))
    return re.findall(r"^\s*([0-9a-z]{6})\s", out, re.M)


# ---------------------------------------------------------------- 1. short ids everywhere
def test_short_ids_from_search_work_for_forget_link_and_remember(cli):
    a = remember(cli, "Deploys go out on Tuesdays", "proc")
    b = remember(cli, "Release notes live in CHANGELOG.md", "proc")
    c = remember(cli, "The staging box is called kestrel", "home")
    shown = short_ids(cli, "")
    assert a[-6:] in shown and b[-6:] in shown, shown
    out = ok(*cli("link", a[-6:], b[-6:]))
    assert out == f"linked {a} {b}\n"
    with Ledger.open(cli.db) as led:
        assert (min(a, b), max(a, b)) in led.links([a])
    # a head of the id works too, and --json reports the full ids
    assert json.loads(ok(*cli("link", a[:-3], c, "--json"))) == {"linked": [a, c]}
    ok(*cli("forget", c[-6:]))
    assert memory(cli, c)["deletedAt"] is not None
    r = ok(*cli("remember", "Deploys go out on Wednesdays", "--cluster", "proc", "--supersedes", a[-6:], "--json"))
    assert json.loads(r)["conflictId"]


def test_unknown_and_ambiguous_short_ids_are_clear_and_change_nothing(cli):
    a = remember(cli, "Deploys go out on Tuesdays", "proc")
    msg = fail(*cli("forget", a[-6:], "zzzzzz"))
    assert "No memory zzzzzz" in msg and "Nothing was forgotten" in msg
    assert memory(cli, a)["deletedAt"] is None
    with Ledger.open(cli.db) as led:
        ids = [led.remember(f"Fact number {i} about ports", cluster="code", agent="t").memory.id for i in range(3)]
    head = ids[0][:4]  # "m_" + the first two timestamp digits: shared by all
    msg = fail(*cli("link", head, a))
    assert "matches several memories" in msg and ids[0] in msg and ids[1] in msg
    msg = fail(*cli("forget", head, "--json"))
    assert "matches several memories" in msg


def test_web_api_takes_short_ids(store_target, tmp_path):
    db = store_target
    with Ledger.open(db) as led:
        a = led.remember("Deploys go out on Tuesdays", cluster="proc", agent="t").memory.id
        b = led.remember("Prefers tabs in Makefiles", cluster="prefs", agent="t").memory.id
    with TestClient(create_app(str(db)), base_url=BASE, headers={"origin": BASE}) as client:
        r = client.get(f"/api/memories/{a[-6:]}")
        assert r.status_code == 200 and r.json()["memory"]["id"] == a
        r = client.post(f"/api/review/{a[-6:]}/keep", json={})
        assert r.status_code == 200 and r.json()["memory"]["reviewedAt"] is not None
        r = client.patch(f"/api/memories/{b[-6:]}", json={"cluster": "proc"})
        assert r.status_code == 200 and r.json()["memory"]["clusterId"] == "proc"
        r = client.post("/api/memories/bulk", json={"op": "pin", "ids": [b[-6:]]})
        assert r.status_code == 200 and r.json() == {"affected": 1}
        r = client.get("/api/memories/qqqqqq")
        assert r.status_code == 404 and "No memory qqqqqq" in r.json()["error"]


# ---------------------------------------------------------------- 2-3. ingest: any text file, clear empty --text
@pytest.mark.parametrize("name", ["t.py", "guide.rst", "NOTES", "deploy.sh"])
def test_ingest_reads_any_utf8_text_file_under_its_name(cli, tmp_path, name):
    path = tmp_path / name
    path.write_text("Deploys go out on Tuesdays after the smoke test.\n\nRoll back by re-tagging — café.\n")
    r = json.loads(ok(*cli("ingest", str(path), "--cluster", "proc", "--json")))
    assert r["chunks"] >= 1
    src = json.loads(ok(*cli("sources", "--json")))
    assert [s["filename"] for s in src] == [name] or src[0]["filename"].endswith(name)
    assert "Tuesdays" in ok(*cli("search", "tuesdays"))


@pytest.mark.parametrize("name,data,hint,why", [
    ("paper.pdf", b"%PDF-1.4\n1 0 obj\n", "pdftotext", "needs a parser ledger does not bundle"),  # even when it decodes
    ("spec.docx", b"PK\x03\x04\x14\x00\x06\x00", "pandoc", "needs a parser ledger does not bundle"),
    ("a.out", b"\x7fELF\x02\x01\x01\x00\x00\x00", "pandoc", "binary content (NUL byte"),  # an unlisted name
    ("BLOB", b"ab\x00cd" * 10, "pandoc", "binary content (NUL byte at offset 2)"),
])
def test_ingest_still_refuses_binary_and_parser_formats(cli, tmp_path, name, data, hint, why):
    path = tmp_path / name
    path.write_bytes(data)
    cli.create_store()  # `sources` below reports on it (on a missing store it is an error)
    msg = fail(*cli("ingest", str(path), "--cluster", "proc"))
    assert why in msg and hint in msg
    assert json.loads(ok(*cli("sources", "--json"))) == []


@pytest.mark.parametrize("value", ["", "   ", "\n\t"])
def test_ingest_empty_text_names_the_text_option(cli, value):
    msg = fail(*cli("ingest", "--text", value, "--cluster", "proc"))
    assert "--text value is" in msg and "stdin" not in msg.split(":")[0]
    assert "nothing arrived on stdin" not in msg


# ---------------------------------------------------------------- 4. a chunk's strength is its source's trust
@pytest.mark.parametrize("trust,shown", [(0.3, 30), (0.86, 86), (0.05, 15)])  # 0.05 is clamped up to 15
def test_show_explains_a_chunks_strength_by_its_source_trust(cli, trust, shown):
    r = json.loads(ok(*cli("ingest", "--text", "Roll back by re-tagging the release.", "--cluster", "proc",
                           "--trust", str(trust), "--json")))
    sid = r["sourceId"]
    with Ledger.open(cli.db) as led:
        cid = led.source_detail(sid)["chunks"][0].id
    out = ok(*cli("show", cid))
    assert f"strength {shown}  (source trust {trust:.2f}, {sid})" in out
    assert "used " not in out and "corroborated" not in out
    d = json.loads(ok(*cli("show", cid, "--json")))
    assert d["sourceTrust"] == trust and d["sourceId"] == sid and round(d["strength"] * 100) == shown
    mid = remember(cli, "Deploys go out on Tuesdays", "proc")
    assert "(used 0.00 · fresh" in ok(*cli("show", mid))
    assert "sourceTrust" not in json.loads(ok(*cli("show", mid, "--json")))


def test_web_memory_detail_gives_a_chunks_source_trust(store_target, tmp_path):
    db = store_target
    with Ledger.open(db) as led:
        src = led.ingest_chunks("runbook.md", ["Check CI first."], cluster="proc", agent="t", trust=0.4)
        cid = led.source_detail(src.source_id)["chunks"][0].id
    with TestClient(create_app(str(db)), base_url=BASE, headers={"origin": BASE}) as client:
        m = client.get(f"/api/memories/{cid}").json()["memory"]
    assert m["sourceTrust"] == 0.4 and m["strength"] == 0.4


# ---------------------------------------------------------------- 5. one review-queue count everywhere
def _queue_store(db, extra_kept: int) -> int:
    """Claims, one open conflict (two conflicted claims), a waiting candidate and
    ``extra_kept`` reviewed claims; returns the expected 'waiting' count."""
    with Ledger.open(db) as led:
        a = led.remember("CI runs on Python 3.11", cluster="code", agent="a").memory.id
        led.remember("CI runs on Python 3.12", cluster="code", agent="b")
        led.judge(led.candidates(1)[0].id, "conflict", agent="a", kind="value drift", detector=0.9)
        led.remember("The invoice renews every 12 months", cluster="money", agent="a")
        led.remember("The invoice renews every 24 months", cluster="money", agent="b")  # a candidate, unjudged
        for i in range(extra_kept):
            led.review(led.remember(f"Kept fact {i} about the zebra queue", cluster="proc", agent="a").memory.id, "keep")
        led.remember("Deploys go out on Tuesdays", cluster="proc", agent="a")
        assert led.candidates(5) and led.get(a).conflict_with
    return 3 + 1  # three unconflicted pending claims + one conflict


@pytest.mark.parametrize("extra_kept", [0, 2])
def test_stats_review_and_web_count_the_review_queue_alike(cli, extra_kept):
    waiting = _queue_store(cli.db, extra_kept)
    st = json.loads(ok(*cli("stats", "--json")))
    assert st["reviewQueue"] == waiting and st["pending"] == waiting + 1  # pending: every unreviewed claim
    assert f"{waiting:>6}  waiting in review   3 claims · 1 conflict" in ok(*cli("stats")).splitlines()
    q = json.loads(ok(*cli("review", "--json")))
    assert q["claimCount"] + q["conflictCount"] == q["waiting"] == waiting
    assert ok(*cli("review", "--plain")).startswith("Review queue  3 claims · 1 conflict\n")
    with TestClient(create_app(str(cli.db)), base_url=BASE, headers={"origin": BASE}) as client:
        assert client.get("/api/stats").json()["reviewQueue"] == waiting
        r = client.get("/api/review").json()
        assert r["claimCount"] + r["conflictCount"] == r["waiting"] == waiting
        assert r["candidateCount"] == q["candidateCount"] == st["candidates"] >= 1


# ---------------------------------------------------------------- 7. web API: bad paths and parameters are 400s
@pytest.fixture()
def web(store_target, tmp_path):
    db = store_target
    with Ledger.open(db) as led:
        led.remember("Deploys go out on Tuesdays", cluster="proc", agent="t")
    with TestClient(create_app(str(db)), base_url=BASE, headers={"origin": BASE}) as client:
        yield client


@pytest.mark.parametrize("path", ["/api/memories/%FF", "/api/memories/m_%C3%28", "/api/sources/%FE%FF",
                                  "/api/review/%FF/keep"])
def test_a_path_that_is_not_utf8_is_a_400(web, path):
    r = web.post(path, json={}) if path.endswith("/keep") else web.get(path)
    assert r.status_code == 400, r.text
    assert r.json()["kind"] == "invalid-input" and "not UTF-8" in r.json()["error"]


@pytest.mark.parametrize("path,name", [("/api/events?since=abc", "since"), ("/api/events?limit=5&afterr=3", "afterr"),
                                       ("/api/timeline?bucket=10", "bucket"), ("/api/review?limt=5", "limt"),
                                       ("/api/memories/zzzzzz?full=1", "full")])
def test_an_unknown_parameter_is_a_400_naming_it(web, path, name):
    r = web.get(path)
    assert r.status_code == 400, r.text
    assert r.json()["kind"] == "invalid-input" and repr(name) in r.json()["error"]


def test_known_parameters_still_work(web):
    assert web.get("/api/events?limit=5&after=0").status_code == 200
    assert web.get("/api/timeline?buckets=10").status_code == 200
    assert web.get("/api/memories/%E2%9C%93").status_code == 404  # valid UTF-8, just no such memory


# ---------------------------------------------------------------- 8. a filter key with no value
# It used to be dropped (agent: matched everything), then refused; pasted text
# ("Type: error in build") must not be, so it is searched as the word, with an
# empty-filter warning (tests/test_query_polish.py).
@pytest.mark.parametrize("query", ["agent:", "deploys cluster:", "kind:", "strength:", "after: tuesdays"])
def test_search_and_recall_search_a_filter_key_without_a_value_as_a_word(cli, query):
    remember(cli, "Deploys go out on Tuesdays", "proc")
    key = next(t for t in query.split() if t.endswith(":"))
    for verb in ("search", "recall"):
        rc, out, err = cli(verb, query)
        assert rc == 0 and err.startswith(f"⚠ {key} has nothing after the colon, so it was searched as the word"), err
    body = json.loads(ok(*cli("search", query, "--json")))
    assert [w["kind"] for w in body["warnings"]] == ["empty-filter"]


def test_web_search_searches_a_filter_key_without_a_value_as_a_word(web):
    r = web.get("/api/search", params={"q": "agent:"})
    assert r.status_code == 200 and [w["kind"] for w in r.json()["warnings"]] == ["empty-filter"]


def test_ids_of_other_things_and_too_short_ids_say_what_they_are(cli):
    """A conflict, candidate or source id handed to a memory command is named as what
    it is, and a 1-3 character id asks for 4, instead of "It may have been mistyped"."""
    a = remember(cli, "Deploys go out on Thursdays", "proc")
    for ref, what in (("cf_mx5amat3o0007j", "a conflict id"), ("cc_mx5amat3o0007j", "a conflict candidate id"),
                      ("s_mx5amat3o0007j", "a source id")):
        msg = fail(*cli("show", ref))
        assert what in msg and "not a memory id" in msg and "mistyped" not in msg, msg
        msg = fail(*cli("forget", ref, "--json"))
        assert what in msg, msg
    for ref in (a[-3:], a[-1:]):
        msg = fail(*cli("show", ref))
        assert "too short" in msg and "at least 4 characters" in msg, msg
    assert memory(cli, a)["deletedAt"] is None


def test_show_says_not_read_yet_until_the_first_read(cli):
    a = remember(cli, "The staging database is restored nightly", "proc")
    out = ok(*cli("show", a))
    assert "hits 0 · not read yet" in out and "last read" not in out, out
    cli("recall", "staging database restored")
    assert "hits 1 · last read just now" in ok(*cli("show", a))
