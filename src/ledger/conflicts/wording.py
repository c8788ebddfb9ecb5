"""The words of a claim that change what it says without being values: relations
("works *for*" / "works *with*"), tense ("*is* enabled" / "*was* enabled"), modality
(*must* / *may*), quantifiers (*all* / *some* / *no*), comparisons (*min* / *max*, ``>=`` /
``<=``), truth values and negations, and the order-free lists of a claim ("ruff, black,
mypy"). Pure, stdlib only.

The contradiction proposer's frame leaves such words out on purpose (they carry no
subject or attribute, docs/contradictions.md), and the duplicate check used to leave most
of them out as *filler*, so "The billing service works for the EU region" then "... with
the EU region" was counted as corroboration and the second text was lost. Here:

* :func:`words` is the claim as the duplicate check compares it: casefolded, punctuation
  dropped, :data:`FILLER` (true filler only: articles, the present tense of "be" and
  "do", "it", "this", "that", "which") left out, the meaning words kept in a canonical
  form (``were`` -> ``was``, ``in``/``on``/``at`` -> ``at``, ``>=`` -> ``gte``, ``can't`` ->
  ``can not``), and each comma list of the same-length items replaced by one token of
  its items sorted, so a reordered list reads the same and a list that gains, loses or
  replaces an item does not;
* :func:`list_change` reads two claims' lists of items of several lengths together,
  where one claim alone cannot say where its list starts and ends;
* :func:`meaning_change` names what changed between two claims whose words are the same
  but for one meaning word (``changed relation``, ``changed tense``, ...), a few words
  of meaning and one plain word at most, or one list (``changed list``): the signal the
  proposer adds for such a pair.
"""

from __future__ import annotations

from ledger.regex import IGNORECASE
from ledger.regex import compile as _compile

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only
    import re

#: Words a rewording may add, drop or change without changing the claim: articles, the
#: present tense of "be" (a claim in the present needs no auxiliary: "logging on in
#: staging"), and pronouns that only point back. Everything else counts ("do" too: "...;
#: Rita does" says who does it).
FILLER: frozenset[str] = frozenset("a an the is are am be been being it its this that which".split())

#: Canonical forms: two spellings of one meaning compare equal. ``in``/``on``/``at`` only
#: place a thing ("runs in CI" / "runs on CI", "in staging" / "on staging"), and so do
#: ``inside`` and ``upon``; ``via`` is ``through``; ``beneath`` and ``underneath`` are
#: ``below``. Opposites stay apart: ``outside``, ``above``/``below``, ``before``/``after``.
_CANON = {
    "were": "was", "did": "was", "have": "has", "having": "has", "shall": "will", "ll": "will",
    "in": "at", "on": "at", "inside": "at", "upon": "at", "into": "to", "onto": "to", "towards": "toward",
    "till": "until", "via": "through", "beneath": "below", "underneath": "below",
    "minimum": "min", "maximum": "max", "needs": "need", "cannot": "can not",
}

#: Relation words that mean ``in`` (or ``through``) only when a place follows: "lives
#: *under* docs/" is "lives in docs/", "talks *over* HTTPS" is "via HTTPS", but "*under*
#: 100 ms" is a bound, "*within* one hour" a deadline and "the footer *under* the
#: header" a layout. A place is a name or path (``docs/``, ``Settings``, ``tool.ruff``)
#: or a word that names a container (:data:`PLACE_NOUNS`); the caller
#: (:func:`ledger.conflicts.duplicates.sequence`) looks at what follows.
IN_BEFORE_PLACE: dict[str, str] = {"under": "at", "within": "at", "over": "through"}
#: Words that name a container of files, settings or code: "under the docs *folder*".
PLACE_NOUNS = frozenset("""
    folder folders subfolder directory directories subdirectory dir dirs path root repo repository tree module
    modules package packages namespace section key table menu tab page project workspace crate app
""".split())

