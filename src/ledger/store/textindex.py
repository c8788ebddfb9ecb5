"""The full-text side of the store: what is indexed for a memory, the fuzzy vocabulary,
and the relevance of every match for a query (docs/search.md).

Tables (migration ``m007_terms``):

* ``memories_fts(text, context)``: the word index (porter, unicode61), fed NFKC text so
  fullwidth letters are found by ASCII queries, with CJK runs set apart by spaces so
  the Latin words and numbers they touch are words of their own
  (:func:`ledger.terms.word_text`; migration ``m019_cjk_apart`` for older rows). ``context`` holds a chunk's neighbours
  (weight 0.3, docs/design.md, retrieval notes).
* ``memories_side(terms)``: compounds (``c++``, ``node.js``) as single tokens, CJK
  bigrams and symbols (emoji...), for the few memories that have any
  (:func:`ledger.terms.side_text`; symbols since migration ``m011_symbols``).
* ``memory_text_fts(text, side)`` (migration ``m012_text_history_index``): every text
  a memory had before an edit or merge (``memory_text_history``, rowid for rowid),
  word index and side terms in two columns, so ``asof:`` matches the text a memory had
  then (:func:`relevance_asof`, which scores it with the statistics of the two indexes
  above, not of this one).
* ``vocab(id, term)`` and ``vocab_tri``: every alphabetic word of 3+ letters ever
  indexed, and a trigram index over those words (not over the memories), through which
  a query word finds its neighbours within a few edits. Words are never removed: a
  word no live memory holds any more expands to a term that matches nothing.
* ``vocab_fts`` (migration ``m020_vocab_stems``): the vocabulary under the word index's
  tokenizer (porter), rowid = ``vocab.id``, so a prefix can be checked against the
  stems porter gives the words that start with it (:func:`prefix_extras`).
"""

from __future__ import annotations

import math

from .. import terms as T
from ..text import QUERY_STOPWORDS
from ._sqlite import sqlite3
from .rows import batches


def _pg(conn) -> bool:
    # PostgreSQL stores have their own full-text machinery (.textindex_pg).
    return getattr(conn, "is_postgres", False)


def _textindex_pg():
    from . import textindex_pg

    return textindex_pg


# docs/design.md, retrieval notes (context weight); docs/originals.md §1.6 (a fuzzy hit
# ranks below an equally good exact one). Shared with .textindex_pg through ledger.vocab.
from ..vocab import CONTEXT_WEIGHT, FUZZY_WEIGHT, MAX_PREFIX_EXTRAS  # noqa: E402


def index(conn: sqlite3.Connection, seq: int, text: str, context: str = "", *, stems: bool = True) -> None:
    """Index memory ``seq``: word index (:func:`ledger.terms.word_text`: NFKC, CJK runs
    set apart from the Latin words and numbers they touch), side index (if it has
    compounds, CJK or symbols) and new vocabulary words. Runs inside the caller's
    transaction. ``stems``: see :func:`add_words`."""
    if _pg(conn):
        return _textindex_pg().index(conn, seq, text, context)
    conn.execute("INSERT INTO memories_fts (rowid, text, context) VALUES (?, ?, ?)", (seq, T.word_text(text), T.word_text(context)))
    side = T.side_text(text)
    if side:
        conn.execute("INSERT INTO memories_side (rowid, terms) VALUES (?, ?)", (seq, side))
    add_words(conn, T.vocabulary_words(text), stems=stems)


def index_old_text(conn: sqlite3.Connection, history_rowid: int, text: str) -> None:
    """Index a replaced text (row ``history_rowid`` of ``memory_text_history``) for
    ``asof:``. Runs inside the caller's transaction."""
    if _pg(conn):
        return _textindex_pg().index_old_text(conn, history_rowid, text)
    conn.execute("INSERT INTO memory_text_fts (rowid, text, side) VALUES (?, ?, ?)", (history_rowid, T.word_text(text), T.side_text(text)))


def unindex(conn: sqlite3.Connection, seq: int) -> str:
    """Remove ``seq`` from the word and side indexes; returns its context column."""
    if _pg(conn):
        return _textindex_pg().unindex(conn, seq)
    ctx = conn.execute("SELECT context FROM memories_fts WHERE rowid = ?", (seq,)).fetchone()
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    conn.execute("DELETE FROM memories_side WHERE rowid = ?", (seq,))
    return ctx[0] if ctx else ""


