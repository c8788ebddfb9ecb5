"""Re-ingesting a file updates its source (``store/source_sync.py``), through the CLI:
unchanged chunks keep their reads, changed and removed ones are retired but still
reachable by ``asof:``, ``--as-new`` keeps the old behaviour."""

from __future__ import annotations

import json
import os
import time

from conftest import BOTH_ENGINES, iso

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)

DOC = """# Staging

Staging deploys need the VPN up before the pipeline starts.

# Rollbacks

Rollbacks use the previous release tag and never a branch.

# Train

The release train leaves every Tuesday at noon.
"""


def j(cli, *argv):
    rc, out, err = cli(*argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def ingest(cli, path, *extra):
    return j(cli, "ingest", str(path), "--cluster", "proc", *extra)


def test_the_same_file_twice_is_one_source_and_recall_has_no_doubles(cli, tmp_path):
    doc = tmp_path / "deploys.md"
    doc.write_text(DOC)
    first = ingest(cli, doc)
    again = ingest(cli, doc)
    assert again["updated"] is True and again["sourceId"] == first["sourceId"]
    assert (again["kept"], again["added"], again["retired"]) == (first["chunks"], 0, 0)
    assert len(j(cli, "sources")) == 1
    hits = j(cli, "recall", "rollbacks release tag")
    texts = [h["text"] for h in hits]
    assert len(texts) == len(set(texts))
    rc, out, err = cli("ingest", str(doc), "--cluster", "proc")
    assert rc == 0 and out.startswith(f"updated {first['sourceId']}") and "0 new, 0 retired" in out


def test_changed_and_removed_passages_are_retired_and_reads_stay(cli, tmp_path):
    doc = tmp_path / "deploys.md"
    doc.write_text(DOC)
    ingest(cli, doc)
    read = j(cli, "recall", "staging VPN pipeline", "--agent", "claude")
    staging = next(h for h in read if "VPN" in h["text"])
    assert j(cli, "show", staging["id"])["hits"] == 1
    time.sleep(0.01)
    before_edit = int(time.time() * 1000)
    time.sleep(0.01)
    doc.write_text(DOC.replace("every Tuesday at noon", "every Thursday at ten")
                      .replace("# Rollbacks\n\nRollbacks use the previous release tag and never a branch.\n\n", "")
                   + "\n# Hotfixes\n\nHotfixes skip the train and go out the same day.\n")
    r = ingest(cli, doc)
    assert r["updated"] and r["retired"] == 2 and r["added"] == 2
    shown = j(cli, "show", staging["id"])
    assert shown["hits"] == 1 and "claude" in shown["readers"] and shown["deletedAt"] is None
    now_texts = [m["text"] for m in j(cli, "search", "release train tuesday thursday rollbacks hotfixes")["hits"]]
    assert any("Thursday" in t for t in now_texts) and any("Hotfixes" in t for t in now_texts)
    assert not any("Tuesday" in t or "Rollbacks" in t for t in now_texts)
    then = j(cli, "search", "release train rollbacks", f"asof:{iso(before_edit)}")["hits"]
    then_texts = [m["text"] for m in then]
    assert any("Tuesday" in t for t in then_texts) and any("Rollbacks" in t for t in then_texts)
    assert not any("Thursday" in t for t in then_texts)
    src = j(cli, "sources")
    assert len(src) == 1 and src[0]["chunkCount"] == r["chunks"]


def test_as_new_keeps_todays_behaviour(cli, tmp_path):
    doc = tmp_path / "deploys.md"
    doc.write_text(DOC)
    a = ingest(cli, doc)
    b = ingest(cli, doc, "--as-new")
    assert b["updated"] is False and b["sourceId"] != a["sourceId"]
    assert len(j(cli, "sources")) == 2


def test_the_same_file_by_another_name_is_the_same_source(cli, tmp_path):
    doc = tmp_path / "docs" / "deploys.md"
    doc.parent.mkdir()
    doc.write_text(DOC)
    link = tmp_path / "alias"
    os.symlink(doc.parent, link)
    a = ingest(cli, doc)
    b = ingest(cli, link / "deploys.md")
    c = j(cli, "ingest", str(tmp_path / "docs" / ".." / "docs" / "deploys.md"), "--cluster", "proc")
    assert b["updated"] and c["updated"] and a["sourceId"] == b["sourceId"] == c["sourceId"]


def test_piped_text_and_inline_text_are_never_matched(cli, tmp_path):
    rc, out, err = cli("ingest", "-", "--cluster", "proc", "--json", input=DOC)
    rc2, out2, err2 = cli("ingest", "-", "--cluster", "proc", "--json", input=DOC)
    assert rc == rc2 == 0
    assert json.loads(out)["sourceId"] != json.loads(out2)["sourceId"]
    t1 = j(cli, "ingest", "notes.md", "--text", "Inline one.", "--cluster", "proc")
    t2 = j(cli, "ingest", "notes.md", "--text", "Inline one.", "--cluster", "proc")
    assert t1["sourceId"] != t2["sourceId"]


def test_trust_is_kept_unless_given(cli, tmp_path):
    doc = tmp_path / "deploys.md"
    doc.write_text(DOC)
    sid = ingest(cli, doc, "--trust", "0.9")["sourceId"]
    ingest(cli, doc)
    assert j(cli, "sources")[0]["trust"] == 0.9
    ingest(cli, doc, "--trust", "0.4")
    assert j(cli, "sources")[0]["trust"] == 0.4 and j(cli, "sources")[0]["id"] == sid
