"""JSON views the screens need, built only from :class:`ledger.service.Ledger` calls.

Each function takes an open Ledger and returns JSON-ready dicts (camelCase, the
``to_dict()`` shapes of :mod:`ledger.models`). Nothing here counts as a retrieval: the
facade's ``search``/``get``/``related`` never touch hits, last read or readers.
Stdlib only, so the views are testable without Starlette.
"""

from __future__ import annotations

from typing import Iterable

from .. import __version__, wire
from .. import strength as S
from ..query import KEY_HINTS, KEYS
from ..service import BULK_OPS, CONFLICT_KINDS, MODES, RESOLUTIONS, REVIEW_ACTIONS, Ledger
from ..vocab import SORTS  # noqa: E402,F401 - re-exported for the API's validation

NODE_TEXT = wire.NODE_TEXT  # re-exported; the node shape is decided in ledger.wire
graph_node = wire.graph_node  # re-exported for callers of the old name


def read_only(led: Ledger) -> dict | None:
    """``{"why": str, "message": str}`` when the store is read-only for this server
    (:meth:`ledger.store.Store.write_refusal`: a read-only file, folder or mount, a
    PostgreSQL role or connection that may only read), else None.
    ``message`` is the UI's notice: what still works, what is off, what to do."""
    why = led.store.write_refusal()
    if why is None:
        return None
    if led.store.engine == "postgresql":
        todo = ("serve it as a database role that may write the store's tables (or have their owner GRANT INSERT, "
                "UPDATE, DELETE on them to this role), then reload this page.")
    else:
        todo = ("make the store file and its folder writable for the user running ledger serve (or serve a writable "
                "copy), then restart ledger serve.")
    return {"why": why, "message": (
        f"This store is read-only ({why}). Browsing, search and export work; changes (edit, pin, archive, drop, "
        f"review, resolve, trust, new clusters) are turned off. To make changes, {todo}")}


def meta(led: Ledger) -> dict:
    """Everything static the front end needs: query keys with hints, presets, enums;
    ``readOnly`` (:func:`read_only`) when the store cannot be written."""
    return {
        "version": __version__,
        "db": str(led.path),
        "readOnly": read_only(led),
        "keys": list(KEYS),
        "keyHints": dict(KEY_HINTS),
        "modes": list(MODES),
        "sorts": list(SORTS),
        "resolutions": list(RESOLUTIONS),
        "reviewActions": list(REVIEW_ACTIONS),
        "bulkOps": list(BULK_OPS) + ["export"],
        "conflictKinds": list(CONFLICT_KINDS),
        "presets": {
            "type": ["chat", "doc"],
            "kind": ["claim", "chunk"],
            "strength": ["<20", "<40", ">70", ">90"],
            "asof": ["30d", "90d", "1y", "2026-01-01"],
            "after": ["30d", "90d", "1y", "2026-01-01"],
            "before": ["30d", "90d", "1y", "2026-01-01"],
        },
        "strength": {
            "base": S.BASE, "wUsed": S.W_USED, "wFresh": S.W_FRESH, "wCorroborated": S.W_CORROBORATED,
            "useCeiling": S.USE_CEILING, "tauDays": S.FRESHNESS_TAU_DAYS, "corroborationCeiling": S.CORROBORATION_CEILING,
            "pinned": S.PINNED_STRENGTH, "chunkMin": S.CHUNK_MIN, "chunkMax": S.CHUNK_MAX,
        },
    }


def stats(led: Ledger, server_started_at: int, now: int, *, clusters: bool = True) -> dict:
    """``Ledger.stats()`` plus server uptime and ``readOnly`` (:func:`read_only`); with
    ``clusters`` also the cluster list (with live counts, which costs a scan: the UI's
    5-second poll leaves it out)."""
    d = led.stats()
    if clusters:
        d["clusters"] = [c.to_dict() for c in led.clusters()]
    d["serverStartedAt"] = server_started_at
    d["uptimeMs"] = max(0, now - server_started_at)
    d["version"] = __version__
    d["readOnly"] = read_only(led)
    return d