def add_words(conn: sqlite3.Connection, words, *, stems: bool = True) -> None:
    """Add words to the vocabulary, its trigram index and ``vocab_fts`` (known words cost
    one probe). ``stems=False`` leaves ``vocab_fts`` out: for migrations older than
    ``m020_vocab_stems``, which runs after them and fills it from ``vocab``."""
    if _pg(conn):
        return _textindex_pg().add_words(conn, words)
    for w in words:
        cur = conn.execute("INSERT OR IGNORE INTO vocab (term) VALUES (?)", (w,))
        if cur.rowcount:
            conn.execute("INSERT INTO vocab_tri (rowid, padded) VALUES (?, ?)", (cur.lastrowid, f" {w} "))
            if stems:
                conn.execute("INSERT INTO vocab_fts (rowid, term) VALUES (?, ?)", (cur.lastrowid, w))


# ------------------------------------------------------------------------------ fuzzy
def starts_vocabulary(conn: sqlite3.Connection, word: str) -> bool:
    """Whether some vocabulary word starts with ``word`` (folded, alphabetic), itself
    included: a hybrid search widens only a word for which this is false."""
    if _pg(conn):
        return _textindex_pg().starts_vocabulary(conn, word)
    return conn.execute("SELECT 1 FROM vocab WHERE term >= ? AND term < ? LIMIT 1", (word, word + _PREFIX_END)).fetchone() is not None


def neighbours(conn: sqlite3.Connection, word: str) -> list[str]:
    """Vocabulary words within :func:`ledger.terms.max_edits` of ``word``; see
    :func:`neighbours_of`."""
    return neighbours_of(conn, [word]).get(word, [])


def neighbours_of(conn: sqlite3.Connection, words) -> dict[str, list[str]]:
    """For each of ``words``, the vocabulary words within :func:`ledger.terms.max_edits`
    of it (Levenshtein) or one swap of adjacent letters away (:func:`ledger.terms.swaps`),
    itself excluded, sorted. Words that cannot have neighbours (short, digits) map to
    ``[]``.

    Exact: a word within k edits of ``w`` holds at least m = d - 3k of ``w``'s d
    distinct padded trigrams (:func:`ledger.terms.padded_trigrams`), so it holds at
    least one of any d - m + 1 of them (pigeonhole). Only the postings of the d - m + 1
    rarest are read from the trigram index over the vocabulary, for words of a length
    within k; each word found is checked for m trigrams and then with
    :func:`ledger.terms.edit_distance`. When m < 1 (words like ``aaaa``) every
    vocabulary word of a near length is checked. The swaps are looked up as they are,
    in one read of the vocabulary."""
    if _pg(conn):
        return _textindex_pg().neighbours_of(conn, words)
    out: dict[str, list[str]] = {}
    plan = []
    for w in dict.fromkeys(words):
        k = T.max_edits(w)
        out[w] = []
        if k and T.is_fuzzy_word(w):
            grams = sorted(set(T.padded_trigrams(w)))
            plan.append((w, k, grams, len(grams) - 3 * k))
    if not plan:
        return out
    all_grams = sorted({g for _, _, grams, _ in plan for g in grams})
    marks = ",".join("?" * len(all_grams))
    df = dict(conn.execute(f"SELECT term, doc FROM vocab_tri_v WHERE term IN ({marks})", all_grams).fetchall())
    found: dict[str, list[str]] = {w: [] for w, *_ in plan}
    scan = []
    for w, k, grams, need in plan:
        if need < 1:
            scan.append((w, k))
            continue
        if sum(1 for g in grams if df.get(g)) < need:
            continue  # fewer of its trigrams exist in the vocabulary than a neighbour needs
        rare = [g for g in sorted(grams, key=lambda g: (df.get(g, 0), g))[: len(grams) - need + 1] if df.get(g)]
        expr = " OR ".join('"' + g.replace('"', '""') + '"' for g in rare)
        rows = conn.execute("SELECT padded FROM vocab_tri WHERE vocab_tri MATCH ? AND length(padded) BETWEEN ? AND ?",
                            (expr, len(w) - k + 2, len(w) + k + 2))
        found[w] = [p[1:-1] for (p,) in rows if _holds(p, grams, need)]
    for w, k in scan:
        found[w] = [r[0] for r in conn.execute("SELECT term FROM vocab WHERE length(term) BETWEEN ? AND ?", (len(w) - k, len(w) + k))]
    swapped = {w: T.swaps(w) for w, *_ in plan}
    every = sorted(set().union(*swapped.values()))
    held = set()
    for part in batches(every, 500):
        held.update(r[0] for r in conn.execute(f"SELECT term FROM vocab WHERE term IN ({','.join('?' * len(part))})", part))
    for w, k, _, _ in plan:
        near = {v for v in found[w] if v != w and T.edit_distance(w, v, k) <= k}
        out[w] = sorted(near | (swapped[w] & held))
    return out