#: Meaning words by kind (canonical forms), and the signal :func:`meaning_change` reports.
_KINDS: dict[str, tuple[str, str]] = {
    "relation": ("changed relation",
                 "for with without to from at of by as over under above below before after since until via through "
                 "across against between within inside outside behind beyond around toward near per except than"),
    "tense": ("changed tense", "was has had will"),
    "modal": ("changed modality", "must may might should can could would need ought"),
    "quantifier": ("changed quantifier",
                   "all some none any every each most many few several both either neither no only always sometimes "
                   "often usually rarely seldom"),
    "comparison": ("changed comparison",
                   "min max least more less fewer greater higher lower larger smaller bigger earlier later older newer "
                   "first last top bottom up down gt lt gte lte neq"),
    "truth": ("changed truth value", "true false yes"),
    "negation": ("negation on one side", "not never nor"),
}
#: Verbs that say the opposite of each other ("keys *include* the user id" / "*exclude*"),
#: each inflection read as its base form.
_ACTIONS = ("include exclude allow deny accept reject add remove increase decrease encrypt decrypt import export "
            "upload download push pull start stop grant revoke").split()
# (enabled/disabled, locked/unlocked are states: the signals compare them where asserted,
# and "can be enabled" / "can be disabled" are two possibilities, not a change.)


def _inflections(base: str) -> tuple[str, ...]:
    stem = base[:-1] if base.endswith("e") else base
    ed = base + "d" if base.endswith("e") else (base + "ped" if base in ("stop",) else base + "ed")
    ing = stem + ("ping" if base == "stop" else "ing")
    return (base + ("es" if base.endswith(("sh", "ss")) else "s"), ed, ing)


_CANON.update({form: base for base in _ACTIONS for form in _inflections(base)})
_KINDS["action"] = ("changed action", " ".join(_ACTIONS))
MEANING: dict[str, str] = {w: kind for kind, (_, ws) in _KINDS.items() for w in ws.split()}

#: Meaning words whose presence on one side only is no change: a relation word alone
#: (its object moved or went: "tagged by CI" / "tagged CI"), and the universal
#: quantifiers a plain claim already means ("tests run in CI" / "all tests run in CI").
_NEUTRAL_ALONE = frozenset("all every each always".split()) | {w for w, k in MEANING.items() if k in ("relation", "action")}

#: The signal for a list that gained, lost or replaced an item.
CHANGED_LIST = "changed list"
#: The signal for one value word replaced by another ("the queue is FIFO" / "LIFO").
CHANGED_VALUE = "changed value"
#: Every signal :func:`meaning_change` may report.
SIGNALS: tuple[str, ...] = tuple(name for name, _ in _KINDS.values()) + (CHANGED_LIST, CHANGED_VALUE)

# Comparison operators as words ("python >= 3.10", "python>=3.10"); arrows (->, =>, <-,
# <=>) and shifts (<<, >>) are not comparisons.
_OPERATORS = (
    (_compile(r"(?<![<=>-])>=(?!>)"), " gte "),
    (_compile(r"(?<![<=>])<=(?![=>])"), " lte "),
    (_compile(r"!=|<>"), " neq "),
    (_compile(r"(?<![-=<>])>(?![>=])"), " gt "),
    (_compile(r"(?<![<])<(?![<=>-])"), " lt "),
    (_compile("≥"), " gte "),
    (_compile("≤"), " lte "),
    (_compile("≠"), " neq "),
)
_NOT = _compile(r"\b(can|won|shan)['’]t\b|n['’]t\b", IGNORECASE)  # can't, won't, isn't, doesn't
_NOT_HEADS = {"can": "can not", "won": "will not", "shan": "shall not"}
_LIST_MARK = "\x00"  # starts a list token: no word begins with it
#: Ends a word of the sequence that was written with a past "-ed" ("tagged"): the stem
#: alone would make "used" the "uses" of another claim.
PAST = "\x01ed"


def _not(m: re.Match[str]) -> str:
    head = m.group(1)
    return _NOT_HEADS[head.lower()] if head else " not"


def prepare(text: str) -> str:
    """``text`` with comparison operators and "n't" spelled as words (``python>=3.10`` ->
    ``python gte 3.10``, ``can't`` -> ``can not``, ``isn't`` -> ``is not``); case kept."""
    if "<" in text or ">" in text or "!=" in text or "≥" in text or "≤" in text or "≠" in text:
        for pattern, word in _OPERATORS:
            text = pattern.sub(word, text)
    if "'" in text or "’" in text:
        text = _NOT.sub(_not, text)
    return text


