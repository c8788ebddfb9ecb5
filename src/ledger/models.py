"""Immutable values that cross layer boundaries. Times are epoch milliseconds (UTC);
strength and factors are 0–1. ``to_dict()`` gives the stable JSON shape, decided in
:mod:`ledger.wire` (camelCase keys, the seed's export fields) for ``--json``, ``export``
and the web API.

Each class is a :class:`ledger.frozen.Frozen`: a frozen dataclass's contract (fields by
position or keyword, immutability, value equality and hash, ``repr``, ``.replace()``)
without importing :mod:`dataclasses`, which the agent verbs cannot afford at start-up
(docs/benchmarks.md "Start-up"). The fields are the ``__init__`` parameters, in order.

Stdlib only (L0).
"""

from __future__ import annotations

from . import wire
from .frozen import Frozen
from .strength import Factors


class Cluster(Frozen):
    __slots__ = ("id", "label", "color", "created_at", "count")

    def __init__(
        self,
        id: str,
        label: str,
        color: str,
        created_at: int,
        count: int = 0,  # live memories, when listed
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "label", label)
        s(self, "color", color)
        s(self, "created_at", created_at)
        s(self, "count", count)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.cluster`."""
        return wire.cluster(self)


class Memory(Frozen):
    """One row of the store, hydrated: strength and factors computed at read time."""

    __slots__ = (
        "id", "text", "kind", "origin", "cluster_id", "cluster_label", "cluster_color", "writer",
        "readers", "source_id", "chunk_index", "provenance", "created_at", "last_read_at", "hits",
        "source_count", "pinned", "archived", "reviewed_at", "deleted_at", "strength", "factors",
        "conflict_with", "topic", "files", "score", "source_trust", "machine",
    )

    def __init__(
        self,
        id: str,
        text: str,
        kind: str,  # 'claim' | 'chunk'
        origin: str,  # 'chat' | 'doc'
        cluster_id: str,
        cluster_label: str,
        cluster_color: str,
        writer: str,
        readers: tuple[str, ...],
        source_id: str | None,
        chunk_index: int | None,
        provenance: str,
        created_at: int,
        last_read_at: int,
        hits: int,
        source_count: int,
        pinned: bool,
        archived: bool,
        reviewed_at: int | None,
        deleted_at: int | None,
        strength: float,
        factors: Factors,
        conflict_with: str | None = None,
        topic: str | None = None,
        files: tuple["FileKey", ...] = (),
        score: float | None = None,  # set on search hits: 0.75*relevance + 0.25*strength
        # A chunk's source trust (0-1): its strength is this, clamped (ledger.strength.chunk_strength); the
        # factors do not apply to chunks. None for claims.
        source_trust: float | None = None,
        # Row-level attribution: the machine that wrote the row ($LEDGER_MACHINE or the host
        # name, :func:`ledger.paths.machine_id`); None for rows written before it was recorded.
        machine: str | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "text", text)
        s(self, "kind", kind)
        s(self, "origin", origin)
        s(self, "cluster_id", cluster_id)
        s(self, "cluster_label", cluster_label)
        s(self, "cluster_color", cluster_color)
        s(self, "writer", writer)
        s(self, "readers", readers)
        s(self, "source_id", source_id)
        s(self, "chunk_index", chunk_index)
        s(self, "provenance", provenance)
        s(self, "created_at", created_at)
        s(self, "last_read_at", last_read_at)
        s(self, "hits", hits)
        s(self, "source_count", source_count)
        s(self, "pinned", pinned)
        s(self, "archived", archived)
        s(self, "reviewed_at", reviewed_at)
        s(self, "deleted_at", deleted_at)
        s(self, "strength", strength)
        s(self, "factors", factors)
        s(self, "conflict_with", conflict_with)
        s(self, "topic", topic)
        s(self, "files", files)
        s(self, "score", score)
        s(self, "source_trust", source_trust)
        s(self, "machine", machine)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.memory`."""
        return wire.memory(self)


class MemoryRow(Frozen):
    """The stored columns of one memory, unhydrated (no readers, files or strength):
    what the service checks before it acts. Times are epoch ms."""

    __slots__ = (
        "seq", "id", "kind", "text", "cluster_id", "source_id", "hits", "source_count", "last_read_at",
        "pinned", "archived", "reviewed_at", "deleted_at",
    )

    def __init__(
        self,
        seq: int,
        id: str,
        kind: str,  # 'claim' | 'chunk'
        text: str,
        cluster_id: str,
        source_id: str | None,
        hits: int,
        source_count: int,
        last_read_at: int,
        pinned: bool,
        archived: bool,
        reviewed_at: int | None,
        deleted_at: int | None,
    ) -> None:
        s = object.__setattr__
        s(self, "seq", seq)
        s(self, "id", id)
        s(self, "kind", kind)
        s(self, "text", text)
        s(self, "cluster_id", cluster_id)
        s(self, "source_id", source_id)
        s(self, "hits", hits)
        s(self, "source_count", source_count)
        s(self, "last_read_at", last_read_at)
        s(self, "pinned", pinned)
        s(self, "archived", archived)
        s(self, "reviewed_at", reviewed_at)
        s(self, "deleted_at", deleted_at)


class FileKey(Frozen):
    """A file a memory is about: resolved absolute path plus the file's state when the
    memory was written (size in bytes, mtime in epoch ms, sha256 hex of the content)."""

    __slots__ = ("path", "size", "mtime_ms", "sha256")

    def __init__(
        self,
        path: str,
        size: int | None = None,
        mtime_ms: int | None = None,
        sha256: str | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "path", path)
        s(self, "size", size)
        s(self, "mtime_ms", mtime_ms)
        s(self, "sha256", sha256)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.file_key`."""
        return wire.file_key(self)