def _holds(padded: str, grams, need: int) -> bool:
    """Whether ``padded`` contains at least ``need`` of ``grams`` (distinct trigrams).
    Stops at the first miss too many: most candidates of the trigram index hold one or
    two of a word's trigrams, and this runs once per candidate."""
    misses = len(grams) - need
    for g in grams:
        if g in padded:
            need -= 1
            if not need:
                return True
        else:
            misses -= 1
            if misses < 0:
                return False
    return need <= 0


def neighbours_brute(words, word: str) -> list[str]:
    """The definition of :func:`neighbours` over an explicit vocabulary (the oracle)."""
    k = T.max_edits(word)
    if k == 0 or not T.is_fuzzy_word(word):
        return []
    swapped = T.swaps(word)
    return sorted(w for w in set(words) if w != word and (T.edit_distance(word, w, k) <= k or w in swapped))


# ------------------------------------------------------------------------------ prefixes
# Most words a query word w starts with are stemmed by the porter tokenizer to a term
# that starts with w's own stem, so FTS5's prefix phrase "w"* finds them. Not all:
# porter turns a final y into i (deploy -> deploi, but deployment -> deploy) and undoes
# doubled consonants (hopping -> hop, not a prefix of hopp). Those words are found
# through the vocabulary instead (docs/search.md "Prefixes").
_PREFIX_END = "\U0010ffff"  # sorts after every character: [w, w + this) is every word starting with w


def prefix_extras(conn: sqlite3.Connection, words) -> dict[str, list[str]]:
    """For each word typed as a prefix, the extra phrases (FTS5 strings) that find the
    vocabulary words starting with it which its prefix phrase ``"w"*`` misses; words
    whose prefix phrase misses nothing are left out of the map.

    The *missed* words of ``w``: vocabulary words ``v != w`` that start with ``w`` and
    that ``"w"*`` does not match in ``vocab_fts`` (the vocabulary under the word
    index's own tokenizer, migration ``m020_vocab_stems``). If the prefix phrase of
    ``w + "ness"`` (porter removes ``ness``: its stem is ``w`` as typed, when porter
    would otherwise change w's end) matches every missed word, that one phrase is the
    extra. Otherwise one exact phrase per stem among the missed words, the
    alphabetically first word of each standing for its stem, at most
    :data:`ledger.vocab.MAX_PREFIX_EXTRAS` (the first ones, by that word). PostgreSQL
    stores use their own stemmer: :func:`.textindex_pg.prefix_extras`."""
    if _pg(conn):
        return _textindex_pg().prefix_extras(conn, words)
    out: dict[str, list[str]] = {}
    for w in dict.fromkeys(words):
        missed = conn.execute(
            """SELECT id, term FROM vocab WHERE term >= ? AND term < ? AND term <> ?
               AND id NOT IN (SELECT rowid FROM vocab_fts WHERE vocab_fts MATCH ?) ORDER BY term""",
            (w, w + _PREFIX_END, w, _q(w) + "*"),
        ).fetchall()
        if not missed:
            continue
        ids = {i for i, _ in missed}
        whole = _q(w + "ness") + "*"
        if ids <= {r for (r,) in conn.execute("SELECT rowid FROM vocab_fts WHERE vocab_fts MATCH ?", (whole,))}:
            out[w] = [whole]
            continue
        phrases: list[str] = []
        for i, term in missed:
            if i not in ids:
                continue  # its stem already has a phrase
            if len(phrases) == MAX_PREFIX_EXTRAS:
                break
            phrases.append(_q(term))
            ids -= {r for (r,) in conn.execute("SELECT rowid FROM vocab_fts WHERE vocab_fts MATCH ?", (_q(term),))}
        out[w] = phrases
    return out


