"""Strength: how much the store trusts a memory, computed on every read, never stored.

Formula and constants from the LEDGER seed (``strength.ts``; docs/originals.md §1.4, docs/design.md)::

    used         = min(1, ln(1 + hits) / ln(301))
    fresh        = exp(-days_since_last_read / 190)
    corroborated = min(1, (sources + readers - 2) / 3)
    strength     = clamp(0.17 + 0.27*used + 0.34*fresh + 0.22*corroborated, 0.04, 0.99)
    pinned claim = 0.99          chunk = clamp(source trust, 0.15, 0.97)

All values are 0–1; surfaces show :func:`shown`, ``strength * 100`` rounded half up, and
``strength:<N``/``strength:>N`` compare that same integer. This module is the one place
the constants live: ``store.sql_strength`` builds its SQL expression from them so that
ranking inside SQLite and hydration in Python agree (a test checks they do).
"""

from __future__ import annotations

import math

from .frozen import Frozen
from .vocab import DAY_MS

BASE = 0.17
W_USED = 0.27
W_FRESH = 0.34
W_CORROBORATED = 0.22
USE_CEILING = 300  # hits at which `used` saturates: ln(1+300)
FRESHNESS_TAU_DAYS = 190.0
CORROBORATION_CEILING = 3
MIN_STRENGTH = 0.04
MAX_STRENGTH = 0.99
PINNED_STRENGTH = MAX_STRENGTH
CHUNK_MIN = 0.15
CHUNK_MAX = 0.97
DEFAULT_TRUST = 0.7  # fallback when a chunk's source trust is unknown (seed)


class Factors(Frozen):
    """The three inputs of the formula, each 0–1. An immutable value
    (:class:`ledger.frozen.Frozen`, not a dataclass: this module is on the hook path,
    where importing ``dataclasses`` would cost more than the hook's whole budget)."""

    __slots__ = ("used", "fresh", "corroborated")

    def __init__(self, used: float, fresh: float, corroborated: float):
        s = object.__setattr__
        s(self, "used", used)
        s(self, "fresh", fresh)
        s(self, "corroborated", corroborated)

    def to_dict(self) -> dict:
        return {"used": self.used, "fresh": self.fresh, "corroborated": self.corroborated}


def shown(fraction: float) -> int:
    """The 0–100 integer every surface shows for a 0–1 strength or trust: ``fraction *
    100`` rounded half up (``floor(x + 0.5)``, as JavaScript's ``Math.round`` in the web
    UI), the fraction clamped to 0–1 first and NaN shown as 0.

    Not Python's ``round()``, which rounds halves to even (a trust of 0.125 would show as
    12 on the CLI and 13 in the browser). The query filters ``strength:<N`` and
    ``strength:>N`` compare this integer, so what is shown as 51 is never ``<51``:
    ``store.sqlbits.strength_filter_sql`` is the same arithmetic in SQL."""
    if fraction != fraction:  # NaN
        return 0
    return math.floor(_clamp(float(fraction), 0.0, 1.0) * 100 + 0.5)


def wire(fraction: float) -> float:
    """A 0–1 strength or trust as JSON carries it: 4 decimals, with the same
    :func:`shown` integer as the exact value. Plain ``round(x, 4)`` rounded twice with
    the 0–100 display: 0.29497 (shown 29, and ``strength:<30`` holds) became 0.295,
    which the web UI, an MCP client or a ``--json`` reader shows as 30. When 4 decimals
    would cross a display boundary, the value is cut toward the exact one instead
    (0.2949), so it is never more than 1e-4 away."""
    r = round(fraction, 4)
    if shown(r) == shown(fraction):
        return r
    return (math.floor if r > fraction else math.ceil)(fraction * 1e4) / 1e4


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def factors(*, hits: int, last_read_at: int, source_count: int, reader_count: int, now: int) -> Factors:
    """Factors at ``now`` (epoch ms). Negative hits floor at 0; a read in the future
    counts as read now; source and reader counts floor at 1 (the writer)."""
    used = _clamp(math.log(1 + max(0, hits)) / math.log(1 + USE_CEILING), 0.0, 1.0)
    days = max(0, now - last_read_at) / DAY_MS
    fresh = math.exp(-days / FRESHNESS_TAU_DAYS)
    corroborated = _clamp((max(1, source_count) + max(1, reader_count) - 2) / CORROBORATION_CEILING, 0.0, 1.0)
    return Factors(used, fresh, corroborated)


def claim_strength(f: Factors) -> float:
    """Strength of an unpinned claim from its factors, 0.04–0.99."""
    raw = BASE + W_USED * f.used + W_FRESH * f.fresh + W_CORROBORATED * f.corroborated
    return _clamp(raw, MIN_STRENGTH, MAX_STRENGTH)


def chunk_strength(trust: float | None) -> float:
    """Strength of a chunk: its source's trust clamped to 0.15–0.97 (0.7 when unknown)."""
    return _clamp(DEFAULT_TRUST if trust is None else trust, CHUNK_MIN, CHUNK_MAX)


def strength(
    *,
    kind: str,
    pinned: bool,
    hits: int,
    last_read_at: int,
    source_count: int,
    reader_count: int,
    trust: float | None,
    now: int,
) -> tuple[float, Factors]:
    """Strength (0–1) and factors of one memory at ``now``. Chunks are checked before
    pins, as in the seed; factors are returned for chunks too so a UI can explain them."""
    f = factors(hits=hits, last_read_at=last_read_at, source_count=source_count, reader_count=reader_count, now=now)
    if kind == "chunk":
        return chunk_strength(trust), f
    if pinned:
        return PINNED_STRENGTH, f
    return claim_strength(f), f


def of_row(r, now: int) -> tuple[float, Factors]:
    """Strength and factors of a memory row at ``now``: any mapping with ``pinned``,
    ``hits``, ``last_read_at``, ``source_count``, ``reader_count`` and optionally
    ``kind`` (default ``claim``) and ``trust`` (a chunk's source trust). The one place
    both the store's hydration and the hook path's fact rows turn a row into strength."""
    keys = r.keys()
    return strength(
        kind=r["kind"] if "kind" in keys else "claim", pinned=bool(r["pinned"]), hits=r["hits"],
        last_read_at=r["last_read_at"], source_count=r["source_count"], reader_count=r["reader_count"],
        trust=r["trust"] if "trust" in keys else None, now=now,
    )


def days_until(f: Factors, target: float, elapsed_days: float = 0.0) -> float:
    """Days of further neglect before an unpinned claim with factors ``f`` falls to
    ``target`` (0–1). ``math.inf`` when it never will, 0 when it already has. Seed's
    ``daysUntil``."""
    h = (target - (BASE + W_USED * f.used + W_CORROBORATED * f.corroborated)) / W_FRESH
    if h <= 0:
        return math.inf
    if h >= 1:
        return 0.0
    return max(0.0, -FRESHNESS_TAU_DAYS * math.log(h) - elapsed_days)
