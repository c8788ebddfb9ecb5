"""The search job of :class:`~ledger.store.Store` (a mixin): exact ranked search over
every match, relevance from :mod:`.textindex`, score and strength computed in SQLite."""

from __future__ import annotations

from .. import strength as S
from ..errors import InvalidInput
from ..models import Memory
from ..query import Query
from ..vocab import RELEVANCE_WEIGHT, SORTS, STRENGTH_WEIGHT
from . import textindex
from .rows import MEMORY_COLS, MEMORY_FROM, batches, read_snapshot
from .sqlbits import filter_sql, strength_sql

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    from typing import Sequence

_MAX_STRENGTH = max(S.MAX_STRENGTH, S.PINNED_STRENGTH, S.CHUNK_MAX)  # for the page bound in search


class SearchMixin:
    """``search`` for :class:`~ledger.store.Store`; uses its ``_conn``, ``_hydrate`` and
    ``texts_asof``."""

    def search(
        self,
        q: Query,
        now: int,
        *,
        mode: str = "hybrid",
        limit: int = 50,
        offset: int = 0,
        kind: str = "all",
        sort: str | None = None,
        direction: str = "desc",
        include_archived: bool = False,
        pending_only: bool = False,
        pinned_only: bool = False,
        conflicted_only: bool = False,
    ) -> tuple[list[Memory], int]:
        """Exact ranked search over every match; returns ``(page, total)``.

        Relevance (0–1) is BM25 over the query's terms and, outside ``keyword`` mode,
        their vocabulary neighbours within a few edits (×0.6), plus compounds and CJK
        runs from the side index: ``p/(p+1)``, see :func:`.textindex.fill_relevance`
        and docs/search.md. Score = 0.75·relevance + 0.25·strength (docs/originals.md §1.6), computed
        inside SQLite for every matching row, so the page and ``total`` are exact at any
        store size. With no free text, relevance is 1 and the default sort is strength.
        """
        params: dict = {"now": now}
        where = filter_sql(q, params, kind=kind, include_archived=include_archived, pending_only=pending_only,
                           pinned_only=pinned_only, conflicted_only=conflicted_only)
        st = strength_sql()
        has_text = bool(q.terms)
        sort = sort or ("relevance" if has_text else "strength")
        if sort not in SORTS:
            raise InvalidInput(f'Unknown sort "{sort}". Use one of: {", ".join(SORTS)}.')
        if q.strength is not None:
            params["smin"] = q.strength
            where.append(f"{st} {'<' if q.strength_op == '<' else '>'} :smin")
        order_col = {"relevance": "score", "strength": "st", "hits": "m.hits", "created": "m.created_at", "last": "m.last_read_at"}[sort]
        d = "ASC" if direction == "asc" else "DESC"
        params["limit"], params["offset"] = max(0, int(limit)), max(0, int(offset))
        cond = " AND ".join(where) or "1"
        # One read snapshot for the match set, the count and the page.
        with read_snapshot(self._conn):
            if has_text:
                if not self._fill_relevance(q.terms, mode):
                    return [], 0
                # The match set drives the join (CROSS JOIN fixes the order): without it
                # the planner walks every live memory by index and probes the matches.
                src = "temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id"
                rel = "rel.r"
            else:
                src = "memories m LEFT JOIN sources s ON s.id = m.source_id"
                rel = "1.0"
            # total and page in two light queries: a window count(*) over the full rows
            # made SQLite materialise every match with its text before sorting; here
            # the sort is bounded by LIMIT and only the page is read in full.
            total = self._conn.execute(f"SELECT count(*) FROM {src} WHERE {cond}", params).fetchone()[0]
            if not total:
                return [], 0
            page = None
            if has_text and sort == "relevance" and d == "DESC" and params["limit"]:
                page = self._bounded_page(st, cond, params)
            if page is None:
                page = self._conn.execute(
                    f"""SELECT m.seq, {st} AS st, {_score_sql(rel, st)} AS score
                        FROM {src} WHERE {cond}
                        ORDER BY {order_col} {d}, m.seq {d}
                        LIMIT :limit OFFSET :offset""",
                    params,
                ).fetchall()
            if not page:
                return [], total
            seqs = [r[0] for r in page]
            by_seq = {}
            for part in batches(seqs, 500):
                marks = ",".join("?" * len(part))
                by_seq.update((r["seq"], r) for r in self._conn.execute(f"SELECT {MEMORY_COLS} FROM {MEMORY_FROM} WHERE m.seq IN ({marks})", part))
            rows = [by_seq[s] for s in seqs]
            scores = {by_seq[r[0]]["id"]: r[2] for r in page}
            texts = self.texts_asof([r["id"] for r in rows], q.asof_ms) if q.asof_ms is not None else None
            return self._hydrate(rows, now, scores, texts), total

    def _bounded_page(self, st: str, cond: str, params: dict) -> list | None:
        """The relevance page, joining only the matches that can reach it; None when
        no bound is found (the caller then ranks every match).

        Score = 0.75·r + 0.25·strength with strength ≤ ``_MAX_STRENGTH``. First the
        page is ranked among the few highest-r matches; the score θ of its last row is
        a lower bound on the true last score (more rows can only raise it). A match
        with 0.75·r + 0.25·_MAX_STRENGTH < θ can therefore neither enter nor tie into
        the page, so the exact page is the page ranked among the matches with
        r ≥ (θ − 0.25·_MAX_STRENGTH) / 0.75 (a hair lower, for float rounding). At 1M
        memories that is a few per cent of the matches."""
        c = self._conn
        want = params["limit"] + params["offset"]
        probe = c.execute(
            f"""SELECT m.seq, {st} AS st, {_score_sql("rel.r", st)} AS score
                FROM (SELECT seq, r FROM temp.ledger_rel ORDER BY r DESC LIMIT {int(max(64, 4 * want))}) rel
                CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id
                WHERE {cond}
                ORDER BY score DESC, m.seq DESC
                LIMIT :limit OFFSET :offset""",
            params,
        ).fetchall()
        if len(probe) < params["limit"]:
            return None  # the filters left too few of the best matches to bound anything
        floor = (probe[-1][2] - STRENGTH_WEIGHT * _MAX_STRENGTH) / RELEVANCE_WEIGHT - 1e-9
        return c.execute(
            f"""SELECT m.seq, {st} AS st, {_score_sql("rel.r", st)} AS score
                FROM temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id
                WHERE rel.r >= :rel_floor AND {cond}
                ORDER BY score DESC, m.seq DESC
                LIMIT :limit OFFSET :offset""",
            {**params, "rel_floor": floor},
        ).fetchall()

    def _fill_relevance(self, terms: Sequence[str], mode: str) -> bool:
        """Fill ``temp.ledger_rel(seq, r)`` with every match's relevance; False if none
        (:func:`.textindex.fill_relevance`)."""
        return textindex.fill_relevance(self._conn, terms, mode)


def _score_sql(relevance: str, strength: str) -> str:
    """The search score as SQL, from :data:`ledger.vocab.RELEVANCE_WEIGHT` and
    :data:`ledger.vocab.STRENGTH_WEIGHT`."""
    return f"{RELEVANCE_WEIGHT!r} * {relevance} + {STRENGTH_WEIGHT!r} * {strength}"