# ------------------------------------------------------------------------------ queries
def _q(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def expression_parts(conn: sqlite3.Connection | None, raw_terms, mode: str) -> tuple[list[str], list[str], list[str]]:
    """The phrases of the three MATCH expressions of a query, as FTS5 strings (OR them
    to get :func:`expressions`):

    * exact, on the word index: every word (a prefix query in ``hybrid`` and ``fuzzy``
      mode when it has 3+ characters, and in every mode when typed with ``*``) and every
      phrase a compound or version joins, its last word a prefix when
      :func:`ledger.terms.prefix_phrases` says so (``3.1*`` is ``"3 1"*``, ``python3`` in
      ``hybrid`` mode ``"python 3"*``); a prefix word or last word also gets the extra
      phrases of :func:`prefix_extras` (``"ci deployness"*`` beside ``"ci deploy"*``);
    * fuzzy, on the word index: the vocabulary neighbours of the words, words already
      asked for left out; in ``hybrid`` mode only of words the vocabulary does not
      hold, in ``fuzzy`` mode of every word, never in ``keyword`` mode;
    * side: compounds, CJK runs (the phrase of a run's bigrams; of a run of 3+
      characters also each bigram, :func:`ledger.terms.cjk_query_phrases`) and runs of symbols
      (the phrase of their tokens).

    ``conn`` is only needed for the fuzzy phrases and the prefix extras (``None`` skips
    them)."""
    if _pg(conn):
        return _textindex_pg().term_lists(conn, raw_terms, mode)
    qt = T.split_query(raw_terms, QUERY_STOPWORDS)
    pre = T.prefix_words(qt, mode, QUERY_STOPWORDS)
    pre_phrases = T.prefix_phrases(qt, mode)
    lasts = {p: p.rsplit(" ", 1)[1] for p in pre_phrases}
    # Vocabulary words are alphabetic: a last word with a digit (3.1*) can have no extras.
    extra = prefix_extras(conn, pre + [w for w in lasts.values() if w.isalpha()]) if conn is not None else {}
    exact = []
    for w in qt.words:
        exact.append(_q(w) + ("*" if w in pre else ""))
        exact += extra.get(w, ())
    for p in qt.phrases:
        if p not in lasts:
            exact.append(_q(p))
            continue
        exact.append(_q(p) + "*")
        # The last word's extras, each behind the words before it: an extra is a quoted
        # string ("hopped", or "deployness"*), so the lead goes inside its opening quote.
        lead = p.rsplit(" ", 1)[0].replace('"', '""')
        exact += ['"' + lead + " " + e[1:] for e in extra.get(lasts[p], ())]
    fuzzy: list[str] = []
    if mode != "keyword" and conn is not None:
        # hybrid: only words no vocabulary word starts with (a typo, or a word no memory
        # uses) are widened; any other is already matched as typed, by its prefix
        # (`deployment` finds `deployments`: it is not also `employment`). fuzzy: all.
        widen = list(qt.words) if mode == "fuzzy" else [w for w in qt.words if T.is_fuzzy_word(w) and not starts_vocabulary(conn, w)]
        asked = set(qt.words)
        seen = set()
        near = neighbours_of(conn, widen)
        for w in widen:
            for n in near[w]:
                if n not in asked and n not in seen:
                    seen.add(n)
                    fuzzy.append(_q(n))
    side = [_q(T.encode_compound(c)) for c in qt.compounds]
    side += [_q(" ".join(ph)) for r in qt.cjk for ph in T.cjk_query_phrases(r)]
    side += [_q(T.symbol_phrase(r)) for r in qt.symbols]
    return exact, fuzzy, side


def expressions(conn: sqlite3.Connection | None, raw_terms, mode: str) -> tuple[str | None, str | None, str | None]:
    """The three MATCH expressions (exact, fuzzy, side) of a query, ``None`` when empty;
    see :func:`expression_parts`."""
    sep = " | " if _pg(conn) else " OR "  # tsquery's OR on PostgreSQL
    return tuple(sep.join(x) or None for x in expression_parts(conn, raw_terms, mode))  # type: ignore[return-value]


def relevance_sql(p: str) -> str:
    """SQL for the relevance r = p / (p + 1) (0-1) of ``p``, an SQL expression for a
    row's score before clamping (``-bm25(...)``, or a column already summed); p is
    clamped at 0 first. Written ``1 - 1 / (1 + p)``, the same value, so that ``p``
    appears once: SQLite flattens ``SELECT p / (p + 1) FROM (SELECT bm25(...) AS p ...)``
    into an expression calling ``bm25()`` twice per row, and that second call was about
    a sixth of a search at 100k memories (docs/benchmarks.md "BM25 once per row"). Each
    step (``1 + p``, ``1 / x``, ``1 - y``) is a correctly rounded monotone operation, so r
    never decreases as p grows, which the top-k bound relies on (``fill_lower_bounds``)."""
    return f"(1.0 - 1.0 / (1.0 + max(0.0, {p})))"


def fill_relevance(conn: sqlite3.Connection, raw_terms, mode: str, parts=None) -> bool:
    """Fill ``temp.ledger_rel(seq, r)`` with the relevance (0-1) of every match; False
    if nothing matches (:func:`expressions` gives the three expressions).

    A row matched as typed (exact or side expression) has r = p / (p + 1) with
    p = bm25(exact) + bm25(side) (FTS5's BM25, negated, at least 0; the word index
    weighs its context column 0.3). A row matched only through fuzzy neighbours has
    r = 0.6 * p / (p + 1) with p = bm25(fuzzy): as in the original LEDGER (docs/originals.md §1.6), a fuzzy hit ranks below
    an equally good exact one, and a row matched as typed keeps that relevance.

    ``parts``: the query's :func:`expression_parts`, if the caller already has them."""
    if _pg(conn):
        return _textindex_pg().fill_relevance(conn, raw_terms, mode, parts)
    _clear_rel(conn)
    exact, fuzzy, side = (" OR ".join(x) or None for x in (parts or expression_parts(conn, raw_terms, mode)))
    words = f"bm25(memories_fts, 1.0, {CONTEXT_WEIGHT})"
    if exact and side:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS ledger_p (seq INTEGER PRIMARY KEY, p REAL NOT NULL)")
        conn.execute("DELETE FROM temp.ledger_p")
        for expr, table, bm in ((exact, "memories_fts", words), (side, "memories_side", "bm25(memories_side)")):
            conn.execute(
                f"""INSERT INTO temp.ledger_p (seq, p) SELECT rowid, max(0.0, -{bm}) FROM {table} WHERE {table} MATCH ?
                    ON CONFLICT (seq) DO UPDATE SET p = p + excluded.p""",
                (expr,),
            )
        conn.execute(f"INSERT INTO temp.ledger_rel (seq, r) SELECT seq, {relevance_sql('p')} FROM temp.ledger_p")
    elif exact or side:
        table, bm = ("memories_fts", words) if exact else ("memories_side", "bm25(memories_side)")
        conn.execute(f"INSERT INTO temp.ledger_rel (seq, r) SELECT rowid, {relevance_sql(f'-{bm}')} FROM {table} WHERE {table} MATCH ?",
                     (exact or side,))
    if fuzzy:
        # Rows matched as typed keep their relevance: they are left out before bm25 is
        # computed (a row's bm25 does not depend on which other rows are scored).
        conn.execute(
            f"""INSERT OR IGNORE INTO temp.ledger_rel (seq, r) SELECT rowid, {FUZZY_WEIGHT!r} * {relevance_sql(f'-{words}')}
                FROM memories_fts WHERE memories_fts MATCH ?
                AND NOT EXISTS (SELECT 1 FROM temp.ledger_rel rel WHERE rel.seq = memories_fts.rowid)""",
            (fuzzy,),
        )
    return conn.execute("SELECT 1 FROM temp.ledger_rel LIMIT 1").fetchone() is not None


def _clear_rel(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS ledger_rel (seq INTEGER PRIMARY KEY, r REAL NOT NULL)")
    conn.execute("DELETE FROM temp.ledger_rel")


# ------------------------------------------------------------------------------ top-k bound
# FTS5's bm25() (sqlite.org/fts5.html, "The bm25() function"; ext/fts5/fts5_aux.c): for
# each phrase i of the expression, idf_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))
# with idf_i = log((N - n_i + 0.5) / (n_i + 0.5)), replaced by 1e-6 when not positive,
# f_i the (column-weighted) count of the phrase in the row, N the rows of the table and
# n_i the rows holding the phrase. The factor after idf_i is below k1 + 1 for any f_i
# and D, so one phrase adds less than (k1 + 1) * idf_i to any row's -bm25.
BM25_K1 = 1.2
_BM25_B = 0.75
_IDF_FLOOR = 1e-6


def phrase_bounds(conn: sqlite3.Connection, phrases) -> list[tuple[str, int, float]]:
    """For each exact phrase: ``(phrase, rows of the word index holding it, bound)``
    where ``bound`` exceeds what the phrase can add to ``-bm25`` of any row (see the
    comment above; N is bounded by the span of the index's rowids, which are distinct
    integers, so the idf used is never below FTS5's own). One count per phrase: the
    doclist is read, no row is scored."""
    lo = conn.execute("SELECT rowid FROM memories_fts ORDER BY rowid ASC LIMIT 1").fetchone()
    hi = conn.execute("SELECT rowid FROM memories_fts ORDER BY rowid DESC LIMIT 1").fetchone()
    n_rows = (hi[0] - lo[0] + 1) if lo and hi else 0
    out = []
    for ph in phrases:
        n = conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (ph,)).fetchone()[0]
        idf = math.log((n_rows - n + 0.5) / (n + 0.5)) if n_rows else 0.0
        out.append((ph, n, (BM25_K1 + 1.0) * max(idf, _IDF_FLOOR) * (1 + 1e-9)))
    return out


def fill_lower_bounds(conn: sqlite3.Connection, phrases) -> None:
    """Fill ``temp.ledger_rel`` with the rows holding one of ``phrases`` (exact phrases
    of a query) and r = p / (p + 1), p = -bm25 of those phrases alone. Each phrase adds
    a non-negative share to -bm25 and its share does not depend on the other phrases
    (same idf, same counts), so this r is at most the row's relevance for the whole
    query: the probe of the top-k bound (``SearchMixin._bounded_fill``)."""
    _clear_rel(conn)
    conn.execute(
        f"""INSERT INTO temp.ledger_rel (seq, r) SELECT rowid, {relevance_sql(f'-bm25(memories_fts, 1.0, {CONTEXT_WEIGHT})')}
            FROM memories_fts WHERE memories_fts MATCH ?""",
        (" OR ".join(phrases),),
    )


def fill_essential(conn: sqlite3.Connection, exact, essential, fuzzy) -> None:
    """Fill ``temp.ledger_rel`` as :func:`fill_relevance` would for a query with exact
    phrases ``exact``, fuzzy phrases ``fuzzy`` and no side phrases, but only with the
    rows that hold one of ``essential`` (a subset of ``exact``) or match only through
    ``fuzzy``: a row holding only other exact phrases is left out and never scored.
    The rows kept get exactly the relevance :func:`fill_relevance` gives them (the same
    bm25 expression over the same index)."""
    _clear_rel(conn)
    ex = " OR ".join(exact)
    # `+rowid`: the IN list must filter the scan of the match, not drive one MATCH per
    # listed row (that plan took seconds).
    conn.execute(
        f"""INSERT INTO temp.ledger_rel (seq, r) SELECT rowid, {relevance_sql(f'-bm25(memories_fts, 1.0, {CONTEXT_WEIGHT})')}
            FROM memories_fts WHERE memories_fts MATCH ? AND +rowid IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)""",
        (ex, " OR ".join(essential)),
    )
    if fuzzy:
        conn.execute(
            f"""INSERT OR IGNORE INTO temp.ledger_rel (seq, r)
                SELECT rowid, {FUZZY_WEIGHT!r} * {relevance_sql(f'-bm25(memories_fts, 1.0, {CONTEXT_WEIGHT})')} FROM memories_fts
                WHERE memories_fts MATCH ? AND +rowid NOT IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)""",
            (" OR ".join(fuzzy), ex),
        )


def match_any(phrases) -> str:
    """One MATCH expression for every row any of ``phrases`` matches (for counting)."""
    return " OR ".join(phrases)


# ------------------------------------------------------------------------------ asof
# The text a memory had at T: the earliest of its history rows replaced after T (the
# rule of Store.texts_asof), or its current text when it has none.
_THEN = """SELECT h.rowid AS hid, m.seq AS seq FROM memory_text_history h JOIN memories m ON m.id = h.memory_id
           WHERE h.replaced_at > :asof AND h.rowid = (
             SELECT h2.rowid FROM memory_text_history h2 WHERE h2.memory_id = h.memory_id AND h2.replaced_at > :asof
             ORDER BY h2.replaced_at ASC, h2.rowid ASC LIMIT 1)"""

# A scratch index (temp schema: a read-only store may write it) with the word index's
# tokenizer, and its token list, through which the texts then and the query's phrases
# are tokenized exactly as FTS5 tokenizes them in the word index and in a query.
_SCRATCH = ("CREATE VIRTUAL TABLE IF NOT EXISTS temp.ledger_then USING fts5 (body, tokenize = 'porter unicode61')",
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ledger_then_v USING fts5vocab (ledger_then, instance)")


def relevance_asof(conn: sqlite3.Connection, parts, asof: int) -> bool:
    """Make ``temp.ledger_rel`` (filled by :func:`fill_relevance` from current texts)
    answer for the texts memories had at ``asof`` (epoch ms). A memory whose text changed
    after ``asof`` loses its current-text relevance; if its text then matches (found in
    ``memory_text_fts``), it gets the relevance that text would have as its row of the
    word index and side index *now*: BM25 with N, n_i and avgdl of ``memories_fts`` and
    ``memories_side`` as they are (:func:`index_stats`), f_i and D of the text then (no
    neighbour context: only claims' texts change), by the rules of
    :func:`fill_relevance` (exact and side phrases summed, r = p/(p+1); only through
    fuzzy neighbours: 0.6·p/(p+1)). docs/search.md "asof". Returns whether any row
    matches. ``parts``: the query's :func:`expression_parts`."""
    if _pg(conn):
        return _textindex_pg().relevance_asof(conn, parts, asof)
    conn.execute("DELETE FROM temp.ledger_rel WHERE seq IN (SELECT m.seq FROM memory_text_history h "
                 "JOIN memories m ON m.id = h.memory_id WHERE h.replaced_at > ?)", (asof,))
    found = _matched_then(conn, parts, asof)
    if found:
        conn.executemany("INSERT OR IGNORE INTO temp.ledger_rel (seq, r) VALUES (?, ?)", _scored_then(conn, parts, found))
    return conn.execute("SELECT 1 FROM temp.ledger_rel LIMIT 1").fetchone() is not None


def _matched_then(conn: sqlite3.Connection, parts, asof: int) -> dict[int, tuple[int, bool]]:
    """``{history rowid: (seq, matched only through fuzzy neighbours)}`` of the texts
    memories had at ``asof`` (:data:`_THEN`) that the query matches in
    ``memory_text_fts``: exact phrases in its word column, side phrases in its side
    column, else fuzzy phrases in its word column."""
    exact, fuzzy, side = parts
    typed = [f"{{text}} : ({' OR '.join(exact)})"] if exact else []
    typed += [f"{{side}} : ({' OR '.join(side)})"] if side else []
    found: dict[int, tuple[int, bool]] = {}
    for expr, only_fuzzy in ((" OR ".join(typed), False), (f"{{text}} : ({' OR '.join(fuzzy)})" if fuzzy else "", True)):
        if expr:
            for hid, seq in conn.execute(f"""SELECT t.hid, t.seq FROM ({_THEN}) t WHERE t.hid IN (
                                                 SELECT rowid FROM memory_text_fts WHERE memory_text_fts MATCH :expr)""",
                                         {"asof": asof, "expr": expr}):
                found.setdefault(hid, (seq, only_fuzzy))
    return found


def _scored_then(conn: sqlite3.Connection, parts, found: dict[int, tuple[int, bool]]) -> list[tuple[int, float]]:
    """``[(seq, r)]`` for the texts then of :func:`_matched_then`: BM25 of each as a row
    of ``memories_fts`` / ``memories_side`` (their N and avgdl, :func:`index_stats`, and
    n_i, one count per phrase), with its own f_i and D (:func:`phrase_count` over the
    terms :func:`_tokens` gives)."""
    exact, fuzzy, side = (list(x) for x in parts)
    texts: dict[int, tuple[str, str]] = {}
    for part in batches(sorted(found), 500):
        texts.update((h, (t, s)) for h, t, s in conn.execute(
            f"SELECT rowid, text, side FROM memory_text_fts WHERE rowid IN ({','.join('?' * len(part))})", part))
    hids = list(texts)
    phrases = exact + fuzzy + side
    toks = _tokens(conn, [texts[h][0] for h in hids] + [texts[h][1] for h in hids] + [_unquote(ph)[0] for ph in phrases])
    then = {h: (toks[i], toks[len(hids) + i]) for i, h in enumerate(hids)}
    terms_of = dict(zip(phrases, toks[2 * len(hids):]))
    stats = {"memories_fts": index_stats(conn, "memories_fts"), "memories_side": index_stats(conn, "memories_side")}
    holding: dict[tuple[str, str], int] = {}

    def p_of(doc: list[str], table: str, phrases) -> float:
        for ph in phrases:
            if (table, ph) not in holding:
                holding[table, ph] = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (ph,)).fetchone()[0] \
                    if terms_of[ph] else 0
        n_rows, avgdl = stats[table]
        return bm25_score([phrase_count(doc, terms_of[ph], _unquote(ph)[1]) for ph in phrases], len(doc), n_rows,
                          [holding[table, ph] for ph in phrases], avgdl)

    out = []
    for hid, (seq, only_fuzzy) in found.items():
        words, sides = then[hid]
        if only_fuzzy:
            out.append((seq, FUZZY_WEIGHT * relevance(p_of(words, "memories_fts", fuzzy))))
        else:
            out.append((seq, relevance(p_of(words, "memories_fts", exact) + p_of(sides, "memories_side", side))))
    return out


def relevance(p: float) -> float:
    """r = p / (p + 1) of a score ``p`` (clamped at 0), computed as :func:`relevance_sql`
    computes it, step for step."""
    return 1.0 - 1.0 / (1.0 + max(0.0, p))


def bm25_score(freqs, doc_len: int, n_rows: int, holding, avgdl: float) -> float:
    """FTS5's BM25 (negated, so higher is better; see the comment above ``BM25_K1``) of a
    row with ``freqs[i]`` instances of phrase i and ``doc_len`` tokens, in an index of
    ``n_rows`` rows of ``avgdl`` tokens on average where ``holding[i]`` rows hold phrase i.
    The same arithmetic, in the same order, as ``fts5Bm25Function``."""
    if avgdl > 0:
        norm = BM25_K1 * (1 - _BM25_B + _BM25_B * doc_len / avgdl)
    else:  # an index of empty rows
        norm = BM25_K1 * (1 - _BM25_B) if doc_len == 0 else math.inf
    score = 0.0
    for f, n in zip(freqs, holding):
        idf = math.log((n_rows - n + 0.5) / (n + 0.5)) if n_rows else 0.0
        if idf <= 0.0:
            idf = _IDF_FLOOR
        score += idf * ((f * (BM25_K1 + 1.0)) / (f + norm))
    return score



def index_stats(conn: sqlite3.Connection, table: str) -> tuple[int, float]:
    """``(rows, average tokens per row over all columns)`` of the FTS5 table ``table``:
    the N and avgdl its ``bm25()`` uses. Read from FTS5's averages record (row 1 of
    ``<table>_data``: a varint for the rows, then one per column for its total tokens,
    SQLite's varint format), the record ``bm25()`` itself reads: one row, where counting
    the rows or summing the tokens would read the whole index (0.45 s and 1 s at 100k
    memories)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if not row or not row[0]:
        return 0, 0.0
    v = _varints(row[0])
    return v[0], (sum(v[1:]) / v[0] if v[0] else 0.0)


def _varints(blob: bytes) -> list[int]:
    """The varints of ``blob`` (SQLite's format: big-endian groups of 7 bits, the high bit
    set on all but the last; a ninth byte gives 8 bits)."""
    out, i = [], 0
    while i < len(blob):
        v = 0
        for k in range(9):
            b = blob[i]
            i += 1
            if k == 8:
                v = (v << 8) | b
                break
            v = (v << 7) | (b & 0x7F)
            if not b & 0x80:
                break
        out.append(v)
    return out


def _unquote(phrase: str) -> tuple[str, bool]:
    """(body, is a prefix) of an FTS5 phrase string as :func:`_q` writes it."""
    star = phrase.endswith("*")
    return phrase[1:-2 if star else -1].replace('""', '"'), star


def _tokens(conn: sqlite3.Connection, bodies: list[str]) -> list[list[str]]:
    """The terms FTS5 (porter unicode61) makes of each of ``bodies``, in order."""
    for sql in _SCRATCH:
        conn.execute(sql)
    conn.execute("DELETE FROM temp.ledger_then")
    conn.executemany("INSERT INTO temp.ledger_then (rowid, body) VALUES (?, ?)", [(i + 1, b) for i, b in enumerate(bodies)])
    out: list[list[str]] = [[] for _ in bodies]
    for doc, term in conn.execute("SELECT doc, term FROM temp.ledger_then_v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    conn.execute("DELETE FROM temp.ledger_then")
    return out


def phrase_count(doc: list[str], phrase: list[str], prefix: bool) -> int:
    """Instances of ``phrase`` (terms) in ``doc`` (terms): the positions where its terms
    stand one after another, the last one only starting the doc's term when ``prefix``
    (FTS5's ``"a b"*``). Overlapping instances count apart, as FTS5 counts them."""
    k = len(phrase)
    if not k:
        return 0
    n = 0
    for o in range(len(doc) - k + 1):
        if all(doc[o + j] == phrase[j] for j in range(k - 1)) and \
                (doc[o + k - 1].startswith(phrase[-1]) if prefix else doc[o + k - 1] == phrase[-1]):
            n += 1
    return n
