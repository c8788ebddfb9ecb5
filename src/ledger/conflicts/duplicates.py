"""When is a new claim the same as one already stored? The pure test behind
corroboration (docs/store.md "Corroboration"), used by ``remember`` and so by the
watcher's distiller, which writes its findings through ``remember``.

Two texts are near-duplicates only when they say the same words in the same order:

* the same text up to case, width, whitespace and final punctuation is always a
  duplicate;
* otherwise the two texts must read as the same *word sequence* (:func:`sequence`):
  every word in order, casefolded, punctuation dropped, lightly stemmed (``runs`` =
  ``run``), with only true filler left out (articles, the present tense of "be",
  ``it``/``its``/``this``/``that``/``which``: :data:`~ledger.conflicts.wording.FILLER`).
  The words that change a claim's meaning count: relations (``for``/``with``), tense
  (``is``/``was``), modals, quantifiers, comparisons and operators, negations
  (:mod:`ledger.conflicts.wording`). Order counts, so "Carol reports to Dave" and "Dave
  reports to Carol" are two claims, except inside a comma list ("ruff, black, mypy" =
  "black, ruff, mypy"); a word added, dropped or changed anywhere ("the billing payments
  service") makes a new claim, however long the sentence;
* and the contradiction proposer's signals (numbers, dates, clock times, weekdays,
  months, states, negation on one side) must find nothing.

Anything else is a new claim, and goes through the contradiction proposer like every
claim: "PORT is 8080" then "PORT is 9090" are two claims and a candidate, never one
claim counted twice; a reversed or extended claim is stored beside the old one, so
nothing the agent said is lost. :func:`propose` is that proposer: the lexical signals of
:mod:`ledger.conflicts.signals`; then, for a pair that reads the same but for one word
of meaning (or a few words of meaning and one plain word) or one list, ``changed
relation``, ``changed tense`` ... ``changed list``
(:func:`meaning_signal`); ``swapped words`` for a claim that exchanges two of the
other's words ("Dave reports to Carol"); and ``changed value`` for a pair worded alike
whose value words differ (a path, a version, a name the signals do not read).
Stdlib only.
"""

from __future__ import annotations

from functools import lru_cache

from ledger.regex import compile as _compile

from .signals import (
    _NON_TOKEN,
    STOPWORDS,
    Suspicion,
    _score,
    content_tokens,
    overlap,
    signals,
    subject_differs,
    suspect,
)
from .values import cjk_apart, is_unit, normalise, read
from .wording import (
    CHANGED_VALUE,
    FILLER,
    IN_BEFORE_PLACE,
    MEANING,
    PAST,
    PLACE_NOUNS,
    SAME_LIST,
    bounds,
    canon,
    list_change,
    meaning_change,
    prepare,
    sort_lists,
)

#: Minimum Jaccard overlap of stemmed content tokens for :func:`changed_value` (the
#: proposer's "same statement, other value"): a sentence with a fifth of its words
#: changed is not worded alike.
NEAR_DUPLICATE = 0.8

#: The most content tokens two claims may hold apart for :func:`meaning_signal` to read
#: them (a first cut): words of meaning and one plain word, or (with a comma) a list.
MAX_APART = 4
MAX_APART_LIST = 8

_EDGE = "\"'`()[]{}<>,;!?."
_QUOTED = _compile(r"\"([^\"]+)\"|'([^']+)'|`([^`]+)`")
_SENTENCE_END = (".", "!", "?", ":")


# A one-letter command-line option in capitals ("-R", "-N"): its case is its meaning
# (ls -r / -R, git log -n / -N), so it is read as a word of its own before case folds.
# Not in a text written all in capitals ("RUN DOCKER COMPOSE UP -D" repeats "... up -d").
_UPPER_FLAG = _compile(r"(?<![\w-])-([A-Z])(?![\w-])")


def _reads_flags(text: str) -> bool:
    """Whether ``text`` may hold an :data:`_UPPER_FLAG` that means one: a hyphen, and
    some lower-case letter (a text all in capitals says nothing by its case)."""
    return "-" in text and any(c.islower() for c in text)


def _flags_kept(text: str) -> str:
    """``text`` with each :data:`_UPPER_FLAG` written ``-capital-r``, which case folding
    keeps apart from ``-r``."""
    return _UPPER_FLAG.sub(lambda m: "-capital-" + m.group(1).lower(), text)


