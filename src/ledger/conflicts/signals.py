"""Lexical contradiction proposer: the pure part (stdlib only, no I/O, no sqlite3).

:mod:`ledger.conflicts.values` reads each text (steps 1-2 below); this module aligns two
frames and compares their values (steps 3-4).

Two claims are *suspected* of contradicting each other when they say something about the
same subject and attribute and disagree on a value read off the text. The proposer only
ranks candidates; an agent judges them and a person resolves them. The rules, the
lexicons and the reasons behind them are written up in ``docs/contradictions.md``.

How a pair is read (all of it ours unless marked "seed"; the seed is ``conflicts.ts``,
described in docs/originals.md §1.9.1):

1. **Values** are picked out of each text first: quantities with their units (``90s``,
   ``2 GB``, ``8 threads``), ISO dates, clock times, weekdays, months, file paths, states
   from the opposite-state lexicon (``enabled``/``disabled``), choices from the
   exclusive-choice lexicon (``tabs``/``spaces``) and negations. A value the text marks as
   history ("moved *from 9:30* to 10:00") is left out.
2. What is left is the claim's **frame**: its content words, lightly stemmed, with a
   placeholder where each value stood ("the auth service listens on port #n").
3. The two frames are **aligned** word by word. The pair is only compared when the frames
   share most of the shorter one's words (:data:`COVER_FLOOR`) and a fair part of all
   their words (:data:`SHARE_FLOOR`), and when no word stands in for another in front of
   a shared word or at the end ("*auth* service" vs "*billing* service", "in *staging*"
   vs "in *production*"): those are different subjects, not different values.
4. **Signals** then compare values of one kind only: quantities of one dimension (time,
   size, or the same counted noun; ``90s`` == ``90 seconds``), dates, times, weekdays,
   months, paths, states of one axis, choices of one axis; a negation on one side only.
   Each side must hold a value the other lacks (a side that only adds values refines).

Kept from the seed: the tokeniser and :func:`overlap` (exported for the peer search and
for comparison), the score formula (with the alignment cover as its overlap), and
:func:`pair_key`. Kept from issue 3: whole-word months and weekdays, ``may`` as a month
only in context, clock times normalised to ``HH:MM``, digits of dates and times not read
again as numbers.
"""

from __future__ import annotations

from functools import lru_cache

from ledger.conflicts.values import (
    CHOICE_AXES,
    STATE_AXES,
    STOPWORDS,
    Quantity,
    Values,
    haystack,
    may_share,
    normalise,
    probe,
    quantity,
    read,
    same_owner,
    same_quantity,
)
from ledger.frozen import Frozen
from ledger.regex import compile as _compile

__all__ = [
    "CHOICE_AXES",
    "COVER_FLOOR",
    "HEAD_TOKENS",
    "OVERLAP_FLOOR",
    "Quantity",
    "SHARE_FLOOR",
    "SIGNAL_NAMES",
    "STATE_AXES",
    "STOPWORDS",
    "Suspicion",
    "alignment",
    "content_tokens",
    "overlap",
    "pair_key",
    "quantity",
    "query_terms",
    "signals",
    "subject_differs",
    "suspect",
]

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------


#: Seed ``OVERLAP_FLOOR`` for :func:`overlap`. No longer the proposer's gate (the
#: alignment is, see :data:`COVER_FLOOR`); kept for the seed measure and its tests.
OVERLAP_FLOOR = 0.18

#: Seed: the "subject" of a claim is its first 3 content tokens (used by query_terms).
HEAD_TOKENS = 3

#: Ours: the shared frame words must cover at least this share of the shorter frame's
#: words. Tuned on ``tests/data/conflict_pairs.jsonl``; see docs/contradictions.md.
COVER_FLOOR = 0.5

#: Ours: shared frame words over all frame words (Jaccard) must reach this. Keeps long
#: chatty texts that share a name or two apart (``bench/proposer_locomo.py``).
SHARE_FLOOR = 0.25

# Ours: a negation alone may cross a swapped word only when the frames line up closely.
_NEGATION_COVER = 0.8
_NEGATION_SHARE = 0.5

#: Signal names, in the fixed order :func:`signals` reports them.
SIGNAL_NAMES: tuple[str, ...] = (
    "divergent numbers",
    "divergent dates",
    "divergent times",
    "divergent weekdays",
    "divergent months",
    "opposite states",
    "exclusive choices",
    "moved location",
    "replaced value",
    "negation on one side",
)

# Seed score weights: score = overlap*0.6 + min(1, signals/3)*0.4, rounded to 4 places.
_OVERLAP_WEIGHT = 0.6
_SIGNAL_WEIGHT = 0.4
_SIGNALS_FOR_FULL_WEIGHT = 3

