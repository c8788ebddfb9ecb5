"""The JSON wire shapes: the one module that decides what a ledger value looks like in
JSON, for the CLI's ``--json``, ``export``, the web API and any other surface to come
(an MCP server). camelCase keys, times in epoch ms, strength, trust and factors 0-1 to
4 places without changing the 0-100 integer shown for them (:func:`ledger.strength.wire`).
The models' ``to_dict()`` and the web views call these functions; a surface never builds
a value's JSON by hand.

L0: the standard library and :mod:`ledger.strength` only.
"""

from __future__ import annotations

from . import strength as S

# No import of ledger.models, not even for typing: the models call these functions
# (the annotations name the models' classes as plain strings).


def cluster(x: "Cluster") -> dict:
    """JSON of a :class:`ledger.models.Cluster`."""
    return {"id": x.id, "label": x.label, "color": x.color, "createdAt": x.created_at, "count": x.count}


def memory(x: "Memory") -> dict:
    """JSON of a :class:`ledger.models.Memory`."""
    d = {
        "id": x.id,
        "text": x.text,
        "kind": x.kind,
        "origin": x.origin,
        "clusterId": x.cluster_id,
        "clusterLabel": x.cluster_label,
        "clusterColor": x.cluster_color,
        "writer": x.writer,
        "machine": x.machine,
        "readers": list(x.readers),
        "sourceId": x.source_id,
        "chunkIndex": x.chunk_index,
        "provenance": x.provenance,
        "createdAt": x.created_at,
        "lastReadAt": x.last_read_at,
        "hits": x.hits,
        "sourceCount": x.source_count,
        "pinned": x.pinned,
        "archived": x.archived,
        "reviewedAt": x.reviewed_at,
        "deletedAt": x.deleted_at,
        "strength": S.wire(x.strength),
        "factors": {k: S.wire(v) for k, v in x.factors.to_dict().items()},
        "conflictWith": x.conflict_with,
    }
    if x.topic is not None or x.files:
        d["topic"] = x.topic
        d["files"] = [file_key(f) for f in x.files]
    if x.kind == "chunk" and x.source_trust is not None:
        d["sourceTrust"] = S.wire(x.source_trust)  # what a chunk's strength comes from (not the factors)
    if x.score is not None:
        d["score"] = round(x.score, 4)
    return d


def memory_compact(x: "Memory", stale: str = "") -> dict:
    """The short form of a :class:`ledger.models.Memory` for lists an agent reads (the
    MCP tools' default): ``{"id", "strength" (0-1), "text", "cluster" (id)}``, plus
    ``"stale"`` when given (a sentence saying a file the memory is keyed to changed
    since: :func:`ledger.filekeys.change_note`). The full form is :func:`memory`."""
    d = {"id": x.id, "strength": S.wire(x.strength), "text": x.text, "cluster": x.cluster_id}
    if stale:
        d["stale"] = stale
    return d


def file_key(x: "FileKey") -> dict:
    """JSON of a :class:`ledger.models.FileKey`."""
    return {"path": x.path, "size": x.size, "mtimeMs": x.mtime_ms, "sha256": x.sha256}


def search_result(x: "SearchResult") -> dict:
    """JSON of a :class:`ledger.models.SearchResult`."""
    d = {"hits": [memory(m) for m in x.hits], "total": x.total, "tookMs": round(x.took_ms, 2), "capped": False}
    if x.not_counted:
        d["notCounted"] = x.not_counted
    d["warnings"] = x.warnings()
    return d


def source(x: "Source") -> dict:
    """JSON of a :class:`ledger.models.Source`."""
    return {
        "id": x.id, "filename": x.filename, "ext": x.ext, "clusterId": x.cluster_id,
        "ingestedBy": x.ingested_by, "bytes": x.bytes, "trust": x.trust,
        "ingestedAt": x.ingested_at, "droppedAt": x.dropped_at,
        "chunkCount": x.chunk_count, "claimCount": x.claim_count, "hits": x.hits,
        "path": x.path,  # the resolved file it was read from; None for stdin or --text
    }


def candidate(x: "Candidate") -> dict:
    """JSON of a :class:`ledger.models.Candidate`."""
    return {
        "id": x.id, "score": x.score, "signals": list(x.signals), "createdAt": x.created_at,
        "judgedAt": x.judged_at, "a": memory(x.a), "b": memory(x.b),
    }


