"""Fresh-user findings about ingest, sources, checkpoints and the printed review queue:
an option that would be ignored is refused, an empty filtered listing says the filter
matched nothing, and a cut list says how many it left out and how to see them. Real
stores, the real CLI in subprocesses."""

from __future__ import annotations

import json

from ledger.service import Ledger


def _ok(res):
    rc, out, err = res
    assert rc == 0, err
    return out


def _fail(res) -> str:
    rc, out, err = res
    assert rc != 0, out
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------ ingest and sources
def test_reingest_into_another_or_unknown_cluster_is_refused(cli, tmp_path):
    doc = tmp_path / "c1.md"
    doc.write_text("# Deploys\n\nStaging deploys need the VPN.\n")
    sid = json.loads(_ok(cli("ingest", str(doc), "--cluster", "proc", "--json")))["sourceId"]
    doc.write_text("# Deploys\n\nStaging deploys need the VPN and a ticket.\n")
    err = _fail(cli("ingest", str(doc), "--cluster", "nonexist"))
    assert "nonexist" in err
    _ok(cli("remember", "A fact", "--cluster", "code"))
    err = _fail(cli("ingest", str(doc), "--cluster", "code"))
    assert "proc" in err and "--as-new" in err and "Nothing was ingested" in err, err
    srcs = json.loads(_ok(cli("sources", "--json")))
    assert [(s["id"], s["clusterId"]) for s in srcs] == [(sid, "proc")]
    hits = json.loads(_ok(cli("search", "ticket", "--json")))["hits"]
    assert hits == []  # the refused update changed nothing
    # the same cluster updates; --as-new into the other cluster adds a copy there
    assert json.loads(_ok(cli("ingest", str(doc), "--cluster", "proc", "--json")))["updated"]
    copy = json.loads(_ok(cli("ingest", str(doc), "--cluster", "code", "--as-new", "--json")))
    assert copy["sourceId"] != sid


def test_a_file_and_text_together_are_refused(cli, tmp_path):
    doc = tmp_path / "c1.md"
    doc.write_text("The real content of c1.\n")
    for argv in ((str(doc), "--text", "x"), ("-", "--text", "x"), ("notes.md", "--text", "x")):
        err = _fail(cli("ingest", *argv, "--cluster", "proc"))
        assert "not both" in err and "--name" in err, err
    rc, out, err = cli("sources", "--json")
    assert rc != 0 or json.loads(out) == []  # nothing stored (the store may not exist)
    named = json.loads(_ok(cli("ingest", "--text", "x is inline", "--name", "c1.md", "--cluster", "proc", "--json")))
    assert named["filename"] == "c1.md"


def test_trust_of_a_dropped_source_is_refused_like_its_drop(cli, tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("Rollbacks use the previous tag.\n")
    sid = json.loads(_ok(cli("ingest", str(doc), "--cluster", "proc", "--json")))["sourceId"]
    _ok(cli("sources", "drop", sid))
    assert "already dropped" in _fail(cli("sources", "drop", sid))
    err = _fail(cli("sources", "trust", sid, "0.5"))
    assert "dropped" in err and "Nothing was changed" in err, err
    assert "dropped" in _fail(cli("sources", "trust", sid, "0.5", "--json"))


# ------------------------------------------------------------------ checkpoints
def test_an_empty_filtered_checkpoint_list_says_the_filter_matched_nothing(cli, tmp_path, store_target):
    with Ledger.open(store_target) as led:
        for i in range(20):
            led.store.watch.add_checkpoint(session=f"claude-code:s{i}", project=str(tmp_path / "proj"),
                                           event="Stop", branch="main", content=f"# {i}", now=led.clock() + i)
    for argv, named in ((("--session", "nope"), "--session nope"), (("--project", "/x"), "--project /x")):
        out = _ok(cli("checkpoints", *argv))
        assert "no checkpoints match" in out and named in out and "20 checkpoints in the store" in out, out
        assert "yet" not in out
        assert json.loads(_ok(cli("checkpoints", *argv, "--json"))) == []
    assert len(_ok(cli("checkpoints", "--session", "s3")).splitlines()) == 1


def test_a_store_without_checkpoints_still_says_none_yet(cli):
    _ok(cli("remember", "A fact", "--cluster", "code"))
    assert "no checkpoints yet" in _ok(cli("checkpoints", "--session", "nope"))


# ------------------------------------------------------------------ review --plain
def test_review_plain_says_how_many_are_not_shown_and_limit_shows_more(cli, store_target):
    with Ledger.open(store_target) as led:
        for i in range(27):
            led.remember(f"Service number {i} listens on port {8000 + i}", cluster="code", agent="claude")
        total = led.review_counts()["claims"]
    out = _ok(cli("review", "--plain"))
    claim_lines = [x for x in out.splitlines() if "Service number" in x and not x.startswith("  ")]  # not a pair
    assert len(claim_lines) == 20
    assert f"… {total - 20} more claims not shown" in out and "--limit" in out, out
    out = _ok(cli("review", "--plain", "--limit", "50"))
    assert len([x for x in out.splitlines() if "Service number" in x and not x.startswith("  ")]) == total
    assert "more claims not shown" not in out
    out = _ok(cli("review", "--plain", "--limit", "5"))
    assert len([x for x in out.splitlines() if "Service number" in x and not x.startswith("  ")]) == 5 and f"… {total - 5} more claims" in out
    q = json.loads(_ok(cli("review", "--json", "--limit", "3")))
    assert len(q["claims"]) == 3 and q["claimCount"] == total
    assert "--limit" in _fail(cli("review", "--plain", "--limit", "0"))