def memory_detail(led: Ledger, memory_id: str) -> dict:
    m = led.get(memory_id)
    return {"memory": m.to_dict(), "related": [r.to_dict() for r in led.related(m.id, 5)]}


def review_bundle(led: Ledger, limit: int = 50) -> dict:
    q = led.review_queue(limit)
    cands = led.candidates(20)
    st = led.stats()
    return {
        "claims": [m.to_dict() for m in q["claims"]],
        "conflicts": [c.to_dict() for c in q["conflicts"]],
        "candidates": [c.to_dict() for c in cands],
        "claimCount": q["claimCount"],
        "conflictCount": q["conflictCount"],
        "candidateCount": q["candidateCount"],
        "waiting": q["waiting"],
        "claimsTotal": st["claims"],
        "pendingTotal": st["pending"],
    }


def sources(led: Ledger, preview: int = 4) -> dict:
    """Sources newest first, plus totals for the summary strip. With ``preview`` > 0
    each also carries ``chunkPreview`` (its first ``preview`` chunks) and ``claimList``
    (claims distilled from it), read for all sources together
    (:meth:`Ledger.source_previews`); the UI asks for ``preview=0`` and loads one
    source's detail when a row is expanded."""
    out = []
    listed = led.sources()
    previews = led.source_previews([s.id for s in listed], preview) if preview > 0 else {}
    for s in listed:
        d = s.to_dict()
        if preview > 0:
            d["chunkPreview"] = [wire.chunk_row(m) for m in previews[s.id]["chunks"]]
            d["claimList"] = [wire.claim_row(m) for m in previews[s.id]["claims"]]
        out.append(d)
    return {
        "sources": out,
        "totals": {
            "documents": len(out),
            "chunks": sum(s["chunkCount"] for s in out),
            "claims": sum(s["claimCount"] for s in out),
            "bytes": sum(s["bytes"] or 0 for s in out),
        },
    }


def source_detail(led: Ledger, source_id: str, preview: int) -> dict:
    detail = led.source_detail(source_id, preview)
    d = detail["source"].to_dict()
    d["chunkPreview"] = [wire.chunk_row(m) for m in detail["chunks"]]
    d["claimList"] = [wire.claim_row(m) for m in detail["claims"]]
    return d


def graph(led: Ledger, query: str, *, limit: int, kind: str = "claim", **flags) -> dict:
    """Nodes (one per memory matching ``query``; ``asof:`` gives a true as-of view that
    includes memories dropped since), the links among them (explicit links and open
    conflicts), the cluster list for colours and legends, and the search's
    ``warnings`` (``[{"kind", "warning", ...}]``, as ``/api/search`` gives them)."""
    res = led.search(query, limit=limit, kind=kind, **flags)
    nodes = [wire.graph_node(m) for m in res.hits]
    ids = {n["id"] for n in nodes}
    links = [{"a": a, "b": b, "kind": "link"} for a, b in _links(led, ids)]
    seen = {(l["a"], l["b"]) for l in links}
    for m in res.hits:
        other = m.conflict_with
        if other and other in ids:
            a, b = sorted((m.id, other))
            if (a, b) not in seen:
                seen.add((a, b))
                links.append({"a": a, "b": b, "kind": "conflict"})
    return {
        "nodes": nodes,
        "links": links,
        "clusters": [c.to_dict() for c in led.clusters()],
        "total": res.total,
        "capped": res.total > len(nodes),
        "tookMs": round(res.took_ms, 2),
        # What the search said about the query although it ran (wire.search_result's
        # list): the Canvas shows them as Browse does.
        "warnings": res.warnings(),
    }


def _links(led: Ledger, ids: Iterable[str]) -> list[tuple[str, str]]:
    """Stored links whose two ends are both in ``ids``."""
    ids = set(ids)
    if not ids:
        return []
    return [(a, b) for a, b in led.links(sorted(ids)) if a in ids and b in ids]

