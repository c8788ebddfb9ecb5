"""``ledger export`` / ``ledger import``: moving memories between stores.

Export lines are memory objects (``Memory.to_dict()``) plus what a restore needs that a
memory row does not hold: ``links`` (ids of linked memories) and, for chunks and claims
from a document, ``source`` (the source's id, filename, ext, cluster, ingesting agent,
bytes, trust, ingest time, resolved path). :func:`export_extras` builds those for a
batch of ids.

Every line is checked first (:func:`validate`; history lines ``transfer_history.
validate_history``) by the rules the write paths apply: JSON types, ranges (no negative
counts, times from 0 to a day from now), lengths (``vocab.MAX_TEXT_CHARS`` ...) and
text a store can hold, so a hand-edited file cannot store what ``remember`` would refuse.

Import (:func:`import_batch`) writes records into this store without duplicates:

* a memory whose **id** is already here is merged, not copied: readers are unioned,
  hits and last read take the larger value, pins and reviews are kept if either side has
  them (merging two stores that both saw a memory);
* a live **claim with the same text in the same cluster** under another id (two
  stores learned the same fact) is merged the same way;
* anything else is inserted with its own id, times, hits, readers, flags, topic and
  file keys, and indexed for search; a dropped memory stays dropped (``asof:`` finds it);
* clusters, agents and sources that are missing are created with their original ids;
* links are added once both ends exist;
* the store's history (conflicts, the log, sessions, observations, checkpoints) comes
  along in a whole-store export: ``store/transfer_history.py``.

Times are epoch ms, as exported. Nothing is inferred from ``strength``: it is computed
on read from what was restored.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence

from ..errors import InvalidInput
from ..text import storable_problem
from ..vocab import (
    DAY_MS,
    DEFAULT_SOURCE_TRUST,
    MAX_AGENT_ID,
    MAX_CLUSTER_LABEL,
    MAX_COLOR_CHARS,
    MAX_EXT_CHARS,
    MAX_ID_CHARS,
    MAX_MACHINE_CHARS,
    MAX_NOTE_CHARS,
    MAX_PATH_CHARS,
    MAX_TEXT_CHARS,
    MAX_TOPIC_CHARS,
    PALETTE,
    SHA256_HEX_CHARS,
)
from . import ops, textindex
from .connection import atomic
from .source_sync import conn_of

_SOURCE_FIELDS = ("id", "filename", "ext", "cluster_id", "ingested_by", "bytes", "trust", "ingested_at", "dropped_at", "path",
                  "updated_at")


def export_extras(store, ids: Sequence[str]) -> dict[str, dict]:
    """``{memory id: {"links": [ids], "source": {...} | None}}`` for ``ids``."""
    conn = conn_of(store)
    out: dict[str, dict] = {i: {"links": [], "source": None} for i in ids}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    for a, b in conn.execute(f"SELECT a, b FROM links WHERE a IN ({marks}) OR b IN ({marks})", (*ids, *ids)):
        if a in out:
            out[a]["links"].append(b)
        if b in out:
            out[b]["links"].append(a)
    cols = ", ".join("s." + f for f in _SOURCE_FIELDS)
    for row in conn.execute(
        f"SELECT m.id, {cols} FROM memories m JOIN sources s ON s.id = m.source_id WHERE m.id IN ({marks})", ids):
        src = dict(zip(_SOURCE_FIELDS, tuple(row)[1:]))
        out[row[0]]["source"] = {
            "id": src["id"], "filename": src["filename"], "ext": src["ext"], "clusterId": src["cluster_id"],
            "ingestedBy": src["ingested_by"], "bytes": src["bytes"], "trust": src["trust"],
            "ingestedAt": src["ingested_at"], "droppedAt": src["dropped_at"], "path": src["path"],
            "updatedAt": src["updated_at"],
        }
    return out


class _Check:
    """Checks one export line field by field with the rules the write paths apply
    (types, ranges, lengths, text a store can hold); the first failure raises
    :class:`InvalidInput` naming the line and the field. ``what`` prefixes field names
    ("source ", "conflict "). Times are epoch ms between 0 and a day from now."""

    def __init__(self, rec: dict, line: int, what: str = ""):
        import time

        self.rec, self.line, self.what = rec, line, what
        self.latest = int(time.time() * 1000) + DAY_MS  # a day of clock skew between machines

    def fail(self, key: str, why: str):
        raise InvalidInput(f"line {self.line}: {self.what}{key!r} {why}. Fix or remove that line. Nothing was imported.",
                           field=key)

    def text(self, key: str, *, required: bool = True, limit: int = MAX_TEXT_CHARS, empty_ok: bool = False,
             word: bool = False) -> str | None:
        v = self.rec.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, str):
            self.fail(key, "is missing or not a string" if required else "is not a string or null")
        if not empty_ok and not v.strip():
            self.fail(key, "is empty")
        if len(v) > limit:
            self.fail(key, f"is {len(v):,} characters long; at most {limit:,} are allowed")
        problem = storable_problem(v)
        if problem:
            self.fail(key, problem)
        if word and any(c.isspace() or unicodedata.category(c) == "Cc" for c in v):
            self.fail(key, "holds a space or a control character (an id is one word)")
        return v

    def int_(self, key: str, *, required: bool = True, low: int = 0, high: int = 2 ** 53, time: bool = False) -> int | None:
        v = self.rec.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, int) or isinstance(v, bool):
            self.fail(key, "is missing or not an integer" if required else "is not an integer or null")
        high = self.latest if time else high
        if not low <= v <= high:
            self.fail(key, f"is {v}; a time is epoch milliseconds from 0 to now" if time else
                      f"is {v}; it must be from {low:,} to {high:,}")
        return v

    def number(self, key: str, *, low: float, high: float, required: bool = True) -> float | None:
        v = self.rec.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not low <= v <= high:
            self.fail(key, f"must be a number from {low} to {high}")
        return v

    def flag(self, key: str) -> None:
        v = self.rec.get(key)
        if v is not None and v not in (True, False, 0, 1):
            self.fail(key, "must be true or false")

    def agent(self, key: str, v) -> None:
        """An agent id as stored: one word of printable characters, at most
        ``MAX_AGENT_ID``. A comma or a leading quote, which new writes refuse
        (``text.agent_id``), passes: older stores hold such ids and their exports import."""
        if not isinstance(v, str) or not v.strip():
            self.fail(key, "holds an agent id that is empty or not a string")
        if len(v) > MAX_AGENT_ID:
            self.fail(key, f"holds an agent id of {len(v):,} characters; at most {MAX_AGENT_ID} are allowed")
        if storable_problem(v) or any(c.isspace() or unicodedata.category(c) == "Cc" for c in v):
            self.fail(key, f"holds the agent id {v[:80]!r}, which is not one word of printable characters")


def validate(rec, line: int) -> dict:
    """Check one parsed export line (a memory) by the write paths' rules; returns it,
    or raises :class:`InvalidInput` naming the line and the field. Derived fields
    (``strength``, ``factors``, ``conflictWith``) are not read."""

    if not isinstance(rec, dict):
        raise InvalidInput(f"line {line}: not a JSON object; is this a `ledger export` file? Nothing was imported.")
    c = _Check(rec, line)
    c.text("id", limit=MAX_ID_CHARS, word=True)
    c.text("text", limit=MAX_TEXT_CHARS)
    for key, allowed in (("kind", ("claim", "chunk")), ("origin", ("chat", "doc"))):
        if rec.get(key) not in allowed:
            c.fail(key, f"is {rec.get(key)!r}; it must be {' or '.join(allowed)}")
    c.text("clusterId", limit=MAX_CLUSTER_LABEL, word=True)
    c.text("clusterLabel", required=False, limit=MAX_CLUSTER_LABEL)
    c.text("clusterColor", required=False, limit=MAX_COLOR_CHARS)
    c.agent("writer", rec.get("writer"))
    readers = rec.get("readers")
    if readers is not None:
        if not isinstance(readers, list):
            c.fail("readers", "is not a list of agent ids")
        for r in readers:
            c.agent("readers", r)
    c.text("machine", required=False, limit=MAX_MACHINE_CHARS, empty_ok=True)
    c.text("sourceId", required=False, limit=MAX_ID_CHARS, word=True)
    c.int_("chunkIndex", required=False, high=10 ** 9)
    c.text("provenance", required=False, limit=MAX_NOTE_CHARS, empty_ok=True)
    # Blank is no topic: `remember --topic ""` stored "" until session 10, and a backup
    # of such a store was refused here ("'topic' is empty"), so it could not be restored.
    c.text("topic", required=False, limit=MAX_TOPIC_CHARS, empty_ok=True)
    c.int_("createdAt", time=True)
    c.int_("lastReadAt", time=True)
    c.int_("reviewedAt", required=False, time=True)
    c.int_("deletedAt", required=False, time=True)
    c.int_("hits", high=10 ** 12)
    c.int_("sourceCount", required=False, low=1, high=10 ** 9)
    c.flag("pinned")
    c.flag("archived")
    files = rec.get("files")
    if files is not None:
        if not isinstance(files, list):
            c.fail("files", "is not a list")
        for f in files:
            if not isinstance(f, dict):
                c.fail("files", "holds an entry that is not an object")
            fc = _Check(f, line, "files ")
            fc.text("path", limit=MAX_PATH_CHARS)
            fc.int_("size", required=False, high=2 ** 62)
            fc.int_("mtimeMs", required=False, high=2 ** 62)
            fc.text("sha256", required=False, limit=SHA256_HEX_CHARS)
    links = rec.get("links")
    if links is not None and (not isinstance(links, list) or not all(isinstance(x, str) and x.strip() for x in links)):
        c.fail("links", "is not a list of memory ids")
    src = rec.get("source")
    if src is not None:
        if not isinstance(src, dict):
            c.fail("source", "is not an object")
        sc = _Check(src, line, "source ")
        sc.text("id", limit=MAX_ID_CHARS, word=True)
        sc.text("filename", required=False, limit=MAX_PATH_CHARS)
        sc.text("ext", required=False, limit=MAX_EXT_CHARS, empty_ok=True)
        sc.text("clusterId", required=False, limit=MAX_CLUSTER_LABEL, word=True)
        if src.get("ingestedBy") is not None:
            sc.agent("ingestedBy", src["ingestedBy"])
        sc.int_("bytes", required=False, high=2 ** 62)
        sc.number("trust", low=0, high=1, required=False)
        sc.int_("ingestedAt", required=False, time=True)
        sc.int_("updatedAt", required=False, time=True)
        sc.int_("droppedAt", required=False, time=True)
        sc.text("path", required=False, limit=MAX_PATH_CHARS)
    return rec


def dropped_ids(store, exported: set[str]) -> list[str]:
    """Ids of dropped (forgotten, merged-away, retired) memories not in ``exported``:
    a whole-store export carries them with their ``deletedAt``, because its event log
    names them (writes, links, drops) and ``asof:`` before the drop must find them in
    the store it is imported into, links included."""
    rows = conn_of(store).execute("SELECT id FROM memories WHERE deleted_at IS NOT NULL ORDER BY id")
    return [r[0] for r in rows if r[0] not in exported]


def import_batch(store, records: Iterable[tuple[int, dict]], *, now: int, agent: str = "import",
                 keys: dict[int, str] | None = None) -> dict:
    """Write validated ``(line, record)`` pairs in one transaction; returns counts
    ``{"imported", "merged", "sources", "clusters", "links", "pendingLinks", "renamed"}``
    where ``pendingLinks`` lists ``(a, b)`` pairs whose other end has not arrived yet (the
    caller retries them after the last batch with :func:`add_links`) and ``renamed``
    maps an exported id to the equal claim here it was merged into. ``keys`` is
    :func:`claim_keys` of this store, kept up to date with the claims inserted here."""
    conn = conn_of(store)
    counts = {"imported": 0, "merged": 0, "sources": 0, "clusters": 0, "links": 0, "pendingLinks": [], "renamed": {}}
    with atomic(conn):
        for _line, rec in records:
            _ensure_cluster(conn, rec, now, counts)
            # Agents are seen when the row says they acted (the writer when it wrote, the
            # readers by the last read), not at the import's time.
            store.touch_agent(rec["writer"], rec.get("createdAt") or now)
            for a in {r for r in rec.get("readers") or [] if isinstance(r, str)}:
                store.touch_agent(a, rec.get("lastReadAt") or rec.get("createdAt") or now)
            src = rec.get("source") if isinstance(rec.get("source"), dict) else None
            if src and isinstance(src.get("id"), str):
                _ensure_source(conn, src, rec, counts)
            target = _existing(conn, rec, keys)
            if target:
                _merge(store, target, rec)
                counts["merged"] += 1
                if target != rec["id"]:
                    counts["renamed"][rec["id"]] = target
            else:
                _insert(store, rec)
                counts["imported"] += 1
                if keys is not None and rec["kind"] == "claim" and rec.get("deletedAt") is None:
                    keys.setdefault(hash((rec["clusterId"], rec["text"])), rec["id"])
            for other in rec.get("links") or []:
                if isinstance(other, str):
                    counts["pendingLinks"].append((target or rec["id"], other))
        counts["links"] += add_links(conn, counts["pendingLinks"], keep_missing=True)
        store.log(now, agent, "import", None, f"{counts['imported']} imported, {counts['merged']} merged")
    return counts


def add_links(store_or_conn, pairs: list[tuple[str, str]], *, keep_missing: bool = False) -> int:
    """Add each link whose two ends exist (ordered ``a < b`` as the store keeps them);
    returns how many were new. With ``keep_missing`` the pairs not yet possible stay
    in ``pairs`` (in place); the others are removed."""
    conn = store_or_conn if hasattr(store_or_conn, "execute") else conn_of(store_or_conn)
    added, left = 0, []
    for a, b in pairs:
        x, y = sorted((a, b))
        if x == y:
            continue
        ok = conn.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (x, y)).fetchone()[0] == 2
        if not ok:
            left.append((a, b))
            continue
        added += conn.execute("INSERT OR IGNORE INTO links (a, b) VALUES (?, ?)", (x, y)).rowcount
    if keep_missing:
        pairs[:] = left
    return added


def reindex_contexts(store, source_ids: Iterable[str], neighbours: int = 2) -> None:
    """Index each chunk of the given sources with its neighbours as low-weight context
    (as ``ingest`` does), now that all of a source's chunks have arrived."""
    conn = conn_of(store)
    with atomic(conn):
        for sid in source_ids:
            rows = conn.execute("SELECT seq, text FROM memories WHERE source_id = ? AND kind = 'chunk' "
                                "ORDER BY coalesce(chunk_index, 0), seq", (sid,)).fetchall()
            texts = [r[1] for r in rows]
            for i, (seq, text) in enumerate(rows):
                ctx = " ".join(texts[max(0, i - neighbours):i] + texts[i + 1:i + 1 + neighbours])
                textindex.unindex(conn, seq)
                textindex.index(conn, seq, text, ctx)


