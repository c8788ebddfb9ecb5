"""SQL for the contradiction pipeline: finding peers, candidates, conflicts, review.

The pure lexical test lives in :mod:`ledger.conflicts.signals`; this module only reads
and writes rows.
"""

from __future__ import annotations

from ._sqlite import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    from typing import Sequence

from .. import terms as T
from ..errors import UnknownCandidate, UnknownConflict
from ..ids import new_id
from ..models import Candidate, Conflict, Memory
from .connection import is_postgres, translate_module
from .store import Store

PEER_LIMIT = 200  # best full-text peers compared per write; ranked by BM25, not recency
#: Words of the new claim searched for peers: the rarest few (docs/benchmarks.md,
#: "remember at 100k"). Common words match most of the store and walking their
#: index entries was most of remember's time; a claim worth comparing shares its
#: rare words too: no loss on either labelled pair set at 4 (bench/peers.py).
PEER_TERMS = 4
#: Document frequencies are counted only up to this many rows: enough to tell the
#: rare words apart, while a common word costs at most this many index entries.
DF_CAP = 500


#: The peers of a new claim on SQLite: live, unarchived claims of its cluster matching
#: any of its rarest words, best BM25 first. Parameters: (FTS5 expression, cluster,
#: the new claim's id, limit).
_PEERS = """SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.seq = f.rowid
            WHERE memories_fts MATCH ?1 AND m.kind = 'claim' AND m.deleted_at IS NULL AND m.archived = 0
              AND m.cluster_id = ?2 AND m.id != ?3
            ORDER BY bm25(memories_fts) LIMIT ?4"""
#: The same rows in the same order, for words matching many memories. Joining every
#: match to its memory row (a read of the big memories table per match) was most of a
#: remember's peer lookup at 100k, where a cluster holds a tenth of the memories (a third
#: of them claims) and a common word matches half of all. So the cluster's live claims
#: are listed first (from the ``memories_live`` index, a few thousand at 100k; about
#: 0.3 µs each) and each match is checked against that in-memory list; only the matches
#: in it reach the memory row (docs/store.md "Finding peers"). The added test is
#: implied by the others, so the set, the BM25 order and the ties are those of
#: :data:`_PEERS` (matches come in rowid order either way). The ``+`` keeps SQLite from
#: driving the full-text scan from the list (one full-text query per listed claim).
_PEERS_BY_CLUSTER = """SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.seq = f.rowid
            WHERE memories_fts MATCH ?1 AND m.kind = 'claim' AND m.deleted_at IS NULL AND m.archived = 0
              AND m.cluster_id = ?2 AND m.id != ?3
              AND +f.rowid IN (SELECT seq FROM memories WHERE deleted_at IS NULL AND kind = 'claim' AND cluster_id = ?2)
            ORDER BY bm25(memories_fts) LIMIT ?4"""


def rarest_terms(terms: Sequence[str], count, keep: int = PEER_TERMS) -> list[str]:
    """The ``keep`` terms of ``terms`` found in the fewest memories, by
    ``count(term) -> int`` (capped at :data:`DF_CAP`; ties keep the given order, which
    puts the claim's head words first). Terms found in no memory are dropped: they can
    find no peer. All of ``terms`` when there are at most ``keep``."""
    if len(terms) <= keep:
        return list(terms)
    df = {t: count(t) for t in terms}
    return sorted((t for t in terms if df[t]), key=lambda t: df[t])[:keep]


