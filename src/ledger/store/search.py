"""The search job of :class:`~ledger.store.Store` (a mixin): exact ranked search over
every match, relevance from :mod:`.textindex`, score and strength computed in SQLite."""

from __future__ import annotations

from .. import strength as S
from ..errors import InvalidInput
from ..models import Memory
from ..vocab import RELEVANCE_WEIGHT, SORTS, STRENGTH_WEIGHT
from . import textindex
from .rows import MEMORY_COLS, MEMORY_FROM, batches, read_snapshot
from .sqlbits import LIVE, filter_sql, strength_filter_sql, strength_sql

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    from typing import Sequence

    from ..query import Query  # annotations only: remember and show never parse a query

_MAX_STRENGTH = max(S.MAX_STRENGTH, S.PINNED_STRENGTH, S.CHUNK_MAX)  # for the page bound in search
# The top-k bound is only tried when the most common exact phrase can add less than this
# to p (it is then held by more than about a third of the rows): with a larger share,
# r = p/(p+1) of a row holding only that phrase may reach 0.5 and, with strength up to
# 1, rank anywhere, so the probe would be wasted (bench/scale.py, common-term queries).
# A heuristic for when to try, not part of the proof: the bound is checked either way.
_TRY_BOUND_BELOW = 1.0
# The filters of a search without filters: live, not archived (.sqlbits.filter_sql). Its
# matches are counted without a memory row each (SearchMixin._count_visible).
_DEFAULT_WHERE = [LIVE, "m.archived = 0"]
# A memory these filters hide; the partial index memories_hidden (m016) holds exactly these.
_HIDDEN = "(deleted_at IS NOT NULL OR archived <> 0)"
# SearchMixin._bounded_page ranks the page first among this many highest-r matches. Each
# match it joins costs a memory row, read from disk in a fresh `ledger recall`. More
# rows in the probe find a higher θ, so fewer rows pass the floor: at 100k memories
# (bench/scale.py queries, limit 10, median) 64 probed rows left 1,164 above the floor
# (1,228 joined), 256 left 458 (714 joined), 512 left 447; in a fresh process the two
# statements took 5.4 ms with 64 and 4.7 ms with 256 (docs/benchmarks.md, "Probe size").
# Those counts joined the probe's rows twice; since the probe's rows are kept, a row is
# joined once (about 460 at the median with 256).
_PROBE_ROWS = 256