class SearchResult(Frozen):
    """A page of hits plus the exact number of matches (``total``) and the time the
    search took (``took_ms``). Ranking is exact over every match: there is no window, so
    there is no ``capped`` flag to report (it is always ``False`` in JSON for
    compatibility with the seed's shape)."""

    __slots__ = ("hits", "total", "took_ms", "query", "not_counted", "unknown_clusters", "known_clusters", "notes",
                 "cluster_suggestions")

    def __init__(
        self,
        hits: tuple[Memory, ...],
        total: int,
        took_ms: float,
        query: str = "",
        #: For ``recall``: why this read could not be counted (the store stayed locked or is
        #: full); None when it was counted, or for ``search``, which never counts.
        not_counted: str | None = None,
        #: ``cluster:`` values of the query that name no cluster of the store (they match
        #: nothing), and the store's cluster ids to choose from when there are any.
        unknown_clusters: tuple[str, ...] = (),
        known_clusters: tuple[str, ...] = (),
        #: Warnings about the query's own filters (:func:`ledger.query.filter_warnings`:
        #: a ``kind:``/``type:`` value outside its closed set, a filter given twice).
        notes: tuple[dict, ...] = (),
        #: ``(value, id, label)`` for each unknown ``cluster:`` value that is a near miss of
        #: a cluster's id or label (``cluster:procedurs`` for ``proc``, "procedures").
        cluster_suggestions: tuple[tuple[str, str, str], ...] = (),
    ) -> None:
        s = object.__setattr__
        s(self, "hits", hits)
        s(self, "total", total)
        s(self, "took_ms", took_ms)
        s(self, "query", query)
        s(self, "not_counted", not_counted)
        s(self, "unknown_clusters", unknown_clusters)
        s(self, "known_clusters", known_clusters)
        s(self, "notes", notes)
        s(self, "cluster_suggestions", cluster_suggestions)

    def warnings(self) -> list[dict]:
        """What the caller should hear about although the search ran: each a dict with
        ``kind`` and ``warning`` (the message) plus its own fields.
        ``{"kind": "unknown-cluster", "warning", "known": [ids], "suggest": {value: id}}``
        when the query names clusters the store does not have (``suggest``: the near
        misses, :attr:`cluster_suggestions`, also named in the message: "Did you mean
        cluster:proc ("procedures")?"), then :attr:`notes` (``unknown-value``,
        ``repeated-filter``...); ``[]`` when all is well. The message names no surface
        (the CLI adds its command, the web its wording)."""
        if not self.unknown_clusters:
            return [dict(n) for n in self.notes]
        names = ", ".join(f'"{c}"' for c in self.unknown_clusters)
        s = "s" if len(self.unknown_clusters) > 1 else ""
        hint = ""
        if self.cluster_suggestions:
            hint = "Did you mean " + " or ".join(
                f"cluster:{i}" + (f' ("{label}")' if label.strip().lower() != i else "") + (f" for {v}" if s else "")
                for v, i, label in self.cluster_suggestions) + "? "
        msg = (f"No cluster{s} {names} in this store, so {'they match' if s else 'it matches'} nothing. {hint}"
               f"Known clusters: {', '.join(self.known_clusters) or '(none)'}.")
        return [{"kind": "unknown-cluster", "warning": msg, "known": list(self.known_clusters),
                 "suggest": {v: i for v, i, _ in self.cluster_suggestions}},
                *(dict(n) for n in self.notes)]

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.search_result`."""
        return wire.search_result(self)


class Source(Frozen):
    __slots__ = (
        "id", "filename", "ext", "cluster_id", "ingested_by", "bytes", "trust", "ingested_at",
        "dropped_at", "chunk_count", "claim_count", "hits", "path",
    )

    def __init__(
        self,
        id: str,
        filename: str,
        ext: str,
        cluster_id: str,
        ingested_by: str,
        bytes: int,
        trust: float,
        ingested_at: int,
        dropped_at: int | None,
        chunk_count: int = 0,
        claim_count: int = 0,
        hits: int = 0,
        path: str | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "filename", filename)
        s(self, "ext", ext)
        s(self, "cluster_id", cluster_id)
        s(self, "ingested_by", ingested_by)
        s(self, "bytes", bytes)
        s(self, "trust", trust)
        s(self, "ingested_at", ingested_at)
        s(self, "dropped_at", dropped_at)
        s(self, "chunk_count", chunk_count)
        s(self, "claim_count", claim_count)
        s(self, "hits", hits)
        s(self, "path", path)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.source`."""
        return wire.source(self)


class Candidate(Frozen):
    """A pair the store suspects (lexically) of contradicting. ``score`` ranks only."""

    __slots__ = ("id", "a", "b", "score", "signals", "created_at", "judged_at")

    def __init__(
        self,
        id: str,
        a: Memory,
        b: Memory,
        score: float,
        signals: tuple[str, ...],
        created_at: int,
        judged_at: int | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "a", a)
        s(self, "b", b)
        s(self, "score", score)
        s(self, "signals", signals)
        s(self, "created_at", created_at)
        s(self, "judged_at", judged_at)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.candidate`."""
        return wire.candidate(self)