# ---------------------------------------------------------------------------
# Seed tokenising and overlap (kept for the peer search and as the seed measure)
# ---------------------------------------------------------------------------

# Seed: replace every character that is not a letter, digit, whitespace or '-' by a
# space. Python's \w also admits '_', which is not a letter, hence the alternative.
_NON_TOKEN = _compile(r"[^\w\s-]|_")


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    cleaned = _NON_TOKEN.sub(" ", normalise(text).lower())
    return tuple(
        tok
        for tok in cleaned.split()
        # isdecimal: the seed's \d+ (Unicode category Nd), without a pattern call per token
        if len(tok) > 2 and tok not in STOPWORDS and not tok.isdecimal()
    )


def content_tokens(text: str) -> list[str]:
    """The seed tokeniser: lowercase, non-token characters to spaces, split on
    whitespace, keep tokens longer than 2 characters that are neither stopwords nor
    all digits. Order and duplicates are kept (the head is the first 3 of this list).

    >>> content_tokens("Invoice renews every 12 months, net-45 (not net-30)!")
    ['invoice', 'renews', 'every', 'months', 'net-45', 'not', 'net-30']
    """
    return list(_tokens(text))


def _jaccard(a: set[str], b: set[str]) -> float:
    # Seed: a Jaccard with an empty set is 0 (even two empty sets).
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def overlap(a: str, b: str) -> float:
    """The seed's measure ``max(body, head)``: body is the Jaccard of the two
    content-token sets, head the Jaccard of the sets of the first :data:`HEAD_TOKENS`
    content tokens. In [0, 1], symmetric, unrounded. Not the proposer's gate any more
    (see :func:`alignment`)."""
    ta, tb = _tokens(a), _tokens(b)
    body = _jaccard(set(ta), set(tb))
    head = _jaccard(set(ta[:HEAD_TOKENS]), set(tb[:HEAD_TOKENS]))
    return max(body, head)


# ---------------------------------------------------------------------------
# Alignment
# ---------------------------------------------------------------------------


def _is_word(tok: str) -> bool:
    return not tok.startswith("#")


def _cover_share(wa: frozenset[str], wb: frozenset[str]) -> tuple[float, float]:
    """``cover`` = shared words / words of the smaller set; ``share`` = Jaccard."""
    shared = len(wa & wb)
    if not shared:
        return 0.0, 0.0
    return shared / min(len(wa), len(wb)), shared / (len(wa) + len(wb) - shared)


def subject_differs(a: str, b: str) -> bool:
    """Whether a word of one claim stands in for a different word of the other right in
    front of a shared word, among the first two frame words ("the *iOS* app" / "the
    *Android* app"): two subjects. The
    end-of-frame case of :func:`alignment` is left out (a swapped last word may be the
    value itself: "... is 1Password" / "... is Bitwarden")."""
    fa, fb = read(a).frame, read(b).frame
    # Only at the head of the frame, where the subject stands: "approved by *Alice*
    # before each release" vs "by *Bob*" is a changed value, not a second subject.
    return _blocked(fa, fb, at_end=False, head=2) or _blocked(fb, fa, at_end=False, head=2)