#: Words and phrases that bound a number, by the operator they mean: "retried *up to* 3
#: times" is "*at most* 3 times" and "<= 3", "*over* 100 jobs" is "*more than* 100" and
#: "> 100". Read so only right before a number (:func:`bounds`): "up to date", "the max
#: pool size", "above the fold" keep their words. Inclusive and strict bounds stay apart
#: ("up to 3" / "under 3"). Keys are units as the sequence holds them (``in``/``on``/``at``
#: are ``at``).
_BOUNDS: dict[tuple[str, ...], str] = {
    ("at", "most"): "lte", ("up", "to"): "lte", ("max",): "lte", ("no", "more", "than"): "lte",
    ("not", "more", "than"): "lte",
    ("at", "least"): "gte", ("min",): "gte", ("no", "less", "than"): "gte", ("not", "less", "than"): "gte",
    ("no", "fewer", "than"): "gte", ("not", "fewer", "than"): "gte",
    ("more", "than"): "gt", ("greater", "than"): "gt", ("over",): "gt", ("above",): "gt",
    ("less", "than"): "lt", ("fewer", "than"): "lt", ("under",): "lt", ("below",): "lt",
}
_BOUND_LONGEST = max(len(k) for k in _BOUNDS)
_BOUND_STARTS = frozenset(k[0] for k in _BOUNDS)
_NUMBER_NAMES = frozenset("one two three four five six seven eight nine ten eleven twelve".split())


def bounds(units: list[str]) -> list[str]:
    """``units`` with each phrase of :data:`_BOUNDS` that stands right before a number (a
    unit starting with a digit, or a number word) replaced by its operator word."""
    if not any(u in _BOUND_STARTS for u in units):
        return units
    out: list[str] = []
    i = 0
    while i < len(units):
        if units[i] in _BOUND_STARTS:
            for n in range(_BOUND_LONGEST, 0, -1):
                op = _BOUNDS.get(tuple(units[i:i + n]))
                nxt = units[i + n] if i + n < len(units) else ""
                if op and (nxt[:1].isdigit() or nxt in _NUMBER_NAMES):
                    out.append(op)
                    i += n
                    break
            else:
                out.append(units[i])
                i += 1
            continue
        out.append(units[i])
        i += 1
    return out


def canon(tok: str) -> str:
    """The canonical form of one casefolded word (``were`` -> ``was``)."""
    return _CANON.get(tok, tok)


def is_list(tok: str) -> bool:
    return tok.startswith(_LIST_MARK)


def sort_lists(tokens: list[str]) -> list[str]:
    """``tokens`` (units: the words of one written word joined by a space, as
    ``python3.11`` gives "python 3 11"; with ``","``, ``"and"``, ``"or"`` and ``"|"`` for a
    clause end) as words, each comma list made one token of its items sorted, the
    markers dropped.

    A list is three or more items joined by commas and at most one final "and"/"or"
    (two items are no list: "yes, the CI caches" / "no, the CI caches"); the items
    between two separators set the item length (1-4 written words, all equal), the first item is that many words before the first
    separator and the last that many after the last one ("we lint with ruff, black, mypy
    before commits": ruff, black, mypy)."""
    out: list[str] = []
    clause: list[str] = []
    for tok in [*tokens, "|"]:
        if tok == "|":
            for unit in _lists_in(clause):
                out.extend((unit,) if is_list(unit) else unit.split(" "))
            clause = []
        else:
            clause.append(tok)
    return out


