"""Re-ingesting a file updates its source (``store/source_sync.py``), through the CLI:
unchanged chunks keep their reads, changed and removed ones are retired but still
reachable by ``asof:``, ``--as-new`` keeps the old behaviour."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from conftest import BOTH_ENGINES, LEDGER_BIN, iso

from ledger.errors import StoreUnavailable
from ledger.ingest import read_source_file
from ledger.service import Ledger
from ledger.store import sources as S

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


def test_piped_and_inline_text_are_matched_by_their_identity_not_by_a_file(cli, tmp_path):
    """Text from stdin or --text has no file to match: it is known by its name (--name) or else by the sha256 of the text (docs/store.md). The same text
    again is the same source; other text is another source."""
    rc, out, err = cli("ingest", "-", "--cluster", "proc", "--json", input=DOC)
    rc2, out2, err2 = cli("ingest", "-", "--cluster", "proc", "--json", input=DOC)
    assert rc == rc2 == 0
    assert json.loads(out)["sourceId"] == json.loads(out2)["sourceId"]
    rc3, out3, _ = cli("ingest", "-", "--cluster", "proc", "--json", input=DOC + "\nOne more line.\n")
    assert rc3 == 0 and json.loads(out3)["sourceId"] != json.loads(out)["sourceId"]
    t1 = j(cli, "ingest", "--name", "notes.md", "--text", "Inline one.", "--cluster", "proc")
    t2 = j(cli, "ingest", "--name", "notes.md", "--text", "Inline two.", "--cluster", "proc")
    assert t1["sourceId"] == t2["sourceId"]  # named notes.md: an update of the same source


def test_trust_is_kept_unless_given(cli, tmp_path):
    doc = tmp_path / "deploys.md"
    doc.write_text(DOC)
    sid = ingest(cli, doc, "--trust", "0.9")["sourceId"]
    ingest(cli, doc)
    assert j(cli, "sources")[0]["trust"] == 0.9
    ingest(cli, doc, "--trust", "0.4")
    assert j(cli, "sources")[0]["trust"] == 0.4 and j(cli, "sources")[0]["id"] == sid


# ------------------------------------------------------------------ batched re-ingest (issue 21)
def _manual(n: int, word: str) -> str:
    """``n`` sections, one chunk each, every passage naming ``word``."""
    return "\n\n".join(f"# Station {i}\n\nThe {word} pump curve at station {i} peaks at {i % 97} litres per second."
                       for i in range(n)) + "\n"


def _hidden(target) -> tuple[int, int]:
    """(hidden chunks, unfinished ingests) as stored, read without cleaning up."""
    with Ledger.open(target, readonly=True) as led:
        c = led.store._conn
        return (c.execute("SELECT count(*) FROM memories WHERE deleted_at = 0").fetchone()[0],
                c.execute("SELECT count(*) FROM ingests").fetchone()[0])


def _view(target) -> tuple[int, int, int]:
    """(live chunks of the one source, chunks a search for the old word finds, for the
    new one) as a read-only reader sees them."""
    with Ledger.open(target, readonly=True) as led:
        [src] = led.sources()
        return (src.chunk_count, led.search("original", limit=1).total, led.search("amended", limit=1).total)


def test_a_killed_reingest_keeps_the_old_version_and_a_rerun_gives_the_new(cli, store_target, tmp_path):
    """kill -9 in the middle of a re-ingest's batches: readers keep the old version
    whole, the next writable open deletes the hidden chunks, a rerun applies the new."""
    doc = tmp_path / "manual.md"
    n = 4000
    doc.write_text(_manual(n, "original"))
    first = ingest(cli, doc)
    doc.write_text(_manual(n, "amended"))
    p = subprocess.Popen([LEDGER_BIN, "ingest", str(doc), "--cluster", "proc", "--db", str(store_target)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None and _hidden(store_target)[0] < 200:
        time.sleep(0.01)
    assert p.poll() is None, "the re-ingest finished before it could be killed: raise n"
    p.send_signal(signal.SIGKILL)
    p.communicate()
    hidden, running = _hidden(store_target)
    assert hidden >= 200 and running == 1  # batches were committed ...
    assert _view(store_target) == (n, n, 0)  # ... yet readers see the old version only
    assert j(cli, "sources")[0]["chunkCount"] == n  # a writable open cleans up
    assert _hidden(store_target) == (0, 0)
    assert _view(store_target) == (n, n, 0)
    again = ingest(cli, doc)
    assert again["updated"] and again["sourceId"] == first["sourceId"]
    assert (again["kept"], again["added"], again["retired"]) == (0, n, n)
    assert _view(store_target) == (n, 0, n) and _hidden(store_target) == (0, 0)
    assert len(j(cli, "search", "amended pump curve")["hits"]) > 0


def test_a_reingest_that_fails_midway_leaves_the_old_version(ledger, tmp_path, monkeypatch):
    """A Ctrl-C in the middle of the batches: the hidden chunks are deleted at once and
    the old version, its positions and its index stay as they were."""
    monkeypatch.setattr(S, "BATCH_MS", 1)  # many batches
    monkeypatch.setattr(S, "YIELD_MS", 0)
    doc = tmp_path / "manual.md"
    doc.write_text(_manual(300, "original"))
    path = str(doc.resolve())
    first = ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path)
    before = [(m.id, m.text) for m in ledger.search("original pump", limit=400).hits]
    doc.write_text("# Preface\n\nA new first section moves every other one.\n\n" + _manual(300, "amended"))
    real = ledger.store._index
    calls = {"n": 0}

    def failing(seq, text, ctx=""):
        calls["n"] += 1
        if calls["n"] == 150:
            raise KeyboardInterrupt
        return real(seq, text, ctx)

    monkeypatch.setattr(ledger.store, "_index", failing)
    with pytest.raises(KeyboardInterrupt):
        ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path)
    monkeypatch.setattr(ledger.store, "_index", real)
    assert [(m.id, m.text) for m in ledger.search("original pump", limit=400).hits] == before
    assert not ledger.search("amended").hits
    c = ledger.store._conn
    assert c.execute("SELECT count(*) FROM memories WHERE deleted_at = 0").fetchone()[0] == 0
    assert c.execute("SELECT count(*) FROM ingests").fetchone()[0] == 0
    assert [r[0] for r in c.execute("SELECT chunk_index FROM memories WHERE source_id = ? ORDER BY chunk_index",
                                    (first.source_id,))] == list(range(1, 301))
    again = ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path)
    assert (again.kept, again.added, again.retired, again.chunks) == (0, 301, 300, 301)


def test_a_second_reingest_of_a_file_being_reingested_is_refused(ledger, tmp_path):
    """Two re-ingests of one source at once would flip each other's hidden chunks: the
    second is refused with a clear error while the first's process runs."""
    doc = tmp_path / "manual.md"
    doc.write_text(_manual(3, "original"))
    path = str(doc.resolve())
    src = ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path).source_id
    ledger.store._conn.execute("INSERT INTO ingests (source_id, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)",
                               (src, S._host(), os.getpid(), S._wall_ms(), S._wall_ms()))
    if not getattr(ledger.store._conn, "is_postgres", False):
        ledger.store._conn.commit()
    doc.write_text(_manual(3, "amended"))
    with pytest.raises(StoreUnavailable, match="being ingested by another process"):
        ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path)
    assert _view_of(ledger) == (3, 3, 0)