@lru_cache(maxsize=4096)  # pure; remember compares one text with up to 200 peers
def normal(text: str) -> str:
    """``text`` compared for exact duplicates: case and whitespace folded (but for a
    one-letter option in capitals, :data:`_UPPER_FLAG`), final punctuation dropped."""
    if _reads_flags(text):
        text = _flags_kept(text)
    return " ".join(text.casefold().split()).rstrip(".!;")


# A digit, a path or identifier character, an inner dot (the edges are stripped first),
# or an upper-case letter after the first: 8080, src/app.py, snake_case, a:b, PORT, camelCase.
_VALUE_CHARS = _compile(r"[0-9/\\_:@=#$%.]|.[A-Z]")


def _is_value(word: str, sentence_start: bool) -> bool:
    core = word.strip(_EDGE)
    if not core:
        return False
    if _VALUE_CHARS.search(core):
        return True
    return core[0].isupper() and not sentence_start  # a name mid-sentence


@lru_cache(maxsize=8192)  # pure; remember compares one text with up to 200 peers
def _words(text: str) -> tuple[tuple[str, bool], ...]:
    """``(word, is_value)`` for each whitespace word, with quoted spans as values."""
    out = []
    start = True
    after_number = False
    for raw in prepare(text).split():  # operators and "n't" as words, as sequence() reads them
        word = raw.strip(_EDGE).casefold()
        # A word of one or two letters that is no stopword ("lives in x", "written in
        # js") is a value too: the overlap never sees it (content tokens are longer than
        # 2 characters), so without this "x" -> "y" would be one claim counted twice. A
        # unit after a number ("500 ms", "2:30 pm") is part of a quantity the signals
        # compare instead ("500 ms" == "0.5 s").
        short = (0 < len(word) <= 2 and word not in STOPWORDS and word not in MEANING
                 and not (after_number and is_unit(word)))
        out.append((word, _is_value(raw, start) or short))
        after_number = any(c.isdigit() for c in word)
        start = raw.endswith(_SENTENCE_END)
    for m in _QUOTED.finditer(text):
        span = next(g for g in m.groups() if g is not None)
        out.extend((w.strip(_EDGE).casefold(), True) for w in span.split())
    return tuple((w, v) for w, v in out if w)


def values(text: str) -> set[str]:
    """The value words of ``text``, casefolded (see the module docstring)."""
    return {w for w, v in _words(text) if v}


def _stem(tok: str) -> str:
    if tok.endswith("ing") and len(tok) > 5:
        tok = tok[:-3]
    elif tok.endswith("ed") and len(tok) > 4:
        tok = tok[:-2]
    elif tok.endswith("s") and not tok.endswith("ss") and len(tok) > 3:
        tok = tok[:-1]
    if tok.endswith("e") and len(tok) > 3:
        tok = tok[:-1]
    return tok


def _stem_tensed(tok: str) -> str:
    """:func:`_stem`, with a past-tense ``-ed`` kept as a mark: "the build used a cache"
    is not "the build uses a cache" (:data:`~ledger.conflicts.wording.PAST`)."""
    if tok.endswith("ed") and len(tok) > 3:
        return _stem(tok[:-1]) + PAST  # used -> use -> us, as uses -> us
    return _stem(tok)


@lru_cache(maxsize=8192)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(content_tokens(text))


def _raw_overlap(a: str, b: str) -> float:
    """Jaccard of the unstemmed content tokens (each text's set cached: the duplicate
    check and the proposer both ask for every peer): a cheap first cut, since stemming
    only merges a few inflections."""
    x, y = _token_set(a), _token_set(b)
    return len(x & y) / len(x | y) if x and y else 0.0


@lru_cache(maxsize=1024)  # pure; the duplicate check and the proposer ask for each (new claim, peer)
def _shared_at_most(tokens: frozenset[str], other: str) -> int:
    """An upper bound on ``len(tokens & _token_set(other))``, found without reading
    ``other``'s tokens: how many of ``tokens`` occur anywhere in ``other`` lower-cased.

    ``remember`` compares one new claim with up to 200 peers, each read for the first
    time (a fresh process, or a peer no earlier write met), and most of them share a word
    or two with it at most; cutting a peer's tokens (normalise, a regex, a filter) cost
    more than everything else the duplicate check and the proposer did with it. The new
    claim's tokens are cached, so this is a few substring tests in C per peer.

    Why it is an upper bound (``tests/test_duplicates_fast.py`` checks it on generated
    texts): a content token of ``other`` is a run of characters of
    ``normalise(other).lower()`` (the seed's cleaning only turns single characters into
    spaces), so it occurs there. For ASCII text :func:`~ledger.conflicts.values.normalise`
    only inserts spaces (it sets versions apart: "python3" -> "python 3"), so the token,
    which holds no space, occurs in ``other.lower()`` too; other text is normalised first
    (NFC may change its characters)."""
    low = (other if other.isascii() else normalise(other)).lower()
    return sum(map(low.__contains__, tokens))  # no Python frame per token