def _ensure_cluster(conn, rec: dict, now: int, counts: dict) -> None:
    cid = rec["clusterId"]
    if conn.execute("SELECT 1 FROM clusters WHERE id = ?", (cid,)).fetchone():
        return
    label = rec.get("clusterLabel") if isinstance(rec.get("clusterLabel"), str) else cid
    color = rec.get("clusterColor")
    if not isinstance(color, str):  # the rule of Store.add_cluster: the next colour in turn
        n = conn.execute("SELECT count(*) FROM clusters").fetchone()[0]
        color = PALETTE[n % len(PALETTE)]
    conn.execute("INSERT INTO clusters (id, label, color, created_at) VALUES (?, ?, ?, ?)", (cid, label, color, now))
    counts["clusters"] += 1


def _ensure_source(conn, src: dict, rec: dict, counts: dict) -> None:
    if conn.execute("SELECT 1 FROM sources WHERE id = ?", (src["id"],)).fetchone():
        return
    cluster = src.get("clusterId") if isinstance(src.get("clusterId"), str) else rec["clusterId"]
    if not conn.execute("SELECT 1 FROM clusters WHERE id = ?", (cluster,)).fetchone():
        cluster = rec["clusterId"]
    conn.execute(
        "INSERT INTO sources (id, filename, ext, cluster_id, ingested_by, bytes, trust, ingested_at, dropped_at, path, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (src["id"], str(src.get("filename") or src["id"]), str(src.get("ext") or ""), cluster,
         str(src.get("ingestedBy") or rec["writer"]), int(src.get("bytes") or 0), DEFAULT_SOURCE_TRUST if src.get("trust") is None else float(src["trust"]),
         int(src.get("ingestedAt") or rec["createdAt"]), src.get("droppedAt"), src.get("path"), src.get("updatedAt")))
    counts["sources"] += 1