def conflict(x: "Conflict") -> dict:
    """JSON of a :class:`ledger.models.Conflict`."""
    return {
        "id": x.id, "kind": x.kind, "clusterId": x.cluster_id, "detector": x.detector,
        "note": x.note, "status": x.status, "createdAt": x.created_at,
        "resolvedAt": x.resolved_at, "resolution": x.resolution,
        "a": memory(x.a), "b": memory(x.b),
    }


def event(x: "Event") -> dict:
    """JSON of a :class:`ledger.models.Event`."""
    return {"id": x.id, "at": x.at, "agent": x.agent, "op": x.op, "memoryId": x.memory_id, "detail": x.detail, "ms": x.ms}


def history(events, former) -> dict:
    """The ``history`` and ``formerTexts`` keys of a memory shown in full (CLI ``show
    --json``, MCP ``show``), from :meth:`ledger.service.Ledger.history`: log rows
    (:func:`event`, oldest first) and earlier texts (``text``, ``replacedAt`` epoch ms,
    ``replacedBy`` agent, oldest first)."""
    return {"history": [event(e) for e in events],
            "formerTexts": [{"text": t, "replacedAt": at, "replacedBy": by} for t, at, by in former]}


def agent(x: "Agent") -> dict:
    """JSON of a :class:`ledger.models.Agent`."""
    d = {"id": x.id, "label": x.label, "role": x.role, "color": x.color, "firstSeen": x.first_seen, "lastSeen": x.last_seen}
    d.update(x.extra)
    return d


# ---------------------------------------------------------------- rows the web screens list
#: Characters of text sent per canvas node (hover tooltip); the inspector fetches the rest.
NODE_TEXT = 180


def chunk_row(m: "Memory") -> dict:
    """A chunk in a source's preview list."""
    return {"id": m.id, "chunkIndex": m.chunk_index, "text": m.text, "hits": m.hits, "strength": S.wire(m.strength)}


def claim_row(m: "Memory") -> dict:
    """A claim in a source's list of distilled claims."""
    return {"id": m.id, "text": m.text, "hits": m.hits, "strength": S.wire(m.strength), "writer": m.writer,
            "reviewedAt": m.reviewed_at, "createdAt": m.created_at}


def graph_node(m: "Memory") -> dict:
    """A memory as a canvas node: text cut to :data:`NODE_TEXT` characters, reader count."""
    text = m.text if len(m.text) <= NODE_TEXT else m.text[: NODE_TEXT - 1] + "…"
    return {
        "id": m.id, "text": text, "kind": m.kind, "origin": m.origin, "cluster": m.cluster_id,
        "clusterLabel": m.cluster_label, "color": m.cluster_color, "writer": m.writer, "readers": len(m.readers),
        "strength": S.wire(m.strength), "hits": m.hits, "createdAt": m.created_at, "lastReadAt": m.last_read_at,
        "deletedAt": m.deleted_at, "pinned": m.pinned, "archived": m.archived,
        "pending": m.kind == "claim" and m.reviewed_at is None, "conflict": m.conflict_with is not None,
    }


# ---------------------------------------------------------------- results of writes
def write_result(memory_json: dict, proposed, conflict_id, pending_candidates: int, duplicate: bool,
                 redacted: int = 0) -> dict:
    """What ``remember`` did: the claim's JSON plus ``proposed`` candidate ids,
    ``conflictId``, ``pendingCandidates``, ``duplicate`` (counted as corroboration) and
    ``redacted`` (secrets replaced by ``[REDACTED:<kind>]`` before storing)."""
    d = dict(memory_json)
    d.update({"proposed": list(proposed), "conflictId": conflict_id, "pendingCandidates": pending_candidates,
              "duplicate": duplicate, "redacted": redacted})
    return d


def ingest_result(x) -> dict:
    """What ``ingest`` did (a :class:`ledger.service.IngestResult`): the source, its
    chunk count, and for a re-ingested path whether it was updated and how many chunks
    were kept, added and retired, and ``redacted``: secrets replaced by
    ``[REDACTED:<kind>]`` before storing."""
    return {"sourceId": x.source_id, "chunks": x.chunks, "filename": x.filename, "updated": x.updated,
            "kept": x.kept, "added": x.added, "retired": x.retired, "redacted": x.redacted}