def _half_shared_possible(tokens: frozenset[str], other: str) -> bool:
    """False only when ``_raw_overlap`` of the text whose tokens are ``tokens`` and
    ``other`` is certainly below 0.5: a Jaccard of 0.5 needs at least half of either
    set shared (``|x & y| >= |x | y| / 2 >= |x| / 2``). An empty ``tokens`` gives 0."""
    return bool(tokens) and 2 * _shared_at_most(tokens, other) >= len(tokens)


# Punctuation that ends a clause: a comma list never runs across it.
_CLAUSE_END = frozenset(".;:!?()[]{}")


def _before_place(raws: list[str], i: int) -> bool:
    """Whether what follows ``raws[i]`` (articles skipped, two words at most) is a place:
    a name or path that is no number (``docs/``, ``Settings``, "the generated docs/"),
    or a word naming a container ("the docs folder"):
    :data:`~ledger.conflicts.wording.IN_BEFORE_PLACE`."""
    plain = 0
    for raw in raws[i + 1:i + 5]:
        word = raw.strip(_EDGE).casefold()
        if not word or word in FILLER:
            continue
        if word in PLACE_NOUNS:
            return True
        if _is_value(raw, False):
            return not word[0].isdigit()  # "under 100 ms" is a bound
        plain += 1
        if plain == 2 or raw[-1] in _CLAUSE_END or raw.endswith(","):
            return False
    return False


# Symbols that change a value and that _NON_TOKEN would drop: "costs €5" is not "costs
# £5", "-0.5" not "0.5", "~=3.10" not "==3.10", "status ✅" not "status ❌", "C#" not "C",
# "90°" not "90", "A → B" not "A ← B"; the signals read none of them. Outside ASCII every
# symbol (Unicode categories Sc, Sk, Sm, So: currency, modifiers, maths, emoji and other
# signs); in ASCII the ones that are no punctuation ($ + = | ~ ^), the ones that are
# values inside a word ("50%" is not "50", "**/*.py" not "*.py", "1.2.*" not "1.2",
# "a&b" not "a b"), a '#' glued to a word or number, and a hyphen standing as a minus
# right before a digit (not "1-2", "--x"); outside ASCII also the per-mille and prime
# signs, punctuation by category but units in use ("50‰" is not "50%", 5′ not 5″).
_KEPT_ASCII = _compile(r"[$+=|~^%*&]|(?<=\w)#|#(?=\w)|(?<![\w.-])-(?=\d)")
_KEPT_MARKS = frozenset("\u2030\u2031\u2032\u2033")
# A written word of punctuation only is a value when it stands alone ("the separator is
# ;", "use && between commands", "a -- b"), except the marks prose sets apart: dashes,
# ellipses, bullets, a colon or a slash between spaces.
_PROSE_MARKS = frozenset({"-", "\u2013", "\u2014", "\u2026", "...", "\u00b7", "\u2022", "*", ":", "/"})


def _symbol_word(sym: str) -> str:
    """One kept symbol as a word of its own, named by its code point in decimal (the
    token characters would drop the symbol itself; digits are never stemmed): a minus
    is "minus" in either spelling."""
    return " minus " if sym in ("-", "\u2212") else f" sym{ord(sym)} "


def _symbols_apart(low: str) -> str:
    """``low`` (one written word) with each kept symbol (:data:`_KEPT_ASCII`, and outside
    ASCII every character of a Symbol category) made a word of its own."""
    if low.isalnum():  # most words: letters and digits only, nothing to look for
        return low
    if _KEPT_ASCII.search(low) is not None:
        low = _KEPT_ASCII.sub(lambda m: _symbol_word(m.group()), low)
    if low.isascii():
        return low
    from unicodedata import category

    return "".join(_symbol_word(c) if not c.isascii() and (category(c)[0] == "S" or c in _KEPT_MARKS) else c
                   for c in low)