def find_peers(store: Store, memory_id: str, cluster_id: str, terms: Sequence[str], files: Sequence[str],
               limit: int = PEER_LIMIT) -> list[tuple[str, str, bool]]:
    """Live, unarchived claims that share words with the new claim, found through the
    word index across the whole cluster (any age, any read history), plus claims in
    any cluster keyed to one of ``files``. Only the :data:`PEER_TERMS` rarest of
    ``terms`` are searched (:func:`rarest_terms`). Returns ``[(id, text, keyed to one
    of files)]``, best BM25 first, then the file peers."""
    out: dict[str, tuple[str, str, bool]] = {}
    if files:
        marks = ",".join("?" * len(files))
        rows = store._conn.execute(
            f"""SELECT DISTINCT m.id, m.text FROM memory_files f JOIN memories m ON m.id = f.memory_id
                WHERE f.path IN ({marks}) AND m.kind = 'claim' AND m.deleted_at IS NULL AND m.archived = 0 AND m.id != ?
                LIMIT ?""",
            (*files, memory_id, limit),
        ).fetchall()
        file_peers = {r[0]: (r[0], r[1], True) for r in rows}
    else:
        file_peers = {}
    if terms and is_postgres(store._conn):
        from .textindex_pg import term_count

        terms = rarest_terms(terms, lambda t: term_count(store._conn, t, DF_CAP), PEER_TERMS)
    elif terms:
        df: dict[str, int] = {}

        # Each term as the phrase of its words as the word index holds them (CJK runs set
        # apart, ledger.terms.word_text), so a claim's 我们用redis finds the 我们用Redis of a peer.
        def count(t: str) -> int:
            df[t] = store._conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
                ('"' + T.word_text(t).replace('"', '""') + '"', DF_CAP)).fetchone()[0]
            return df[t]

        terms = rarest_terms(terms, count, PEER_TERMS)
    if terms and is_postgres(store._conn):
        from .textindex_pg import peers

        rows = peers(store._conn, terms, cluster_id, memory_id, limit)
        out.update((r[0], file_peers.get(r[0], (r[0], r[1], False))) for r in rows)
    elif terms:
        expr = " OR ".join('"' + T.word_text(t).replace('"', '""') + '"' for t in terms)
        # Few matches (every term counted under the cap): join each to its row. Else the
        # cluster's live claims first (docs/store.md "Finding peers"): the same rows.
        many = any(df.get(t, DF_CAP) >= DF_CAP for t in terms)
        rows = store._conn.execute(_PEERS_BY_CLUSTER if many else _PEERS, (expr, cluster_id, memory_id, limit)).fetchall()
        out.update((r[0], file_peers.get(r[0], (r[0], r[1], False))) for r in rows)
    for mid, peer in file_peers.items():
        out.setdefault(mid, peer)
    return list(out.values())