def _view_of(led) -> tuple[int, int, int]:
    [src] = led.sources()
    return src.chunk_count, len(led.search("original").hits), len(led.search("amended").hits)


def test_a_batched_reingest_settles_the_conflicts_of_what_it_retires(ledger, tmp_path):
    """The switch retires with set-based statements (``soft_delete_many``): an open
    conflict and an unjudged candidate touching a retired chunk are closed as
    ``retired``, as one ``soft_delete`` per chunk did, and each retired chunk gets its
    ``memory.drop`` event; those between kept chunks stay open."""
    doc = tmp_path / "manual.md"
    doc.write_text(_manual(4, "original"))
    path = str(doc.resolve())
    src = ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path).source_id
    ids = ledger.store.source_memory_ids(src, "chunk")
    c = ledger.store._conn
    with ledger.store.atomic():
        for k, (a, b) in enumerate([(ids[0], ids[1]), (ids[2], ids[3])]):
            c.execute("INSERT INTO conflicts (id, kind, cluster_id, a, b, detector, status, created_at) "
                      "VALUES (?, 'contradiction', 'proc', ?, ?, 0.9, 'open', 1)", (f"k{k}", a, b))
            c.execute("INSERT INTO conflict_candidates (id, a, b, score, created_at) VALUES (?, ?, ?, 0.8, 1)",
                      (f"cc{k}", b, a))
    doc.write_text(_manual(4, "original").replace("station 1 peaks", "station 1 now peaks"))
    r = ledger.ingest(read_source_file(doc), cluster="proc", agent="a", path=path)
    assert (r.kept, r.added, r.retired) == (3, 1, 1)
    assert dict(c.execute("SELECT id, status || '/' || coalesce(resolution, '') FROM conflicts").fetchall()) == {
        "k0": "resolved/retired", "k1": "open/"}
    assert dict(c.execute("SELECT id, coalesce(verdict, '-') FROM conflict_candidates").fetchall()) == {
        "cc0": "retired", "cc1": "-"}
    drops = [e.memory_id for e in ledger.store.events(50, op_prefix="memory.drop")]
    assert drops == [ids[1]]