@lru_cache(maxsize=8192)  # pure; remember compares one text with up to 200 peers
def sequence(text: str) -> tuple[str, ...]:
    """The words of ``text`` a duplicate must repeat in the same order: casefolded,
    punctuation dropped, lightly stemmed, :data:`~ledger.conflicts.wording.FILLER` left
    out unless it is a value (``Plan A``: a capital letter mid-sentence is a name), the
    words that change a claim's meaning kept in their canonical form (``were`` ->
    ``was``, ``>=`` -> ``gte``, ``under docs/`` -> ``at docs/``:
    :mod:`ledger.conflicts.wording`), and each comma list of items of one length one
    token of its items sorted ("ruff, black, mypy" = "black, ruff, mypy"; lists of
    items of several lengths are compared pairwise, :func:`units`)."""
    return tuple(sort_lists(list(units(text))))


@lru_cache(maxsize=8192)  # pure; remember compares one text with up to 200 peers
def units(text: str) -> tuple[str, ...]:
    """:func:`sequence` before its lists are sorted: the units (the words of one written
    word, joined by a space) with the markers ``","``, ``"and"``, ``"or"`` and ``"|"``
    (a clause ends) that :func:`~ledger.conflicts.wording.sort_lists` and
    :func:`~ledger.conflicts.wording.list_change` read."""
    out: list[str] = []
    start = True
    raws = prepare(cjk_apart(text)).split()
    flags = _reads_flags(text)
    for i, raw in enumerate(raws):
        if i and not raw[0].isalnum() and not any(c.isalnum() for c in raw) and raw not in _PROSE_MARKS:
            # punctuation standing alone, after a word: a value ("the separator is ;")
            out.append(" ".join(_symbol_word(c).strip() for c in raw))
            start = False
            continue
        value = _is_value(raw, start)
        start = raw.endswith(_SENTENCE_END)
        if raw[0] in _CLAUSE_END:
            out.append("|")
        # The seed's token characters (signals._NON_TOKEN): "app.cfg" reads "app cfg",
        # "snake_case" "snake case", and "net-45" stays one word. The words of one
        # written word stay one unit for the lists (sort_lists).
        unit = []
        low = (_flags_kept(raw) if flags else raw).casefold()  # "-R" is not "-r"
        if low in IN_BEFORE_PLACE and _before_place(raws, i):
            low = IN_BEFORE_PLACE[low]  # "lives under docs/" = "lives in docs/"
        if raw not in _PROSE_MARKS:  # a bullet "*" alone stays prose
            low = _symbols_apart(low)  # "€5" is not "£5", "✅" not "❌"
        for tok in _NON_TOKEN.sub(" ", low).split():
            for t in canon(tok.strip("-")).split():
                if t in FILLER and not value:
                    continue
                unit.append(t if t in MEANING or t in ("and", "or") else _stem_tensed(t))
        if len(unit) == 1 or unit and unit[0] not in ("and", "or"):
            out.append(" ".join(unit))
        else:
            out.extend(unit)
        if raw.endswith(","):
            out.append(",")
        elif raw[-1] in _CLAUSE_END:
            out.append("|")
    return tuple(bounds(out))  # "up to 3" = "at most 3" = "<= 3"


def _width_folded(text: str) -> str:
    """``text`` in NFKC: fullwidth letters and digits (``ＰＯＲＴ ８０８０``, typed with a
    CJK input method) are the ASCII ones, as search and agent ids read them."""
    if text.isascii():
        return text
    from unicodedata import normalize

    return normalize("NFKC", text)


def is_near_duplicate(a: str, b: str) -> bool:
    """Whether ``b`` says the same as ``a``: the same words in the same order up to
    filler, case, width (NFKC), punctuation and inflection, and no value changed (module
    docstring). Symmetric."""
    a, b = _width_folded(a), _width_folded(b)
    if normal(a) == normal(b):
        return True
    # The cheapest test first: most peers fail it. remember calls this with (peer, new
    # claim), so ``b``'s tokens are the cached ones and ``a`` is only searched.
    if not _half_shared_possible(_token_set(b), a) or _raw_overlap(a, b) < 0.5:
        return False
    return same_sequence(a, b) and not signals(a, b) and not _separators_changed(a, b)