def claim_keys(store) -> dict[int, str]:
    """``{hash((cluster id, text)): memory id}`` of every live claim, built once per
    import: the exact-text lookup has no index (one would duplicate every text), and a
    scan per record made a 20,000-line import take minutes. Hits are re-checked
    against the row, so a hash collision never merges two different claims."""
    keys: dict[int, str] = {}
    for mid, cluster, text in conn_of(store).execute(
            "SELECT id, cluster_id, text FROM memories WHERE kind = 'claim' AND deleted_at IS NULL"):
        keys.setdefault(hash((cluster, text)), mid)
    return keys


def _existing(conn, rec: dict, keys: dict[int, str] | None) -> str | None:
    if conn.execute("SELECT 1 FROM memories WHERE id = ?", (rec["id"],)).fetchone():
        return rec["id"]
    if rec["kind"] == "claim" and rec.get("deletedAt") is None and keys is not None:
        mid = keys.get(hash((rec["clusterId"], rec["text"])))
        if mid:
            r = conn.execute("SELECT cluster_id, text, deleted_at FROM memories WHERE id = ?", (mid,)).fetchone()
            if r and r[0] == rec["clusterId"] and r[1] == rec["text"] and r[2] is None:
                return mid
    return None


def _readers(rec: dict) -> list[str]:
    return list(dict.fromkeys([rec["writer"], *[r for r in rec.get("readers") or [] if isinstance(r, str)]]))


