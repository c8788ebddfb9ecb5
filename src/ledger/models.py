"""Frozen dataclasses that cross layer boundaries. Times are epoch milliseconds (UTC);
strength and factors are 0–1. ``to_dict()`` gives the stable JSON shape (camelCase keys,
the seed's export fields, docs/originals.md §1.14) used by ``--json``, ``export`` and the web API.

Stdlib only (L0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .strength import Factors


@dataclass(frozen=True)
class Cluster:
    id: str
    label: str
    color: str
    created_at: int
    count: int = 0  # live memories, when listed

    def to_dict(self) -> dict:
        return {"id": self.id, "label": self.label, "color": self.color, "createdAt": self.created_at, "count": self.count}


@dataclass(frozen=True)
class Memory:
    """One row of the store, hydrated: strength and factors computed at read time."""

    id: str
    text: str
    kind: str  # 'claim' | 'chunk'
    origin: str  # 'chat' | 'doc'
    cluster_id: str
    cluster_label: str
    cluster_color: str
    writer: str
    readers: tuple[str, ...]
    source_id: str | None
    chunk_index: int | None
    provenance: str
    created_at: int
    last_read_at: int
    hits: int
    source_count: int
    pinned: bool
    archived: bool
    reviewed_at: int | None
    deleted_at: int | None
    strength: float
    factors: Factors
    conflict_with: str | None = None
    topic: str | None = None
    files: tuple["FileKey", ...] = ()
    score: float | None = None  # set on search hits: 0.75*relevance + 0.25*strength

    def to_dict(self) -> dict:
        d = {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "origin": self.origin,
            "clusterId": self.cluster_id,
            "clusterLabel": self.cluster_label,
            "clusterColor": self.cluster_color,
            "writer": self.writer,
            "readers": list(self.readers),
            "sourceId": self.source_id,
            "chunkIndex": self.chunk_index,
            "provenance": self.provenance,
            "createdAt": self.created_at,
            "lastReadAt": self.last_read_at,
            "hits": self.hits,
            "sourceCount": self.source_count,
            "pinned": self.pinned,
            "archived": self.archived,
            "reviewedAt": self.reviewed_at,
            "deletedAt": self.deleted_at,
            "strength": round(self.strength, 4),
            "factors": {k: round(v, 4) for k, v in self.factors.to_dict().items()},
            "conflictWith": self.conflict_with,
        }
        if self.topic is not None or self.files:
            d["topic"] = self.topic
            d["files"] = [f.to_dict() for f in self.files]
        if self.score is not None:
            d["score"] = round(self.score, 4)
        return d


@dataclass(frozen=True)
class MemoryRow:
    """The stored columns of one memory, unhydrated (no readers, files or strength):
    what the service checks before it acts. Times are epoch ms."""

    seq: int
    id: str
    kind: str  # 'claim' | 'chunk'
    text: str
    cluster_id: str
    source_id: str | None
    hits: int
    source_count: int
    last_read_at: int
    pinned: bool
    archived: bool
    reviewed_at: int | None
    deleted_at: int | None


@dataclass(frozen=True)
class FileKey:
    """A file a memory is about: resolved absolute path plus the file's state when the
    memory was written (size in bytes, mtime in epoch ms, sha256 hex of the content)."""

    path: str
    size: int | None = None
    mtime_ms: int | None = None
    sha256: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "size": self.size, "mtimeMs": self.mtime_ms, "sha256": self.sha256}


@dataclass(frozen=True)
class SearchResult:
    """A page of hits plus the exact number of matches (``total``) and the time the
    search took (``took_ms``). Ranking is exact over every match: there is no window, so
    there is no ``capped`` flag to report (it is always ``False`` in JSON for
    compatibility with the seed's shape)."""

    hits: tuple[Memory, ...]
    total: int
    took_ms: float
    query: str = ""
    #: For ``recall``: why this read could not be counted (the store stayed locked or is
    #: full); None when it was counted, or for ``search``, which never counts.
    not_counted: str | None = None

    def to_dict(self) -> dict:
        d = {"hits": [m.to_dict() for m in self.hits], "total": self.total, "tookMs": round(self.took_ms, 2), "capped": False}
        if self.not_counted:
            d["notCounted"] = self.not_counted
        return d


@dataclass(frozen=True)
class Source:
    id: str
    filename: str
    ext: str
    cluster_id: str
    ingested_by: str
    bytes: int
    trust: float
    ingested_at: int
    dropped_at: int | None
    chunk_count: int = 0
    claim_count: int = 0
    hits: int = 0

    def to_dict(self) -> dict:
        return {
            "id": self.id, "filename": self.filename, "ext": self.ext, "clusterId": self.cluster_id,
            "ingestedBy": self.ingested_by, "bytes": self.bytes, "trust": self.trust,
            "ingestedAt": self.ingested_at, "droppedAt": self.dropped_at,
            "chunkCount": self.chunk_count, "claimCount": self.claim_count, "hits": self.hits,
        }


@dataclass(frozen=True)
class Candidate:
    """A pair the store suspects (lexically) of contradicting. ``score`` ranks only."""

    id: str
    a: Memory
    b: Memory
    score: float
    signals: tuple[str, ...]
    created_at: int
    judged_at: int | None = None

    def to_dict(self) -> dict:
        return {
            "id": self.id, "score": self.score, "signals": list(self.signals), "createdAt": self.created_at,
            "judgedAt": self.judged_at, "a": self.a.to_dict(), "b": self.b.to_dict(),
        }


@dataclass(frozen=True)
class Conflict:
    """A judged contradiction, open until a person resolves it."""

    id: str
    kind: str
    cluster_id: str
    a: Memory
    b: Memory
    detector: float
    note: str
    status: str  # 'open' | 'resolved' | 'dismissed'
    created_at: int
    resolved_at: int | None = None
    resolution: str | None = None

    def to_dict(self) -> dict:
        return {
            "id": self.id, "kind": self.kind, "clusterId": self.cluster_id, "detector": self.detector,
            "note": self.note, "status": self.status, "createdAt": self.created_at,
            "resolvedAt": self.resolved_at, "resolution": self.resolution,
            "a": self.a.to_dict(), "b": self.b.to_dict(),
        }


@dataclass(frozen=True)
class Event:
    id: int
    at: int
    agent: str
    op: str
    memory_id: str | None
    detail: str
    ms: float | None = None

    def to_dict(self) -> dict:
        return {"id": self.id, "at": self.at, "agent": self.agent, "op": self.op, "memoryId": self.memory_id, "detail": self.detail, "ms": self.ms}


@dataclass(frozen=True)
class Agent:
    id: str
    label: str
    role: str
    color: str
    first_seen: int
    last_seen: int
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"id": self.id, "label": self.label, "role": self.role, "color": self.color, "firstSeen": self.first_seen, "lastSeen": self.last_seen}
        d.update(self.extra)
        return d