_SEPARATORS = "._/\\-"
_NO_SEPARATORS = str.maketrans("", "", _SEPARATORS)


def _separators_changed(a: str, b: str) -> bool:
    """Whether a value word of ``a`` is one of ``b`` with other separators ("app.cfg" /
    "app_cfg", "FOO_BAR" / "FOO.BAR", "a/b" / "a\\b", "db-prod" / "db.prod"): the
    sequence reads every separator as a space, but they are two names. Asked only once
    the sequences are equal."""
    sa = {w for w in values(a) if any(c in _SEPARATORS for c in w.strip(_SEPARATORS))}
    sb = {w for w in values(b) if any(c in _SEPARATORS for c in w.strip(_SEPARATORS))}
    if sa == sb:
        return False
    kb = {w.translate(_NO_SEPARATORS): w for w in sb - sa}
    return any(kb.get(w.translate(_NO_SEPARATORS), w) != w for w in sa - sb)


def same_sequence(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` read as the same words in the same order: equal
    :func:`sequence`, or lists of items of several lengths that hold the same items in
    another order (:func:`~ledger.conflicts.wording.list_change`)."""
    return sequence(a) == sequence(b) or list_change(units(a), units(b)) == SAME_LIST



def _plain_stems(words: list[tuple[str, bool]]) -> set[str]:
    return {_stem(w) for w, v in words if not v and len(w) > 2 and w not in STOPWORDS}


def changed_value(a: str, b: str) -> bool:
    """The same statement about a different value: the non-value words overlap by at
    least :data:`NEAR_DUPLICATE` and the value words differ (``src/app.py`` vs
    ``lib/app.py``, ``Alice`` vs ``Bob``)."""
    if _raw_overlap(a, b) < 0.5:
        return False  # cheap first cut: not worded alike even counting the values' parts
    wa, wb = _words(a), _words(b)
    vals = {w for w, v in wa if v} | {w for w, v in wb if v}
    if not vals or {w for w, _ in wa if w in vals} == {w for w, _ in wb if w in vals}:
        return False
    x, y = _plain_stems([(w, w in vals) for w, _ in wa]), _plain_stems([(w, w in vals) for w, _ in wb])
    return bool(x and y) and len(x & y) / len(x | y) >= NEAR_DUPLICATE


@lru_cache(maxsize=8192)
def _read_as_value(word: str) -> bool:
    v = read(word)
    return bool(v.quantities or v.dates or v.times or v.weekdays or v.months or v.paths or v.states or v.choices)


def _unread_change(a: str, b: str) -> bool:
    """Some value word differs that the signals do not read (a name, a product, an
    identifier): those they read were already compared by :func:`suspect`."""
    va, vb = values(a), values(b)
    return any(not _read_as_value(w) for w in va ^ vb)


def meaning_signal(a: str, b: str) -> str | None:
    """The signal for two claims that read the same but for one word that changes the
    meaning (a relation, tense, modality, quantifier, comparison or truth value), one
    comma list (an item gained, lost or replaced), or one value word the signals do not
    read ("FIFO" / "LIFO"): :func:`ledger.conflicts.wording.meaning_change` on their
    :func:`sequence`, or None. A changed value word at the head of the claim is a second
    subject, not a change (:func:`~ledger.conflicts.signals.subject_differs`)."""
    # Cheap first cut (tokens cached; remember asks for up to 200 peers): a change of up
    # to three words of meaning and one plain word ("before the build" / "after the
    # build step") changes at most four content tokens, a list of up to four-word items
    # more.
    ta, tb = _token_set(a), _token_set(b)
    if not _few_apart(len(ta ^ tb), len(ta & tb), a, b):
        return None
    x, y = sequence(a), sequence(b)
    if x == y or abs(len(x) - len(y)) > 5:
        return None
    listed = list_change(units(a), units(b))
    if listed == SAME_LIST:
        return None  # the same items in another order
    # value words that are one word of the sequence (a path's parts are no value words),
    # stemmed as the sequence holds them ("/metrics" is "metric" there)
    vals = frozenset(_stem(p[0]) for p in (_NON_TOKEN.sub(" ", w).split() for w in values(a) | values(b))
                     if len(p) == 1)
    changed = meaning_change(x, y, vals) or listed
    if changed == CHANGED_VALUE and subject_differs(a, b):
        return None
    return changed


def _few_apart(apart: int, shared: int, a: str, b: str) -> bool:
    """:func:`meaning_signal`'s first cut: ``a`` and ``b`` hold at most :data:`MAX_APART`
    content tokens apart (:data:`MAX_APART_LIST` when either has a comma) and share at
    least half as many as they hold apart. Monotone: fewer apart or more shared never
    turns it False, so bounds on both give a bound on it."""
    return apart <= (MAX_APART_LIST if "," in a or "," in b else MAX_APART) and 2 * shared >= max(apart, 1)


def _one_word_apart_possible(ta: frozenset[str], near: int, a: str, b: str) -> bool:
    """False only when :func:`meaning_signal`'s first cut would rule ``a`` and ``b`` out,
    judged from ``ta`` (``a``'s tokens) and ``near`` (at least the tokens shared:
    :func:`_shared_at_most`). Tokens apart (``ta ^ tb``) are at least ``len(ta) - near``,
    so too many of them, or too few shared for them, already show without ``b``'s own
    tokens."""
    return _few_apart(len(ta) - near, near, a, b)


#: The signal :func:`propose` adds for a claim that swaps two of the other's words.
SWAPPED_WORDS = "swapped words"

# Two words joined by one of these read the same either way round ("Alice and Bob").
_COORDINATING = frozenset({"and", "or"})


def swapped_words(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two of its words exchanged and nothing else changed
    (in :func:`sequence` terms): "Carol reports to Dave" / "Dave reports to Carol",
    "from Postgres to MySQL" / "to Postgres from MySQL". Neighbours ("red big") and the
    two sides of an "and"/"or" are not a swap: a list's order says nothing. A rewording
    that moves a block ("Staging has debug logging on") changes more than two places."""
    x, y = sequence(a), sequence(b)
    if len(x) != len(y) or x == y:
        return False
    diff = [i for i, (u, v) in enumerate(zip(x, y)) if u != v]
    if len(diff) != 2:
        return False
    i, j = diff
    if x[i] != y[j] or x[j] != y[i] or j == i + 1:
        return False
    return not (j == i + 2 and x[i + 1] in _COORDINATING)


def propose(a: str, b: str) -> Suspicion | None:
    """Why ``a`` and ``b`` may contradict each other, or None: the seed's lexical
    :func:`~ledger.conflicts.signals.suspect` (both texts width folded first), else the
    :func:`meaning_signal` of a pair that differs by one word of meaning or one list,
    else a ``swapped words`` suspicion when
    :func:`swapped_words` holds, else a ``changed value`` suspicion when
    :func:`changed_value` holds (one signal each, scored by the seed's formula)."""
    # Width folded as the duplicate check folds it: "８０８０" is 8080.
    a, b = _width_folded(a), _width_folded(b)
    s = suspect(a, b)
    if s is not None:
        return s
    # Every test below first needs the two texts to share most of their tokens. remember
    # calls this with (new claim, peer): ``a``'s tokens are cached, and a bound on the
    # shared ones (substring tests, :func:`_shared_at_most`) rules most peers out before
    # their own tokens are cut. Each gate is implied by the test it guards, so no answer
    # changes (tests/test_duplicates_fast.py compares with the tests alone).
    ta = _token_set(a)
    near = _shared_at_most(ta, b)
    changed = meaning_signal(a, b) if _one_word_apart_possible(ta, near, a, b) else None
    if changed is not None:
        ov = overlap(a, b)
        return Suspicion(overlap=round(ov, 4), signals=(changed,), score=_score(ov, 1))
    if not _half_shared_possible(ta, b):
        return None  # _raw_overlap(a, b) < 0.5: no swap (below) and no changed value
    if _raw_overlap(a, b) >= 0.5 and swapped_words(a, b):
        # Who reports to whom, which way data moves: the same words, another meaning.
        ov = overlap(a, b)
        return Suspicion(overlap=round(ov, 4), signals=(SWAPPED_WORDS,), score=_score(ov, 1))
    if not changed_value(a, b):
        return None
    if subject_differs(a, b) or not _unread_change(a, b):
        # issue 15: "the iOS app" vs "the Android app" are two subjects; "6am" vs
        # "06:00" or "500 ms" vs "0.5 s" are values the signals read and found equal.
        return None
    ov = overlap(a, b)
    return Suspicion(overlap=round(ov, 4), signals=(CHANGED_VALUE,), score=_score(ov, 1))