def _merge(store, target: str, rec: dict) -> None:
    conn = conn_of(store)
    for a in _readers(rec):
        store.add_reader(target, a)
    conn.execute(
        "UPDATE memories SET hits = max(hits, ?), last_read_at = max(last_read_at, ?), "
        "pinned = max(pinned, ?), reviewed_at = coalesce(reviewed_at, ?) WHERE id = ?",
        (int(rec["hits"]), int(rec["lastReadAt"]), 1 if rec.get("pinned") else 0, rec.get("reviewedAt"), target))


def _insert(store, rec: dict) -> None:
    conn = conn_of(store)
    source_id = rec.get("sourceId") if isinstance(rec.get("sourceId"), str) else None
    if source_id and not conn.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone():
        source_id = None  # an export without source records: keep the chunk, drop the dangling reference
    readers = _readers(rec)
    cur = conn.execute(
        """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, chunk_index, provenance, topic,
                                 created_at, last_read_at, hits, source_count, reader_count, pinned, archived,
                                 reviewed_at, deleted_at, machine)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (rec["id"], rec["text"], rec["kind"], rec["origin"], rec["clusterId"], rec["writer"], source_id,
         rec.get("chunkIndex") if isinstance(rec.get("chunkIndex"), int) else None,
         str(rec.get("provenance") or ""), rec.get("topic") if isinstance(rec.get("topic"), str) and rec["topic"].strip() else None,
         int(rec["createdAt"]), int(rec["lastReadAt"]), int(rec["hits"]),
         int(rec.get("sourceCount") or 1), len(readers), 1 if rec.get("pinned") else 0, 1 if rec.get("archived") else 0,
         rec.get("reviewedAt"), rec.get("deletedAt"),
         # the machine that wrote it, as exported; else (older exports) the importing machine
         rec["machine"] if isinstance(rec.get("machine"), str) and rec["machine"].strip() else ops.MACHINE))
    conn.executemany("INSERT OR IGNORE INTO memory_readers (memory_id, agent_id) VALUES (?, ?)",
                     [(rec["id"], a) for a in readers])
    ops.count_new_memory(conn, rec["id"])
    for f in rec.get("files") or []:
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            conn.execute("INSERT OR IGNORE INTO memory_files (memory_id, path, size, mtime_ms, sha256) VALUES (?, ?, ?, ?, ?)",
                         (rec["id"], f["path"], f.get("size"), f.get("mtimeMs", f.get("mtime_ms")), f.get("sha256")))
    store._index(cur.lastrowid, rec["text"], "")