class Conflict(Frozen):
    """A judged contradiction, open until a person resolves it."""

    __slots__ = (
        "id", "kind", "cluster_id", "a", "b", "detector", "note", "status", "created_at", "resolved_at",
        "resolution",
    )

    def __init__(
        self,
        id: str,
        kind: str,
        cluster_id: str,
        a: Memory,
        b: Memory,
        detector: float,
        note: str,
        status: str,  # 'open' | 'resolved' | 'dismissed'
        created_at: int,
        resolved_at: int | None = None,
        resolution: str | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "kind", kind)
        s(self, "cluster_id", cluster_id)
        s(self, "a", a)
        s(self, "b", b)
        s(self, "detector", detector)
        s(self, "note", note)
        s(self, "status", status)
        s(self, "created_at", created_at)
        s(self, "resolved_at", resolved_at)
        s(self, "resolution", resolution)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.conflict`."""
        return wire.conflict(self)


class Event(Frozen):
    __slots__ = ("id", "at", "agent", "op", "memory_id", "detail", "ms")

    def __init__(
        self,
        id: int,
        at: int,
        agent: str,
        op: str,
        memory_id: str | None,
        detail: str,
        ms: float | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "at", at)
        s(self, "agent", agent)
        s(self, "op", op)
        s(self, "memory_id", memory_id)
        s(self, "detail", detail)
        s(self, "ms", ms)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.event`."""
        return wire.event(self)


class Agent(Frozen):
    __slots__ = ("id", "label", "role", "color", "first_seen", "last_seen", "extra")

    def __init__(
        self,
        id: str,
        label: str,
        role: str,
        color: str,
        first_seen: int,
        last_seen: int,
        extra: dict | None = None,  # None: a new empty dict (the dataclass's default_factory)
    ) -> None:
        s = object.__setattr__
        s(self, "id", id)
        s(self, "label", label)
        s(self, "role", role)
        s(self, "color", color)
        s(self, "first_seen", first_seen)
        s(self, "last_seen", last_seen)
        s(self, "extra", {} if extra is None else extra)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.agent`."""
        return wire.agent(self)