def _blocked(fa: tuple[str, ...], fb: tuple[str, ...], at_end: bool = True, head: int | None = None) -> bool:
    """A word stands in for another right before a shared word, or at the very end of
    both frames: a different subject or qualifier, not a different value."""
    if fa == fb:
        # Identical frames line up whole (one "equal" opcode): no word stands in for
        # another. The usual case of a contradiction (the same sentence, another
        # value), and it spares remember importing difflib, which imports re (4 ms).
        return False
    from difflib import SequenceMatcher  # only for pairs that line up (remember's start-up budget)

    ops = SequenceMatcher(None, fa, fb, autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace":
            continue
        left = [t for t in fa[i1:i2] if _is_word(t)]
        right = [t for t in fb[j1:j2] if _is_word(t)]
        if not left or not right or (head is not None and min(i1, j1) >= head):
            continue
        nxt = ops[k + 1] if k + 1 < len(ops) else None
        before_shared_word = nxt is not None and nxt[0] == "equal" and _is_word(fa[nxt[1]])
        ends = at_end and i2 == len(fa) and j2 == len(fb)
        if before_shared_word or ends:
            return True
    return False


def alignment(a: str, b: str) -> tuple[float, float, bool]:
    """How well two claims' frames line up: ``(cover, share, blocked)``.

    ``cover`` (0-1): shared frame words over the words of the shorter frame;
    ``share`` (0-1): shared over all frame words; ``blocked``: a word of one stands in for
    a different word of the other in front of a shared word or at the end, which reads
    as a different subject ("the *auth* service" vs "the *billing* service"). A frame
    is a claim's content words, stemmed, with its values taken out. Symmetric.

    >>> alignment("The auth service listens on port 8073", "The billing service listens on port 8050")[2]
    True
    """
    va, vb = read(a), read(b)
    return (*_cover_share(va.words, vb.words), _blocked_either(va, vb))


def _blocked_either(va: Values, vb: Values) -> bool:
    # SequenceMatcher's opcodes depend on the argument order; look both ways so that
    # the answer is symmetric.
    return _blocked(va.frame, vb.frame) or _blocked(vb.frame, va.frame)


# ---------------------------------------------------------------------------
# Signals
# ---------------------------------------------------------------------------


def _diverge(a: frozenset, b: frozenset) -> bool:
    # Seed: both sides must have values, and the sets must differ. Differs from the
    # seed: each side must also hold a value the other lacks. A side that only adds
    # values ("7 days" vs "7 days for events and 30 for audit logs", "3.11" vs "3.11 and
    # 3.12") is a refinement far more often than a contradiction.
    return bool(a) and bool(b) and bool(a - b) and bool(b - a)


def _diverge_quantities(a: frozenset[Quantity], b: frozenset[Quantity]) -> bool:
    """Per dimension, each side holds a quantity the other has no equal of, among the
    other's quantities of the same thing (:func:`same_owner`): "CMake 3.28" says
    nothing against "node.js 20", two numbers of two named things."""
    for dim in {q.dim for q in a} & {q.dim for q in b}:
        qa = [q for q in a if q.dim == dim]
        qb = [q for q in b if q.dim == dim]
        if _unmatched(qa, qb) and _unmatched(qb, qa):
            return True
    return False


def _unmatched(qa: list[Quantity], qb: list[Quantity]) -> bool:
    """Some quantity of ``qa`` has quantities of the same thing in ``qb``, none equal."""
    for x in qa:
        peers = [y for y in qb if same_owner(x, y)]
        if peers and not any(same_quantity(x, y) for y in peers):
            return True
    return False


def _diverge_by_axis(a: frozenset[tuple[str, object]], b: frozenset[tuple[str, object]]) -> bool:
    for axis in {x for x, _ in a} & {x for x, _ in b}:
        if _diverge(frozenset(v for x, v in a if x == axis), frozenset(v for x, v in b if x == axis)):
            return True
    return False


def _replaces(va: Values, vb: Values) -> bool:
    """``vb`` says "... from X to Y" while ``va`` still says X and nothing of Y
    ("uses npm" vs "switched from npm to pnpm")."""
    return any(old and old <= va.words and not (new & va.words) for old, new in vb.replaced)


def _signals(va: Values, vb: Values) -> list[str]:
    fired = (
        _diverge_quantities(va.quantities, vb.quantities),
        _diverge(va.dates, vb.dates),
        _diverge(va.times, vb.times),
        _diverge(va.weekdays, vb.weekdays),
        _diverge(va.months, vb.months),
        _diverge_by_axis(va.states, vb.states),
        _diverge_by_axis(va.choices, vb.choices),
        _diverge(va.paths, vb.paths),
        _replaces(va, vb) or _replaces(vb, va),
        va.negated != vb.negated,
    )
    return [name for name, on in zip(SIGNAL_NAMES, fired) if on]


def signals(a: str, b: str) -> list[str]:
    """Names of the signals that fire between two texts, in :data:`SIGNAL_NAMES` order,
    whether or not the texts are about the same thing (:func:`suspect` checks that).

    A value signal fires when both texts hold values of that kind (quantities: of one
    dimension; states and choices: of one axis) and each holds one the other lacks;
    negation fires when exactly one text has a negation that no state word took. Symmetric.

    >>> signals("Weekly review runs Friday 16:00", "Weekly review runs Thursday 09:30")
    ['divergent times', 'divergent weekdays']
    """
    return _signals(read(a), read(b))


# ---------------------------------------------------------------------------
# The proposer
# ---------------------------------------------------------------------------


class Suspicion(Frozen):
    """Why a pair of claims is proposed as a conflict candidate.

    ``overlap`` is the mean of the alignment's cover and share (:func:`alignment`, 0-1)
    rounded to 4 places; ``score`` (seed formula, from the unrounded overlap) is
    ``round(overlap*0.6 + min(1, len(signals)/3)*0.4, 4)`` and is used for ranking only.
    Immutable (:class:`ledger.frozen.Frozen`).
    """

    __slots__ = ("overlap", "signals", "score")

    def __init__(self, overlap: float, signals: tuple[str, ...], score: float) -> None:
        s = object.__setattr__
        s(self, "overlap", overlap)
        s(self, "signals", signals)
        s(self, "score", score)


def _score(ov: float, n_signals: int) -> float:
    share = min(1.0, n_signals / _SIGNALS_FOR_FULL_WEIGHT)
    return round(ov * _OVERLAP_WEIGHT + share * _SIGNAL_WEIGHT, 4)


def suspect(a: str, b: str) -> Suspicion | None:
    """A :class:`Suspicion` when the two claims line up (:func:`alignment`: cover at
    least :data:`COVER_FLOOR`, share at least :data:`SHARE_FLOOR`, not blocked) and at
    least one signal fires, else ``None``. Symmetric: ``suspect(a, b) == suspect(b,
    a)``. Identical texts never fire a signal, so are never proposed.

    >>> suspect("Invoice renews every 12 months", "Invoice renews every 24 months")
    Suspicion(overlap=1.0, signals=('divergent numbers',), score=0.7333)
    """
    probes = _probes(a)
    if not probes:
        return None
    # share >= SHARE_FLOOR needs at least SHARE_FLOOR * len(words of a) shared frame
    # words, and each frame word of b starts a word of haystack(b) that stems to it
    # (values.may_share): rule a peer out with substring tests before reading its values
    # (the store compares a new claim with up to 200 peers, most of them unread in a
    # fresh process).
    floor = SHARE_FLOOR * len(probes)
    # First a bound in C: may_share needs the probe somewhere in the haystack, and for
    # ASCII text the haystack is the text lower-cased with spaces put in (normalise sets
    # versions apart), so a probe, which holds no space, is then in b.lower() too.
    low = b.lower() if b.isascii() else haystack(b)
    if sum(map(low.__contains__, _probe_parts(a))) < floor:  # no Python frame per probe
        return None
    hay = haystack(b)
    if sum(may_share(hay, w, p) for w, p in probes) < floor:
        return None
    va = read(a)
    vb = read(b)
    cover, share = _cover_share(va.words, vb.words)
    if cover < COVER_FLOOR or share < SHARE_FLOOR:
        return None
    fired = _signals(va, vb)
    if not fired:
        return None
    if _blocked_either(va, vb) and not (fired == ["negation on one side"] and cover >= _NEGATION_COVER and share >= _NEGATION_SHARE):
        # A negation denies the claim's own words ("use ruff; flake8 is not used" vs
        # "use flake8"), so a swapped word need not mark a different subject there; but
        # only when the frames line up closely (chat turns share "thanks" and a name).
        return None
    ov = (cover + share) / 2
    return Suspicion(overlap=round(ov, 4), signals=tuple(fired), score=_score(ov, len(fired)))


@lru_cache(maxsize=1024)
def _probes(text: str) -> tuple[tuple[str, str], ...]:
    """``(word, probe(word))`` for each frame word of ``text``
    (:func:`~ledger.conflicts.values.probe`; cached: remember compares one new claim with
    up to 200 peers)."""
    return tuple((w, probe(w)) for w in read(text).words)


@lru_cache(maxsize=1024)
def _probe_parts(text: str) -> tuple[str, ...]:
    """The probes of :func:`_probes` alone."""
    return tuple(p for _, p in _probes(text))


def pair_key(a_id: str, b_id: str) -> tuple[str, str]:
    """The stored order of a candidate pair: ids sorted lexicographically (``a < b``).

    Raises ``ValueError`` for an id paired with itself (ours: the seed never compared a
    memory with itself, and a key ``(x, x)`` would be a bug upstream).
    """
    if a_id == b_id:
        raise ValueError(f"cannot pair memory {a_id!r} with itself")
    return (a_id, b_id) if a_id < b_id else (b_id, a_id)


def query_terms(text: str, limit: int = 12) -> list[str]:
    """Distinct content tokens to find peers with through the full-text index (ours:
    the seed scanned the 500 most recently read claims instead).

    The head (the first :data:`HEAD_TOKENS` distinct content tokens) comes first,
    because a shared subject alone can clear the overlap floor; then the remaining
    tokens, longest first (ties in text order), longer words being rarer. At most
    ``limit`` terms. Terms are lowercase and may contain ``-`` or non-ASCII letters,
    so the store must quote each one as an FTS5 string before OR-ing them.

    >>> query_terms("Deploy the billing service with make deploy-prod on Fridays", 5)
    ['deploy', 'billing', 'service', 'deploy-prod', 'fridays']
    """
    if limit <= 0:
        return []
    distinct = list(dict.fromkeys(content_tokens(text)))
    head, rest = distinct[:HEAD_TOKENS], distinct[HEAD_TOKENS:]
    rest.sort(key=len, reverse=True)  # stable: ties keep text order
    return (head + rest)[:limit]
