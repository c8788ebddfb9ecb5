"""Frozen dataclasses that cross layer boundaries. Times are epoch milliseconds (UTC);
strength and factors are 0–1. ``to_dict()`` gives the stable JSON shape, decided in
:mod:`ledger.wire` (camelCase keys, the seed's export fields) for ``--json``, ``export``
and the web API.

Stdlib only (L0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import wire
from .strength import Factors


@dataclass(frozen=True)
class Cluster:
    id: str
    label: str
    color: str
    created_at: int
    count: int = 0  # live memories, when listed

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.cluster`."""
        return wire.cluster(self)


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
    # A chunk's source trust (0-1): its strength is this, clamped (ledger.strength.chunk_strength); the
    # factors do not apply to chunks. None for claims.
    source_trust: float | None = None

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.memory`."""
        return wire.memory(self)


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
        """The JSON shape: :func:`ledger.wire.file_key`."""
        return wire.file_key(self)


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
    #: ``cluster:`` values of the query that name no cluster of the store (they match
    #: nothing), and the store's cluster ids to choose from when there are any.
    unknown_clusters: tuple[str, ...] = ()
    known_clusters: tuple[str, ...] = ()

    def warnings(self) -> list[dict]:
        """What the caller should hear about although the search ran:
        ``[{"kind": "unknown-cluster", "warning": <message>, "known": [ids]}]`` when the
        query names clusters the store does not have; ``[]`` otherwise. The message
        names no surface (the CLI adds its command, the web its wording)."""
        if not self.unknown_clusters:
            return []
        names = ", ".join(f'"{c}"' for c in self.unknown_clusters)
        s = "s" if len(self.unknown_clusters) > 1 else ""
        msg = (f"No cluster{s} {names} in this store, so {'they match' if s else 'it matches'} nothing. "
               f"Known clusters: {', '.join(self.known_clusters) or '(none)'}.")
        return [{"kind": "unknown-cluster", "warning": msg, "known": list(self.known_clusters)}]

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.search_result`."""
        return wire.search_result(self)


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
        """The JSON shape: :func:`ledger.wire.source`."""
        return wire.source(self)


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
        """The JSON shape: :func:`ledger.wire.candidate`."""
        return wire.candidate(self)


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
        """The JSON shape: :func:`ledger.wire.conflict`."""
        return wire.conflict(self)


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
        """The JSON shape: :func:`ledger.wire.event`."""
        return wire.event(self)


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
        """The JSON shape: :func:`ledger.wire.agent`."""
        return wire.agent(self)