def _lists_in(tokens: list[str]) -> list[str]:
    if "," not in tokens:
        return tokens
    # Pieces between separators; a separator is (comma?, "and"/"or"/"")
    pieces: list[list[str]] = [[]]
    seps: list[tuple[bool, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "," or tok in ("and", "or"):
            comma = tok == ","
            conj = "" if comma else tok
            if comma and i + 1 < len(tokens) and tokens[i + 1] in ("and", "or"):
                conj = tokens[i + 1]
                i += 1
            seps.append((comma, conj))
            pieces.append([])
        else:
            pieces[-1].append(tok)
        i += 1
    out: list[str] = []
    s = 0
    while s < len(pieces):
        found = _list_at(pieces, seps, s)
        if found is not None:
            e, k = found
            first = pieces[s]
            items = [first[len(first) - k:], *pieces[s + 1:e], pieces[e][:k]]
            if _clauses(first[:len(first) - k] + [t for piece in pieces[:s] for t in piece], items):
                found = None  # clauses in their order, not a list
        if found is None:
            out.extend(pieces[s])
            if s < len(seps) and seps[s][1]:
                out.append(seps[s][1])  # "and"/"or" outside a list says which branch
            s += 1
            continue
        conj = "or" if any(c == "or" for _, c in seps[s:e]) else "and"
        out.extend(first[:len(first) - k])
        out.append(_LIST_MARK + conj + ":" + "|".join(sorted(" ".join(it) for it in items)))
        pieces[e] = pieces[e][k:]  # what follows the last item (it may start another list)
        s = e
    return out


# Words (as units() gives them: some stemmed) that make what follows a sequence of
# clauses in which order is the meaning: "if the cache misses, the job fails, we retry"
# is not "if the job fails, the cache misses, we retry". The same holds for clauses
# whose subject is a pronoun ("..., we retry"). Such a run of commas is no list: the
# items keep their order, so the two claims differ (a reordered list of names is one claim).
_ORDERED_LEAD = frozenset({"if", "when", "whenever", "onc", "once", "after", "before", "unless", "until", "whil",
                           "while", "becaus", "because", "then", "first", "so"})
_PRONOUNS = frozenset({"i", "we", "you", "they", "he", "she", "it"})


def _clauses(before: list[str], items) -> bool:
    """Whether a run of comma-separated ``items`` (lists of units) is a sequence of
    clauses rather than a list: a word of :data:`_ORDERED_LEAD` before it in its clause
    (``before``), or an item of two or more words starting with a pronoun."""
    return any(t in _ORDERED_LEAD for t in before) or any(len(it) > 1 and it[0] in _PRONOUNS for it in items)


def _list_at(pieces: list[list[str]], seps: list[tuple[bool, str]], s: int) -> tuple[int, int] | None:
    """``(e, k)`` when a list starts with the last ``k`` words of ``pieces[s]`` and ends
    with the first ``k`` of ``pieces[e]``, else None. A piece after a plain comma is a
    middle item when another separator follows it and its length (1-4 words) is the
    other middle items' length; the piece after an "and"/"or" holds the last item."""
    if s >= len(seps):
        return None
    e, k = s + 1, 0
    while (not seps[e - 1][1] and e < len(seps) and 1 <= len(pieces[e]) <= 4
           and (not k or len(pieces[e]) == k)):
        k = len(pieces[e])
        e += 1
    if e < s + 2 or not any(comma for comma, _ in seps[s:e]):
        return None  # "A and B", "yes, the CI": no list (clauses keep their order)
    if len(pieces[s]) < k or len(pieces[e]) < k:
        return None
    return e, k


def _common_ends(x: tuple[str, ...], y: tuple[str, ...]) -> tuple[int, int]:
    """``(p, s)``: the number of leading words ``x`` and ``y`` share, and of trailing words
    they share after those (at most the shorter's length less ``p``), so that
    ``x[p:len(x) - s]`` and ``y[p:len(y) - s]`` are what differs."""
    n = min(len(x), len(y))
    p = 0
    while p < n and x[p] == y[p]:
        p += 1
    s = 0
    while s < n - p and x[-1 - s] == y[-1 - s]:
        s += 1
    return p, s


def meaning_change(x: tuple[str, ...], y: tuple[str, ...], values: frozenset[str] = frozenset()) -> str | None:
    """The signal for two word sequences (:func:`ledger.conflicts.duplicates.sequence`)
    that are equal but for one meaning word changed, added or dropped (or two or three
    words of meaning and one plain word at most: :func:`_words_changed`), or one list
    changed: ``changed relation``, ``changed tense`` ... (:data:`SIGNALS`), or None.
    ``values``: the pair's value words (stemmed, as the sequences hold them): one of them
    replaced by another, no digit in either, is ``changed value`` (the caller checks that
    it is not a second subject: "the *iOS* app" / "the *Android* app")."""
    if x == y:
        return None
    i, j = _common_ends(x, y)
    dx, dy = x[i:len(x) - j], y[i:len(y) - j]
    if _list_changed(dx, dy) or _list_changed(dy, dx):
        return CHANGED_LIST
    if len(dx) > 1 or len(dy) > 1:
        return _words_changed(dx, dy, values)
    words = dx + dy
    if len(words) == 2 and words[0].removesuffix(PAST) == words[1].removesuffix(PAST):
        return _KINDS["tense"][0]  # "the build used a cache" / "uses a cache"
    if any(w in values for w in words):
        # "in May" is the month, not the modal; FIFO / LIFO is a changed value (numbers
        # are the signals' to compare)
        if len(words) == 2 and all(w in values and not any(c.isdigit() for c in w) for w in words):
            return CHANGED_VALUE
        return None
    kinds = [MEANING.get(w) for w in words]
    if None in kinds:
        return None
    if len(words) == 1 and words[0] in _NEUTRAL_ALONE:
        return None
    if len(words) == 2 and kinds[0] != kinds[1]:
        # "must" for "was": both kinds changed; name them in a fixed order
        return _KINDS[min(kinds)][0]  # type: ignore[type-var]
    return _KINDS[kinds[0]][0]  # type: ignore[index]


def _words_changed(dx: tuple[str, ...], dy: tuple[str, ...], values: frozenset[str]) -> str | None:
    """The signal for a difference of two or three words a side where the words that
    differ are words of meaning, but for at most one plain word added or dropped: "up
    to 3 times" / "at least 3 times", "before the build" / "after the build step". A
    value among them is the value signals' to judge; meaning words added on one side
    only that are :data:`_NEUTRAL_ALONE` are no change."""
    if len(dx) > 3 or len(dy) > 3 or any(is_list(w) for w in dx + dy):
        return None
    cx, cy = list(dx), list(dy)
    for w in _common(dx, dy):
        cx.remove(w)
        cy.remove(w)
    changed = cx + cy
    if any(w in values for w in changed) or sum(w not in MEANING for w in changed) > 1:
        return None
    mx, my = [w for w in cx if w in MEANING], [w for w in cy if w in MEANING]
    if not (mx and my) and (len(mx + my) < len(changed) or all(w in _NEUTRAL_ALONE for w in mx + my)):
        # Words of meaning on one side only: a change when they are all that differs
        # ("retries 3 times" / "up to 3 times"), not when they stand for a plain word
        # ("forbidden" / "not allowed"); and none at all is no change of meaning.
        return None
    return _KINDS[min(MEANING[w] for w in mx + my)][0]


def _common(x: tuple[str, ...], y: tuple[str, ...]) -> list[str]:
    """A longest common subsequence of two short tuples (at most 3 words each)."""
    if not x or not y:
        return []
    if x[0] == y[0]:
        return [x[0], *_common(x[1:], y[1:])]
    a, b = _common(x[1:], y), _common(x, y[1:])
    return a if len(a) >= len(b) else b


def _list_changed(dx: tuple[str, ...], dy: tuple[str, ...]) -> bool:
    """``dx`` is one list and ``dy`` another list, or the words of a shorter or longer
    list that is no list token (two items: "ruff, black" / "ruff and black")."""
    if len(dx) != 1 or not is_list(dx[0]):
        return False
    if len(dy) == 1 and is_list(dy[0]):
        return True
    items = set(" ".join(dx[0].split(":", 1)[1].split("|")).split())
    rest = [w for w in dy if w not in ("and", "or")]
    return bool(rest) and len(rest) <= 4 and (set(rest) <= items or items <= set(rest))


_SEPARATORS = frozenset({",", "and", "or"})
#: What :func:`list_change` answers for the same list in another order.
SAME_LIST = "same list"
#: Longest item of a list, in units (written words).
_MAX_ITEM = 4


def list_change(x: tuple[str, ...], y: tuple[str, ...]) -> str | None:
    """How two claims' comma lists differ, read pairwise on their units with markers
    (:func:`ledger.conflicts.duplicates.units`), for lists whose items are not all one
    length, which :func:`sort_lists` cannot set apart alone ("lint, unit tests, docs":
    where does the first item start?). The words the two claims share before and after
    the difference bound the list where no comma does.

    Returns :data:`SAME_LIST` when the difference is the same items in another order
    (three items or more, the same "and"/"or"), :data:`CHANGED_LIST` when items were
    gained, lost or replaced (each changed item at most one word longer than the
    shortest item between two commas: "..., mypy and the CI runs them nightly" ends in
    a clause, not an item; with two items only, one word next to the comma
    replaced, no digit in it: "deps: numpy, torch" / "deps: numpy, pandas"), else None (no list, or
    more than a list changed)."""
    if "," not in x and "," not in y:
        return None
    p, s = _common_ends(x, y)
    if p == len(x) == len(y):
        return None
    ex, ey = len(x) - s, len(y) - s
    if "|" in x[p:ex] or "|" in y[p:ey]:
        return None  # more than one clause changed
    # What the regions touch: a separator, a clause end, or the text's end.
    edge = {"|"} | _SEPARATORS
    touches = (p == 0 or x[p - 1] in edge or s == 0 or x[ex] in edge
               or any(t in _SEPARATORS for t in x[p:ex]) or any(t in _SEPARATORS for t in y[p:ey]))
    one_word, p0 = ex - p == ey - p == 1, p
    beside_comma = (p > 0 and x[p - 1] == ",") or (s > 0 and x[ex] == ",")
    # Widen the regions to whole items where a separator bounds them; where none does
    # (the first item's start, the last item's end), the shared words are the bound.
    b = p
    while b > 0 and x[b - 1] not in edge:
        b -= 1
    if b > 0 and x[b - 1] in _SEPARATORS:
        p = b
    e = 0
    while e < s and x[ex + e] not in edge:
        e += 1
    if e < s and x[ex + e] in _SEPARATORS:
        ex, ey = ex + e, ey + e
    ix, cx = _items(x[p:ex])
    iy, cy = _items(y[p:ey])
    if any(len(it) > _MAX_ITEM for it in ix + iy):
        return None
    nx, ny = _list_size(x, p), _list_size(y, p)
    if sorted(ix) == sorted(iy):
        c = _clause_start(x, p)
        if _clauses(list(x[c:p]), ix) or _clauses(list(y[c:p]), iy):
            return None  # clauses in another order: another claim
        return SAME_LIST if sorted(cx) == sorted(cy) and min(nx[0], ny[0]) >= 3 else None
    if not touches:
        return None  # a word inside a clause changed, not an item ("the CI caches them")
    if max(nx[0], ny[0]) >= 3:
        shortest = min(nx[1] + ny[1], default=1)
        changed = [it for it in ix if it not in iy] + [it for it in iy if it not in ix]
        return CHANGED_LIST if all(len(it) <= shortest + 1 for it in changed) else None
    if nx[0] == ny[0] == 2 and one_word and beside_comma and not any(c.isdigit() for c in x[p0] + y[p0]):
        return CHANGED_LIST
    return None


def _items(region: tuple[str, ...]) -> tuple[list[tuple[str, ...]], list[str]]:
    """The items of ``region`` (between separators) and its "and"/"or" words."""
    items: list[tuple[str, ...]] = []
    conj: list[str] = []
    cur: list[str] = []
    for t in region:
        if t in _SEPARATORS:
            if t != ",":
                conj.append(t)
            if cur:
                items.append(tuple(cur))
            cur = []
        else:
            cur.append(t)
    if cur:
        items.append(tuple(cur))
    return items, conj


def _clause_start(tokens: tuple[str, ...], at: int) -> int:
    """The index where the clause holding ``tokens[at]`` starts (after the last ``"|"``
    before it)."""
    while at > 0 and tokens[at - 1] != "|":
        at -= 1
    return at


def _list_size(tokens: tuple[str, ...], at: int) -> tuple[int, list[int]]:
    """The number of items of the clause around ``tokens[at]`` (pieces between
    separators, a comma and an "and" together being one) when it holds a comma, else 0;
    and the lengths of its pieces that stand between two separators."""
    b = _clause_start(tokens, at)
    e = at
    while e < len(tokens) and tokens[e] != "|":
        e += 1
    clause = tokens[b:e]
    if "," not in clause:
        return 0, []
    pieces: list[int] = [0]
    for t in clause:
        if t in _SEPARATORS:
            if pieces[-1]:
                pieces.append(0)
        else:
            pieces[-1] += 1
    if not pieces[-1]:
        pieces.pop()
    return len(pieces), pieces[1:-1]
