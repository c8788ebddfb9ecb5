"""SQL fragments built from pure definitions, so the formulas live in one place.

* :func:`strength_sql` renders :mod:`ledger.strength` as a SQLite expression, letting the
  ranking run entirely inside SQLite (exact top-k over every match, no Python loop).
* :func:`strength_filter_sql` is the ``strength:`` filter on the shown 0-100 integer.
* :func:`filter_sql` compiles a parsed :class:`~ledger.query.Query` into a WHERE clause
  with named parameters.
"""

from __future__ import annotations

import math

from .. import strength as S
from ..clock import DAY_MS

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only: remember and show never parse a query
    from ..query import Query

LIVE = "m.deleted_at IS NULL"


def strength_sql(m: str = "m", s: str = "s", now: str = ":now") -> str:
    """SQLite expression for strength (0–1) of memory alias ``m`` joined to its source
    alias ``s`` (LEFT JOIN), at the bound parameter ``now`` (epoch ms). Mirrors
    :func:`ledger.strength.strength` exactly; ``tests/test_strength.py`` checks both agree."""
    used = f"min(1.0, ln(1 + max(0, {m}.hits)) / {math.log(1 + S.USE_CEILING)!r})"
    fresh = f"exp(-max(0, {now} - {m}.last_read_at) / {S.FRESHNESS_TAU_DAYS * DAY_MS!r})"
    corr = f"min(1.0, max(0.0, (max(1, {m}.source_count) + max(1, {m}.reader_count) - 2) / {float(S.CORROBORATION_CEILING)!r}))"
    claim = f"min({S.MAX_STRENGTH!r}, max({S.MIN_STRENGTH!r}, {S.BASE!r} + {S.W_USED!r} * {used} + {S.W_FRESH!r} * {fresh} + {S.W_CORROBORATED!r} * {corr}))"
    chunk = f"min({S.CHUNK_MAX!r}, max({S.CHUNK_MIN!r}, coalesce({s}.trust, {S.DEFAULT_TRUST!r})))"
    return f"(CASE WHEN {m}.kind = 'chunk' THEN {chunk} WHEN {m}.pinned <> 0 THEN {S.PINNED_STRENGTH!r} ELSE {claim} END)"


def strength_filter_sql(q: Query, params: dict, st: str) -> str | None:
    """The WHERE condition of ``q``'s ``strength:<N`` / ``strength:>N`` filter on the
    strength expression ``st`` (:func:`strength_sql`), or None without one; binds ``:sn``.

    It compares the integer people see, :func:`ledger.strength.shown` (``floor(strength *
    100 + 0.5)``, halves up), not the raw 0-1 value: a memory at 0.507 is shown as 51,
    so ``strength:<51`` leaves it out and ``strength:>50`` keeps it. ``floor`` and the
    arithmetic are the same on SQLite and PostgreSQL (SQLite's ``round()`` also rounds
    halves away from zero, but floor keeps one formula for both engines and Python).
    """
    if q.strength is None:
        return None
    params["sn"] = round(q.strength * 100)  # the parser stores N as N/100: back to N exactly
    return f"floor({st} * 100 + 0.5) {'<' if q.strength_op == '<' else '>'} :sn"


def filter_sql(
    q: Query,
    params: dict,
    *,
    kind: str = "all",
    include_archived: bool = False,
    include_dropped: bool = False,
    pending_only: bool = False,
    pinned_only: bool = False,
    conflicted_only: bool = False,
) -> list[str]:
    """WHERE conditions (to be AND-ed) for alias ``m``; fills ``params``.

    ``asof:T`` shows what the store held at T: created by then and not dropped by then.
    """
    where: list[str] = []
    if q.asof_ms is not None:
        params["asof"] = q.asof_ms
        where.append("m.created_at <= :asof AND (m.deleted_at IS NULL OR m.deleted_at > :asof)")
    elif not include_dropped:
        where.append(LIVE)
    if kind in ("claim", "chunk"):
        params["kind_in"] = kind
        where.append("m.kind = :kind_in")
    if q.kinds:
        where.append("m.kind IN (" + _bind(params, "qk", q.kinds) + ")")
    if not include_archived:
        where.append("m.archived = 0")
    if pending_only:
        where.append("m.reviewed_at IS NULL AND m.kind = 'claim'")
    if pinned_only:
        where.append("m.pinned = 1")
    if conflicted_only:
        where.append("EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND (c.a = m.id OR c.b = m.id))")
    if q.clusters:
        where.append("m.cluster_id IN (" + _bind(params, "qc", q.clusters) + ")")
    if q.types:
        where.append("m.origin IN (" + _bind(params, "qt", q.types) + ")")
    if q.agents:
        where.append("EXISTS (SELECT 1 FROM memory_readers r WHERE r.memory_id = m.id AND r.agent_id IN (" + _bind(params, "qa", q.agents) + "))")
    if q.before_ms is not None:
        params["before"] = q.before_ms
        where.append("m.created_at < :before")
    if q.after_ms is not None:
        params["after"] = q.after_ms
        where.append("m.created_at > :after")
    return where


def _bind(params: dict, prefix: str, values: tuple[str, ...]) -> str:
    names = []
    for i, v in enumerate(values):
        name = f"{prefix}{i}"
        params[name] = v
        names.append(":" + name)
    return ", ".join(names)