class SearchMixin:
    """``search`` for :class:`~ledger.store.Store`; uses its ``_conn``, ``_hydrate`` and
    ``texts_asof``."""

    #: How the last :meth:`search` ranked: ``"full"`` (every match scored), ``"bounded"``
    #: (only the matches that can reach the page, :meth:`_bounded_fill`) or ``"no text"``.
    #: Read by bench/locomo.py and bench/scale.py to report how often each path runs.
    search_path = ""
    #: How the last :meth:`search` counted its matches: ``"index"`` (the matches less the
    #: hidden memories among them, :meth:`_count_visible`) or ``"join"`` (every match
    #: joined to its memory row and filtered). For tests and benches.
    search_count = ""

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
            where.append(strength_filter_sql(q, params, st))
        order_col = {"relevance": "score", "strength": "st", "hits": "m.hits", "created": "m.created_at", "last": "m.last_read_at"}[sort]
        d = "ASC" if direction == "asc" else "DESC"
        params["limit"], params["offset"] = max(0, int(limit)), max(0, int(offset))
        cond = " AND ".join(where) or "1 = 1"
        # One read snapshot for the match set, the count and the page.
        with read_snapshot(self._conn):
            count_src = None
            if has_text:
                # The match set drives the join (CROSS JOIN fixes the order): without it
                # the planner walks every live memory by index and probes the matches.
                src = "temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id"
                rel = "rel.r"
                parts = textindex.expression_parts(self._conn, q.terms, mode)
                every = None
                # The bound is proven for FTS5's BM25 (docs/search.md "Top-k"); PostgreSQL's
                # relevance is another function, so it always scores every match.
                if sort == "relevance" and d == "DESC" and params["limit"] and q.asof_ms is None \
                        and not getattr(self._conn, "is_postgres", False):
                    every = self._bounded_fill(parts, st, cond, params)
                if every is None:
                    self.search_path = "full"
                    found = self._fill_relevance(q.terms, mode, parts)
                    if q.asof_ms is not None:  # match the texts memories had then (docs/search.md "asof")
                        found = textindex.relevance_asof(self._conn, parts, q.asof_ms)
                    if not found:
                        return [], 0
                else:
                    self.search_path = "bounded"
                    # temp.ledger_rel holds only the rows that can reach the page; the
                    # total counts every match, read from the index without scoring.
                    params["every"] = every
                    count_src = ("(SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH :every) rel "
                                 "CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id")
            else:
                self.search_path = "no text"
                src = "memories m LEFT JOIN sources s ON s.id = m.source_id"
                rel = "1.0"
                if q.strength is None:  # only a strength filter reads the source (trust): count from an index alone
                    count_src = "memories m"
            # total and page in two light queries: a window count(*) over the full rows
            # made SQLite materialise every match with its text before sorting; here
            # the sort is bounded by LIMIT and only the page is read in full.
            total = None
            if has_text and where == _DEFAULT_WHERE and not getattr(self._conn, "is_postgres", False):
                total = self._count_visible(params.get("every"))
            self.search_count = "join" if total is None else "index"
            if total is None:
                total = self._conn.execute(f"SELECT count(*) FROM {count_src or src} WHERE {cond}", params).fetchone()[0]
            if not total:
                return [], 0
            page = None
            if has_text and sort == "relevance" and d == "DESC" and params["limit"]:
                page = self._bounded_page(st, cond, params)
            elif not has_text and sort == "strength" and d == "DESC" and params["limit"] and not q.has_filters \
                    and not (pending_only or pinned_only or conflicted_only) and kind == "all":
                page = self._strength_page(st, cond, params)
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

    def _count_visible(self, every: str | None) -> int | None:
        """The number of matches that are live and not archived (the default filters),
        without reading a memory row per match; None when the hidden rows are too many
        for that to pay (the caller then joins every match to ``memories``).

        The matches are the rows of ``temp.ledger_rel`` or, when ``every`` is given (the
        top-k bound left rows unscored), the rows of the word index matching ``every``.
        Every row of the word index is a memory's (``seq`` = rowid; the rows go with
        their memory, ``Store._index``), so the visible matches are the matches minus
        those among the hidden memories (dropped, pending or archived), which the
        partial index ``memories_hidden`` (migration ``m016_hidden_index``) lists."""
        c = self._conn
        if every is None:
            matches = c.execute("SELECT count(*) FROM temp.ledger_rel").fetchone()[0]
        else:
            matches = c.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (every,)).fetchone()[0]
        # A hidden memory costs one probe here, a match one memory row on the join path.
        hidden = c.execute(f"SELECT count(*) FROM (SELECT 1 FROM memories INDEXED BY memories_hidden WHERE {_HIDDEN} LIMIT ?)",
                           (matches // 2 + 1,)).fetchone()[0]
        if not hidden:
            return matches
        if hidden > matches // 2:
            return None
        if every is None:
            member = "EXISTS (SELECT 1 FROM temp.ledger_rel rel WHERE rel.seq = m.seq)"
            args: tuple = ()
        else:
            member = "m.seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)"
            args = (every,)
        gone = c.execute(f"SELECT count(*) FROM memories m INDEXED BY memories_hidden WHERE {_HIDDEN} AND {member}", args).fetchone()[0]
        return matches - gone

    def _bounded_page(self, st: str, cond: str, params: dict) -> list | None:
        """The relevance page, joining only the matches that can reach it; None when
        no bound is found (the caller then ranks every match).

        Score = 0.75·r + 0.25·strength with strength ≤ ``_MAX_STRENGTH``. First the
        ``k`` highest-r matches (``_PROBE_ROWS``, or 4 × limit + offset if more; ties
        broken by seq, highest first) are joined and scored: the probe. The score θ of
        the page's last row among them is a lower bound on the true last score (more
        rows can only raise it), so a match with 0.75·r + 0.25·_MAX_STRENGTH < θ can
        neither enter nor tie into the page: the page is ranked among the probe and the
        matches after it in (r, seq) order with r ≥ (θ − 0.25·_MAX_STRENGTH) / 0.75 (a
        hair lower, for float rounding). At 1M memories that is a few per cent of the
        matches. The probe's rows are scored once and kept in Python, not joined a
        second time by the second statement (at 100k they were a third of the rows
        joined). Returns ``(seq, st, score)`` rows ordered by score, then seq, descending."""
        c = self._conn
        want = params["limit"] + params["offset"]
        k = int(max(_PROBE_ROWS, 4 * want))
        # Every probe row comes back, with whether the filters keep it: the last one
        # marks where the probe ends in (r, seq) order, whether or not it is kept.
        probe = c.execute(
            f"""SELECT rel.seq, {st} AS st, {_score_sql("rel.r", st)} AS score, rel.r,
                       CASE WHEN m.seq IS NOT NULL AND {cond} THEN 1 ELSE 0 END AS kept
                FROM (SELECT seq, r FROM temp.ledger_rel ORDER BY r DESC, seq DESC LIMIT {k}) rel
                LEFT JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id""",
            params,
        ).fetchall()
        kept = [(r[0], r[1], r[2]) for r in probe if r[4]]
        kept.sort(key=_rank_key)
        if len(probe) < k:
            return kept[params["offset"]:want]  # the probe held every match
        if len(kept) < want:
            return None  # the filters left too few of the best matches to bound anything
        floor = (kept[want - 1][2] - STRENGTH_WEIGHT * _MAX_STRENGTH) / RELEVANCE_WEIGHT - 1e-9
        last = max(probe, key=lambda r: (-r[3], -r[0]))  # the probe's last row in (r, seq) order
        rest = c.execute(
            f"""SELECT m.seq, {st} AS st, {_score_sql("rel.r", st)} AS score
                FROM temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id
                WHERE rel.r >= :rel_floor AND (rel.r < :probe_r OR (rel.r = :probe_r AND rel.seq < :probe_seq)) AND {cond}
                ORDER BY score DESC, m.seq DESC
                LIMIT :want""",
            {**params, "rel_floor": floor, "probe_r": last[3], "probe_seq": last[0], "want": want},
        ).fetchall()
        page = kept[:want] + [(r[0], r[1], r[2]) for r in rest]
        page.sort(key=_rank_key)
        return page[params["offset"]:want]

    def _strength_page(self, st: str, cond: str, params: dict) -> list | None:
        """Browse's first page (no text, no filter, strength order) without computing
        strength for every live memory; None when the bound does not apply (the caller
        then ranks every row). The order is strength descending, then seq descending.

        A chunk's strength is its source's trust, clamped: one value per source, so the
        chunks fall into a few levels (one per distinct clamped trust). Every claim is
        ranked (claims are found by index), and from each level, highest first, the
        ``want`` = limit + offset chunks of highest seq, until ``want`` chunks are in hand.
        A chunk left out has ``want`` candidates above it: chunks of its own level with
        a higher seq, or chunks of a level above. So the page ranked among the
        candidates is the page ranked among all rows. Each level is read backwards
        along seq (SQLite: NOT INDEXED, the table's own order), stopping after ``want``
        rows, instead of gathering every chunk of the level's sources and sorting them
        (bench/web.py: 0.8 ms against 31 ms at 100k memories). Chunks without a source
        (none are written today) would fit no level: then the caller ranks every row."""
        want = params["limit"] + params["offset"]
        c = self._conn
        if want > 5000 or c.execute("SELECT 1 FROM memories WHERE source_id IS NULL AND kind = 'chunk' LIMIT 1").fetchone():
            return None
        level = f"min({S.CHUNK_MAX!r}, max({S.CHUNK_MIN!r}, coalesce(s.trust, {S.DEFAULT_TRUST!r})))"  # = strength_sql's chunk
        levels: dict[float, list[str]] = {}
        for lv, sid in c.execute(f"SELECT {level}, s.id FROM sources s"):
            levels.setdefault(lv, []).append(sid)
        if len(levels) > 8:
            return None  # many distinct trusts: a read per level would cost more than ranking every row
        cols = f"m.seq, {st} AS st, {_score_sql('1.0', st)} AS score"
        rows = c.execute(f"SELECT {cols} FROM memories m LEFT JOIN sources s ON s.id = m.source_id WHERE {cond} AND m.kind = 'claim'",
                         params).fetchall()
        hint = "" if getattr(c, "is_postgres", False) else " NOT INDEXED"
        chunks = 0
        for lv in sorted(levels, reverse=True):
            if chunks >= want:
                break
            ids = levels[lv]
            for part in batches(ids, 500):
                p = {**params, "want": want, **{f"sl{i}": v for i, v in enumerate(part)}}
                marks = ", ".join(f":sl{i}" for i in range(len(part)))
                got = c.execute(
                    f"""SELECT {cols} FROM memories m{hint} LEFT JOIN sources s ON s.id = m.source_id
                        WHERE {cond} AND m.kind = 'chunk' AND m.source_id IN ({marks})
                        ORDER BY m.seq DESC LIMIT :want""", p).fetchall()
                rows += got
                chunks += len(got)
        rows.sort(key=lambda r: (-r[1], -r[0]))
        return rows[params["offset"]:want]

    def _bounded_fill(self, parts, st: str, cond: str, params: dict) -> str | None:
        """Top-k without scoring every match (docs/search.md "Top-k"): fill
        ``temp.ledger_rel`` with only the matches that can reach the relevance page and
        return a MATCH expression for every match (for the total), or None when no bound
        is proven (the caller then scores every match).

        Score = 0.75·r + 0.25·strength, r = p/(p+1) increasing in p = -bm25, strength ≤
        ``_MAX_STRENGTH``, and each exact phrase adds less than its
        :func:`.textindex.phrase_bounds` bound to p. (1) Probe: the rarest phrases,
        holding at least 4× the page, are scored alone; r from them is at most the true
        r, so the score θ of the page's last row among them is at most the true last
        score of the page. (2) The most common phrases L whose bounds sum to U with
        0.75·U/(U+1) + 0.25·_MAX_STRENGTH < θ are left out: a row holding only phrases
        of L scores below θ, so it can neither enter nor tie into the page. (3) Only the
        rows holding another exact phrase (or matching only through fuzzy neighbours)
        are scored, with the full expression. Queries with compounds or CJK runs (side
        index) and queries of one exact phrase always take the full path."""
        exact, fuzzy, side = parts
        if side or len(exact) < 2:
            return None
        c = self._conn
        want = params["limit"] + params["offset"]
        bounds = sorted(textindex.phrase_bounds(c, exact), key=lambda b: (-b[2], b[1], b[0]))  # rarest first
        if bounds[-1][2] >= _TRY_BOUND_BELOW:
            return None  # no phrase is common enough for the bound to hold: skip the probe
        held, j = 0, 0
        while j < len(bounds) - 1 and held < 4 * want:
            held += bounds[j][1]
            j += 1
        textindex.fill_lower_bounds(c, [b[0] for b in bounds[:j]])
        row = c.execute(
            f"""SELECT {_score_sql("rel.r", st)} AS score FROM temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq
                LEFT JOIN sources s ON s.id = m.source_id WHERE {cond}
                ORDER BY score DESC, m.seq DESC LIMIT 1 OFFSET :probe_at""",
            {**params, "probe_at": want - 1},
        ).fetchone()
        if row is None:
            return None  # too few rows hold the rare phrases (after filters) to bound anything
        theta = row[0]
        left_out, u = 0, 0.0
        for _, _, bound in reversed(bounds):
            if RELEVANCE_WEIGHT * (u + bound) / (u + bound + 1.0) + STRENGTH_WEIGHT * _MAX_STRENGTH >= theta - 1e-9:
                break
            u += bound
            left_out += 1
        if not left_out or left_out == len(bounds):
            return None
        textindex.fill_essential(c, exact, [b[0] for b in bounds[: len(bounds) - left_out]], fuzzy)
        return textindex.match_any(exact + fuzzy)

    def _fill_relevance(self, terms: Sequence[str], mode: str, parts=None) -> bool:
        """Fill ``temp.ledger_rel(seq, r)`` with every match's relevance; False if none
        (:func:`.textindex.fill_relevance`)."""
        return textindex.fill_relevance(self._conn, terms, mode, parts)


def _rank_key(row) -> tuple:
    """Sort key of a ``(seq, st, score)`` row for the relevance page: score, then seq,
    descending (the ``ORDER BY score DESC, m.seq DESC`` of the full ranking)."""
    return (-row[2], -row[0])


def _score_sql(relevance: str, strength: str) -> str:
    """The search score as SQL, from :data:`ledger.vocab.RELEVANCE_WEIGHT` and
    :data:`ledger.vocab.STRENGTH_WEIGHT`."""
    return f"{RELEVANCE_WEIGHT!r} * {relevance} + {STRENGTH_WEIGHT!r} * {strength}"