def keyed_to_files(store: Store, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` that have at least one file key."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {r[0] for r in store._conn.execute(f"SELECT DISTINCT memory_id FROM memory_files WHERE memory_id IN ({marks})", list(ids))}


def file_paths(store: Store, ids: Sequence[str]) -> dict[str, set[str]]:
    """The paths of the file keys of ``ids``: ``{id: {path, ...}}``; ids without file
    keys are absent (the proposer tells subjects apart by them)."""
    out: dict[str, set[str]] = {}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    for r in store._conn.execute(f"SELECT memory_id, path FROM memory_files WHERE memory_id IN ({marks})", list(ids)):
        out.setdefault(r[0], set()).add(r[1])
    return out


def settled_pairs(store: Store, memory_id: str) -> set[str]:
    """Ids already paired with ``memory_id`` as a candidate or a conflict, any status."""
    rows = store._conn.execute(
        """SELECT CASE WHEN a = :id THEN b ELSE a END FROM conflict_candidates WHERE a = :id OR b = :id
           UNION SELECT CASE WHEN a = :id THEN b ELSE a END FROM conflicts WHERE a = :id OR b = :id""",
        {"id": memory_id},
    ).fetchall()
    return {r[0] for r in rows}


def insert_candidate(store: Store, a: str, b: str, score: float, signals: Sequence[str], now: int) -> str | None:
    """Record a suspected pair (``a < b``) once; returns its id, or None if the pair
    already exists as a candidate or conflict in either order."""
    lo, hi = sorted((a, b))
    if store._conn.execute("SELECT 1 FROM conflicts WHERE (a = ? AND b = ?) OR (a = ? AND b = ?)", (lo, hi, hi, lo)).fetchone():
        return None
    cid = new_id("cc", now)
    cur = store._conn.execute(
        "INSERT OR IGNORE INTO conflict_candidates (id, a, b, score, signals, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (cid, lo, hi, score, ", ".join(signals), now),
    )
    return cid if cur.rowcount else None


def pending_candidates(store: Store, now: int, limit: int = 5) -> list[Candidate]:
    """Unjudged candidates whose two memories are both live, best score first."""
    rows = store._conn.execute(
        """SELECT cc.* FROM conflict_candidates cc JOIN memories a ON a.id = cc.a JOIN memories b ON b.id = cc.b
           WHERE cc.judged_at IS NULL AND a.deleted_at IS NULL AND b.deleted_at IS NULL
           ORDER BY cc.score DESC, cc.created_at DESC LIMIT ?""",
        (limit,),
    ).fetchall()
    return _candidates(store, rows, now)


def pending_candidate_count(store: Store) -> int:
    """Unjudged candidates whose two memories are both live (dropping a memory settles
    its candidates, so the join only guards a pair left over): the same rows
    :func:`pending_candidates` lists and ``stats`` counts."""
    return store._conn.execute(
        """SELECT count(*) FROM conflict_candidates cc JOIN memories a ON a.id = cc.a JOIN memories b ON b.id = cc.b
           WHERE cc.judged_at IS NULL AND a.deleted_at IS NULL AND b.deleted_at IS NULL""").fetchone()[0]


def open_conflict_count(store: Store) -> int:
    return store._conn.execute("SELECT count(*) FROM conflicts WHERE status = 'open'").fetchone()[0]


def get_pending_candidate(store: Store, candidate_id: str, now: int) -> Candidate:
    r = store._conn.execute("SELECT * FROM conflict_candidates WHERE id = ? AND judged_at IS NULL", (candidate_id,)).fetchone()
    if r is None:
        judged = store._conn.execute("SELECT verdict, a, b FROM conflict_candidates WHERE id = ?", (candidate_id,)).fetchone()
        if judged and judged[0] == "retired":
            gone = [x for (x,) in store._conn.execute(
                "SELECT id FROM memories WHERE id IN (?, ?) AND deleted_at IS NOT NULL", (judged[1], judged[2]))]
            raise UnknownCandidate(f"Candidate {candidate_id} no longer stands: {gone[0] if gone else 'one side'} was dropped.",
                                   field="candidate", value=candidate_id)
        if judged:
            raise UnknownCandidate(f"Candidate {candidate_id} was already judged ({judged[0]}).", field="candidate", value=candidate_id)
        raise UnknownCandidate(f"No pending conflict candidate {candidate_id}.", field="candidate", value=candidate_id)
    # A pair with a dropped side is hidden from the list; judging it would open a
    # conflict whose resolution could retire the only live memory.
    gone = [x for (x,) in store._conn.execute(
        "SELECT id FROM memories WHERE id IN (?, ?) AND deleted_at IS NOT NULL", (r["a"], r["b"]))]
    if gone:
        raise UnknownCandidate(f"Candidate {candidate_id} no longer stands: {gone[0]} was dropped.", field="candidate", value=candidate_id)
    return _candidates(store, [r], now)[0]


def conflict_of_candidate(store: Store, candidate_id: str) -> str | None:
    """The conflict an agent opened by judging ``candidate_id`` a conflict, if any."""
    r = store._conn.execute(
        """SELECT cf.id FROM conflict_candidates cc JOIN conflicts cf ON cf.a = cc.a AND cf.b = cc.b
           WHERE cc.id = ? AND cc.verdict = 'conflict' ORDER BY cf.created_at DESC LIMIT 1""",
        (candidate_id,),
    ).fetchone()
    return r[0] if r else None


def mark_judged(store: Store, candidate_id: str, verdict: str, agent: str, now: int) -> None:
    store._conn.execute(
        "UPDATE conflict_candidates SET judged_at = ?, verdict = ?, judged_by = ? WHERE id = ?", (now, verdict, agent, candidate_id)
    )


def _candidates(store: Store, rows: list[sqlite3.Row], now: int) -> list[Candidate]:
    mems = {m.id: m for m in store.get_many(list({r["a"] for r in rows} | {r["b"] for r in rows}), now)}
    return [
        Candidate(r["id"], mems[r["a"]], mems[r["b"]], r["score"], tuple(s for s in r["signals"].split(", ") if s), r["created_at"], r["judged_at"])
        for r in rows
        if r["a"] in mems and r["b"] in mems
    ]


def insert_conflict(store: Store, a: str, b: str, kind: str, cluster_id: str, detector: float, note: str, now: int) -> str:
    cid = new_id("cf", now)
    store._conn.execute(
        "INSERT INTO conflicts (id, kind, cluster_id, a, b, detector, note, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)",
        (cid, kind, cluster_id, a, b, detector, note, now),
    )
    return cid


def get_conflict(store: Store, conflict_id: str, now: int, *, open_only: bool = False) -> Conflict:
    r = store._conn.execute("SELECT * FROM conflicts WHERE id = ?", (conflict_id,)).fetchone()
    if r is None or (open_only and r["status"] != "open"):
        if r is not None:
            raise UnknownConflict(f"Conflict {conflict_id} is already {r['status']}.", field="conflict", value=conflict_id)
        raise UnknownConflict(f"No open conflict {conflict_id}.", field="conflict", value=conflict_id)
    return _conflicts(store, [r], now)[0]


def list_conflicts(store: Store, now: int, *, status: str = "open", limit: int = 50) -> list[Conflict]:
    rows = store._conn.execute("SELECT * FROM conflicts WHERE status = ? ORDER BY created_at DESC LIMIT ?", (status, limit)).fetchall()
    return _conflicts(store, rows, now)


def set_conflict_status(store: Store, conflict_id: str, status: str, resolution: str, agent: str, now: int) -> None:
    store._conn.execute(
        "UPDATE conflicts SET status = ?, resolved_at = ?, resolution = ?, resolved_by = ? WHERE id = ?",
        (status, now, resolution, agent, conflict_id),
    )


def _conflicts(store: Store, rows: list[sqlite3.Row], now: int) -> list[Conflict]:
    mems: dict[str, Memory] = {m.id: m for m in store.get_many(list({r["a"] for r in rows} | {r["b"] for r in rows}), now)}
    return [
        Conflict(r["id"], r["kind"], r["cluster_id"], mems[r["a"]], mems[r["b"]], r["detector"], r["note"], r["status"],
                 r["created_at"], r["resolved_at"], r["resolution"])
        for r in rows
        if r["a"] in mems and r["b"] in mems
    ]


def pending_review_ids(store: Store, limit: int = 200) -> list[str]:
    """Live claims not yet reviewed and not in an open conflict, newest first."""
    return [r[0] for r in store._conn.execute(
        """SELECT m.id FROM memories m WHERE m.kind = 'claim' AND m.deleted_at IS NULL AND m.reviewed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND (c.a = m.id OR c.b = m.id))
           ORDER BY m.created_at DESC, m.seq DESC LIMIT ?""",
        (limit,),
    )]


def pending_review_count(store: Store) -> int:
    return store._conn.execute(
        """SELECT count(*) FROM memories m WHERE m.kind = 'claim' AND m.deleted_at IS NULL AND m.reviewed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND (c.a = m.id OR c.b = m.id))"""
    ).fetchone()[0]


# No sqlite3 error leaves the store: each operation raises StoreUnavailable instead.
translate_module(globals(), ('find_peers', 'keyed_to_files', 'file_paths', 'settled_pairs', 'insert_candidate', 'pending_candidates', 'pending_candidate_count', 'open_conflict_count', 'get_pending_candidate', 'conflict_of_candidate', 'mark_judged', 'insert_conflict', 'get_conflict', 'list_conflicts', 'set_conflict_status', 'pending_review_ids', 'pending_review_count'))
