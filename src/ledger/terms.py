"""Search terms: what the index holds and what a query asks for (docs/search.md).

Pure and stdlib only (L0); the store turns these into FTS5 rows and MATCH expressions.

Three kinds of term, for text as people write it:

* **word**: a run of letters and digits, as SQLite's ``unicode61`` tokenizer sees it,
  after NFKC folding (fullwidth ``Ｐｙｔｈｏｎ`` is ``python``); a version glued to its
  word is two words (:func:`split_versions`: ``python3`` is ``python`` ``3``). Words go to the word index
  (BM25, porter stemming) and alphabetic words of 3+ letters to the vocabulary that
  fuzzy matching expands into.
* **compound**: letters or digits joined by symbols that are part of a term in code and
  commands: ``c++``, ``node.js``, ``--force``, ``-v``, ``@scope/pkg``, ``3.11``,
  ``utf-8``. Indexed whole, as written, in a side index, so ``c++`` is not the word
  ``c`` (which as a prefix matches cache, cookie, cron...).
* **symbol**: emoji and other non-ASCII symbols (``🔥``, ``✅``, ``→``, ``≥``, ``€``,
  ``°``): ``unicode61`` drops them as separators, so "deploy is 🔥 broken" was never
  found by ``🔥``. Each is indexed as one token of the side index; a run of them is
  searched as the phrase of its symbols. Skin-tone modifiers, variation selectors and
  joiners are left out, so ``👍🏽`` is found by ``👍``.
* **CJK run**: Chinese, Japanese or Korean text has no spaces between words, and the
  word tokenizer keeps a whole run as one token, so a word inside a sentence is never
  found. Runs are indexed as overlapping character pairs (bigrams) in the side index; a
  query run of 2 characters is its bigram, i.e. a substring match, and a longer one the
  phrase of its bigrams and each bigram alone (:func:`cjk_query_phrases`).
  Everything else reads the text with each CJK run set apart by spaces
  (:func:`set_apart_cjk`), so ``redis`` in ``我们用Redis做缓存`` is a word and ``config.yaml``
  in ``設定ファイルはconfig.yamlにあります`` a compound, as if written with spaces.

Fuzzy matching is defined on words: a query word of 4+ letters expands to the
vocabulary words within a small edit distance (:func:`max_edits`), see
:func:`edit_distance` and docs/search.md for when it applies.
"""

from __future__ import annotations

import unicodedata

from ledger import regex

#: Symbols that join letters or digits into one term (``c++``, ``node.js``, ``-v``,
#: ``@scope/pkg``, ``a_b``, ``~/x``, ``k=v``, ``$HOME``, ``50%``, ``a&b``, ``*.py``, ``c#``).
JOINERS = "+#@/.-_~:=&%$*\\"
# A candidate term: a run of letters/digits and joiners; anything else separates.
_TOKEN = regex.compile(r"(?:[^\W_]|[" + regex.escape(JOINERS) + r"])+")
_WORD = regex.compile(r"[^\W_]+")
# Han (with extensions and compatibility ideographs), the ideographic iteration and
# closing marks and ideographic zero (々 〆 〇 〻), Hiragana, Katakana (with its phonetic
# extensions), Hangul syllables and jamo, as sorted code point ranges. Not a regex class:
# compiling one that spans the supplementary planes costs ~15 ms, paid by every CLI
# start (docs/benchmarks.md "Start-up").
_CJK_RANGES = (
    (0x1100, 0x11FF), (0x3005, 0x3007), (0x303B, 0x303B), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF),
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F),
    (0x30000, 0x323AF),
)


def _in_cjk_ranges(o: int) -> bool:
    for lo, hi in _CJK_RANGES:  # sorted: stop at the first range above (bisect would add to start-up)
        if o < lo:
            return False
        if o <= hi:
            return True
    return False


# is_cjk by character, filled as characters are seen: every character of a non-ASCII text
# is classified several times per write (word text, compounds, vocabulary, CJK runs), and
# a dict lookup is a fraction of the range scan. Bounded by the characters a process
# meets (_MEMO_MAX at most).
_CJK_MEMO: dict[str, bool] = {}
_MEMO_MAX = 1 << 16


def is_cjk(ch: str) -> bool:
    """Whether one character is Han, Hiragana, Katakana, Hangul (syllable or jamo) or
    one of the ideographic marks that are letters (``々``, ``〆``, ``〇``, ``〻``)."""
    v = _CJK_MEMO.get(ch)
    if v is None:
        v = ord(ch) >= 0x1100 and _in_cjk_ranges(ord(ch))
        if len(_CJK_MEMO) < _MEMO_MAX:
            _CJK_MEMO[ch] = v
    return v


def _has_cjk(text: str) -> bool:
    return not text.isascii() and any(is_cjk(c) for c in text)


def set_apart_cjk(text: str) -> str:
    """``text`` with a space between every CJK character (:func:`is_cjk`) and a
    non-space character of another script next to it, so each CJK run stands apart
    as if written with spaces around it: ``"我们用Redis做缓存"`` is ``"我们用 Redis 做缓存"``,
    ``"node.js版本20"`` is ``"node.js 版本 20"``. Chinese and Japanese are written without
    spaces, and the word tokenizers (SQLite's ``unicode61``, PostgreSQL's parser) take a
    CJK run and the Latin word or number touching it as one token, so neither was ever
    found. A combining mark or variation selector stays with the character before it.
    Identity for text without CJK (and for ASCII, checked first: most text)."""
    if text.isascii():
        return text
    out: list[str] = []
    prev = None  # the side of the last non-space character: True CJK, False other, None space or start
    changed = False
    memo = _CJK_MEMO
    for c in text:
        if c.isspace():
            prev = None
        else:
            side = memo.get(c)
            if side is None:
                side = is_cjk(c)
            if prev is not None and side != prev:
                if unicodedata.category(c)[0] == "M" or 0xFE00 <= ord(c) <= 0xFE0F or 0xE0100 <= ord(c) <= 0xE01EF:
                    side = prev  # a mark shapes the character before it
                else:
                    out.append(" ")
                    changed = True
            prev = side
        out.append(c)
    return "".join(out) if changed else text


# A word that is letters then a number: python3, node18, es2015, and v2 (a version). The
# letters are 2+ (one letter and digits is a name: s3, m1, h264, x86), and the word
# starts and ends at a non-letter, non-digit (``_`` separates words, as for the word
# index). Digits are ASCII (NFKC has folded fullwidth ones already).
_VERSIONED = regex.compile(r"(?<![^\W_])([^\W\d_]{2,}|[vV])([0-9]+)(?![^\W_])")
#: Letters that are not split from the number after them: English stop words of 2-3
#: letters (PostgreSQL's ``english`` list), which PostgreSQL's word index drops, so
#: ``on1`` searched as the phrase "on 1" would be any text with a 1 there.
_STOP_HEADS = frozenset("""
    me my we our you he him his she her it its who am is are was be has had do did an the and but if or as of at
    by for to up in out on off why how all any few no nor not own so too can don now
""".split())


def _split_number(m) -> str:
    head = m.group(1)
    return m.group(0) if head.lower() in _STOP_HEADS else head + " " + m.group(2)


def split_versions(text: str) -> str:
    """``text`` with a space between the letters and the number of every word that is
    letters then digits (docs/search.md "Terms"): ``python3.11`` is ``python 3.11``,
    ``node18`` is ``node 18``, ``es2015`` is ``es 2015``, ``v2.4.1`` is ``v 2.4.1``, so the
    word index holds the number as a word of its own and ``3.11``, ``18``, ``2015`` and
    ``2.4.1`` (and ``python``, ``node`` in keyword mode) find them. Left whole: one letter
    and digits other than ``v`` (``s3``, ``h264``, ``x86``: names, not a word and its
    version), a stop word and digits (``on1``), digits then letters (``10ms``, ``2fa``)
    and words with more than one letter-digit edge (``log4j``, ids, hashes)."""
    if not any(d in text for d in "0123456789"):  # most text: ten scans in C, no regex
        return text
    return _VERSIONED.sub(_split_number, text)


def word_text(text: str) -> str:
    """What the word index is fed for ``text``: NFKC (:func:`nfkc`: fullwidth text is
    found by ASCII queries), CJK runs set apart (:func:`set_apart_cjk`), a version's
    number set apart from the word it is glued to (:func:`split_versions`). Case is kept
    (the tokenizers fold it). Identity for ASCII text without such a word."""
    return split_versions(set_apart_cjk(nfkc(text)))


def _split_cjk(text: str) -> tuple[list[str], str]:
    """(the CJK runs of ``text``, ``text`` with each run replaced by a space)."""
    if text.isascii():
        return [], text
    runs, rest, cur = [], [], []
    for c in text:
        if is_cjk(c):
            cur.append(c)
            continue
        if cur:
            runs.append("".join(cur))
            rest.append(" ")
            cur = []
        rest.append(c)
    if cur:
        runs.append("".join(cur))
        rest.append(" ")
    return runs, "".join(rest)


_JOINER_SET = frozenset(JOINERS)
# Sentence punctuation that is also a joiner: stripped from a term's end ("see node.js."),
# and ':' from its start.
_TRAIL = ".:"
MAX_COMPOUND = 64  # longer runs (URLs, hashes) are not indexed whole
MIN_VOCAB = 3  # vocabulary words have at least 3 letters (a 4-letter query minus one edit)
MAX_VOCAB = 40
MIN_FUZZY = 4  # shorter words have too many neighbours to expand usefully
MIN_PREFIX = 3  # a 1-2 character prefix matches too much of the store to mean anything
PUA = 0xE000  # compound symbols become private-use characters (see encode_compound)


def fold(text: str) -> str:
    """NFKC then lower case: fullwidth letters and digits become ASCII, ligatures split,
    ``①`` is ``1``. ASCII text is only lowercased."""
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower()


def nfkc(text: str) -> str:
    """NFKC only (case kept), so fullwidth text is found by ASCII queries: the first step
    of :func:`word_text`, what the word index is fed. Identity for ASCII."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def is_fuzzy_word(word: str) -> bool:
    """Alphabetic (letters only, no digits or CJK) and at least 3 long: the words that
    go in the vocabulary. Digits are never fuzzed: ``3.11`` and ``3.12`` are different facts."""
    return MIN_VOCAB <= len(word) <= MAX_VOCAB and word.isalpha() and not _has_cjk(word)


def vocabulary_words(text: str) -> set[str]:
    """The words of ``text`` that go into the fuzzy vocabulary (folded; CJK runs set
    apart, so ``redis`` of ``我们用Redis做缓存`` is one; versions too, so ``python`` of
    ``python3.11`` is one: :func:`split_versions`)."""
    return {w for w in _WORD.findall(split_versions(set_apart_cjk(fold(text)))) if is_fuzzy_word(w)}


def _clean(token: str) -> str:
    token = token.rstrip(_TRAIL).lstrip(":")
    return token


def compounds(text: str) -> list[str]:
    """Compound terms of ``text`` (folded), in order, duplicates kept: letters or digits
    joined by :data:`JOINERS`, without trailing ``.``/``:``. No CJK, at most 64 chars.
    CJK runs are set apart first (:func:`set_apart_cjk`): ``config.yaml`` of
    ``設定ファイルはconfig.yamlにあります`` is one, as a query splits it."""
    out = []
    for tok in _TOKEN.findall(set_apart_cjk(fold(text))):
        tok = _clean(tok)
        if not tok or len(tok) > MAX_COMPOUND or _has_cjk(tok):
            continue
        if any(c in _JOINER_SET for c in tok) and any(c.isalnum() for c in tok):
            out.append(tok)
    return out


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run; a single character is itself."""
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


#: A query's CJK run of this many characters or more is read as words written without
#: spaces (a question, a sentence), not as one word: see :func:`cjk_query_phrases`.
#: Three, not four: a three-character question (``池多大``, "how big is the pool") is as
#: much several words as a longer one, and as one phrase it found nothing.
CJK_RUN_OF_WORDS = 3
#: At most this many of a long run's bigrams are searched one by one (the first ones):
#: a pasted paragraph would otherwise make a query of hundreds of phrases.
MAX_CJK_BIGRAMS = 64


def cjk_query_phrases(run: str) -> list[list[str]]:
    """The phrases (each a list of bigrams, in order) a CJK run of a query is searched as,
    OR-ed like the query's other words (docs/search.md "CJK").

    A run of 1-2 characters is a word: one phrase, its bigram, so the run must stand in
    the text as typed (``連接`` finds ``…使用連接池…``). A longer run is most often
    several words with no space between them (``数据库连接池多大``, "how big is the
    database connection pool"; ``池多大``, "how big is the pool"), which a text seldom
    holds whole: it is searched as the whole run (ranking a text that holds it first)
    and as each of its distinct bigrams alone (at most :data:`MAX_CJK_BIGRAMS`), so a
    text holding ``连接池`` is found and ranks by how many of the question's pairs it
    shares, as English words are OR-ed. Word
    boundaries are not known (no dictionary), so pairs that straddle two words
    (``库连``) are searched too; they rarely match anything."""
    whole = bigrams(run)
    if len(run) < CJK_RUN_OF_WORDS:
        return [whole]
    seen: set[str] = set()
    alone = [b for b in whole if not (b in seen or seen.add(b))][:MAX_CJK_BIGRAMS]
    return [whole] + [[b] for b in alone]


def cjk_cut(run: str) -> str | None:
    """The last pair of a query's CJK ``run`` searched alone when :func:`cjk_query_phrases`
    leaves pairs out (more than :data:`MAX_CJK_BIGRAMS` distinct ones), else None. The
    pairs after it are only searched as part of the whole run, so a text holding just
    them is not found: the search says so (``too-many-terms``, ``service._text_notes``)."""
    if len(run) <= MAX_CJK_BIGRAMS + 1:  # a run of n characters has at most n - 1 distinct pairs
        return None
    distinct = list(dict.fromkeys(bigrams(run)))
    return distinct[MAX_CJK_BIGRAMS - 1] if len(distinct) > MAX_CJK_BIGRAMS else None


def cjk_runs(text: str) -> list[str]:
    """The CJK runs of ``text`` (folded), in order."""
    return _split_cjk(fold(text))[0]


# Characters that shape the symbol before them and are not symbols of their own: emoji
# skin tones, variation selectors, the zero-width joiner and the keycap mark.
_SYMBOL_SHAPERS = frozenset([*map(chr, range(0x1F3FB, 0x1F400)), "\ufe0e", "\ufe0f", "\u200d", "\u20e3"])
SYMBOL_MARK = chr(PUA + 0x100)  # brackets an encoded symbol (see encode_symbol)


def is_symbol(ch: str) -> bool:
    """A non-ASCII character of a Unicode symbol category (Sm, Sc, Sk, So: emoji, arrows,
    math, currency, degree) that is not a shaper of the one before (skin tone...).
    ASCII symbols (``+``, ``$``, ``=``) are left to words and compounds."""
    return ord(ch) > 127 and ch not in _SYMBOL_SHAPERS and unicodedata.category(ch)[0] == "S"


def symbol_runs(text: str) -> list[str]:
    """The runs of :func:`is_symbol` characters of ``text`` (folded), shapers dropped:
    ``"deploy 🔥🔥 now ✅"`` -> ``["🔥🔥", "✅"]``."""
    if text.isascii():
        return []
    runs, cur = [], []
    for c in fold(text):
        if is_symbol(c):
            cur.append(c)
        elif c not in _SYMBOL_SHAPERS and cur:
            runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def encode_symbol(ch: str) -> str:
    """The single FTS5 token a symbol is indexed and searched as: its code point in hex
    between two :data:`SYMBOL_MARK` private-use characters (token characters for
    ``unicode61``; no word or compound token holds U+E100)."""
    return f"{SYMBOL_MARK}{ord(ch):x}{SYMBOL_MARK}"


def symbol_phrase(run: str) -> str:
    """The side-index phrase of a run of symbols (one token each)."""
    return " ".join(encode_symbol(c) for c in run)


def encode_compound(term: str) -> str:
    """The single FTS5 token a compound is indexed and searched as.

    ``unicode61`` splits on symbols, so each ASCII joiner becomes the private-use
    character U+E000 + its code (private-use characters are token characters), and
    U+E000 ends the token, so the porter stemmer (which only strips ASCII endings)
    leaves it whole and it can never equal an ordinary word."""
    return "".join(chr(PUA + ord(c)) if c in _JOINER_SET else c for c in term) + chr(PUA)


def side_text(text: str) -> str:
    """What the side index holds for a memory: its encoded compounds, then the bigrams
    of each CJK run, then its symbols (:func:`encode_symbol`). Empty for most plain
    text."""
    parts = [encode_compound(c) for c in compounds(text)]
    for run in cjk_runs(text):
        parts.append(" ".join(bigrams(run)))
    parts += [symbol_phrase(r) for r in symbol_runs(text)]
    return " ".join(parts)


# ------------------------------------------------------------------------------ queries
class QueryTerms:
    """The parts of a query's free text, each de-duplicated in first-seen order.

    ``words``: folded words for the word index. ``phrases``: word sequences that were
    joined in a compound (``node.js`` -> ``node js``) or glued as a version
    (``python3`` -> ``python 3``), searched as exact phrases in the word index, or with
    their last word a prefix (:func:`prefix_phrases`). ``compounds``: compounds for the
    side index. ``cjk``: CJK runs. ``symbols``: runs of symbols (:func:`symbol_runs`).
    ``starred``: the words and phrases typed with a trailing ``*`` (``deploy*``,
    ``3.1*`` -> ``3 1``), searched as prefixes in every mode (:func:`prefix_words`,
    :func:`prefix_phrases`). ``versions``: the phrases of words typed as letters then
    digits (``python3``), whose last word is a prefix as a word's would be.
    ``short_stars``: terms typed with a ``*`` after a single character (``d*``,
    ``-v*``, ``c++*``), as searched without it: the ``*`` is not honoured, and the
    search says so (``short-prefix``).

    ``searched``: how many distinct terms these lists hold (a term is a word, compound,
    CJK run or symbol run as typed, with what it brings along: ``node.js`` is one term,
    searched as the compound and the phrase "node js"). ``capped``: the text held more
    and :func:`split_query` kept only the first ``searched``; ``last``: the last term
    kept then, as folded ("" when none was left out). Not part of equality: two splits
    that search the same terms are equal."""

    __slots__ = ("words", "phrases", "compounds", "cjk", "symbols", "starred", "versions", "short_stars", "searched",
                 "capped", "last")

    def __init__(self, words=(), phrases=(), compounds=(), cjk=(), symbols=(), starred=(), versions=(), short_stars=(),
                 *, searched=0, capped=False, last=""):
        self.words, self.phrases, self.compounds, self.cjk = tuple(words), tuple(phrases), tuple(compounds), tuple(cjk)
        self.symbols, self.starred = tuple(symbols), tuple(starred)
        self.versions, self.short_stars = tuple(versions), tuple(short_stars)
        self.searched, self.capped, self.last = searched, capped, last

    def __bool__(self) -> bool:
        return bool(self.words or self.phrases or self.compounds or self.cjk or self.symbols)

    def __eq__(self, other) -> bool:
        return isinstance(other, QueryTerms) and self._key() == other._key()

    def _key(self):
        return (self.words, self.phrases, self.compounds, self.cjk, self.symbols, self.starred, self.versions,
                self.short_stars)

    def __repr__(self) -> str:
        return (f"QueryTerms(words={self.words}, phrases={self.phrases}, compounds={self.compounds}, cjk={self.cjk}, "
                f"symbols={self.symbols}, starred={self.starred}, versions={self.versions}, "
                f"short_stars={self.short_stars})")


#: The shortest word a trailing ``*`` makes a prefix (``py*``): one letter (``c*``) would
#: ask for every word that starts with it, and is searched as the word.
MIN_STAR_PREFIX = 2

#: The most distinct terms one query searches (docs/search.md "Terms"): the first this
#: many, in the order typed; the rest are left out and the result says so (the
#: ``too-many-terms`` warning). Each term costs a vocabulary lookup (its fuzzy
#: neighbours, its prefix's missed stems) and a phrase of the MATCH expression, so a
#: pasted page of 20,000 characters (1,300 distinct words) took 0.4-1.4 s at 2.8k
#: memories; 64 terms take 10-70 ms there (docs/benchmarks.md "Long queries").
#: A question is a few words and a pasted error message a few dozen.
MAX_QUERY_TERMS = 64


def split_query(terms, stopwords=frozenset(), limit: int | None = MAX_QUERY_TERMS) -> QueryTerms:
    """Classify the parser's whitespace-split ``terms`` (see the module docstring and
    docs/search.md "Terms").

    A compound is searched whole; if it joins two or more words (``node.js``,
    ``@scope/pkg``, ``3.11``) those words are also searched as an exact phrase, so text
    that writes them apart is found too. A compound around one word (symbols only at
    its ends) is searched as written and, when the word has :data:`MIN_PREFIX` or more
    characters, as that word too, so punctuation left on a word does not hide it
    (``-deploy``, ``deploy-``, ``--force`` also finds "force push", below the text
    that writes ``--force``); a shorter one (``c++``, ``c#``, ``-v``, ``50%``) only as
    written: ``c++`` never asks for ``c``.

    A word that is letters then a number (``python3``, ``node18``) is the phrase of the
    two, as the word index holds it (:func:`split_versions`), in ``versions``: its
    number is a prefix where the word would be (:func:`prefix_phrases`). In a compound
    its parts are split the same way (``python3.11`` is also the phrase "python 3 11").

    A trailing ``*`` means "starts with": it is not part of the term. A word it ends
    (``deploy*``, ``-deploy*``, ``-py*``) is in ``starred``, a prefix in every mode
    (:func:`prefix_words`); so is the phrase of a compound or version it ends (``3.1*``
    is "3 1", ``node.js*`` "node js", ``python3*`` "python 3"), whose last word is then
    a prefix (:func:`prefix_phrases`). A ``*`` after a single character (``d*``,
    ``-v*``, ``c++*``: one letter would start most words) is not honoured: the term is
    searched as it is without it and listed in ``short_stars``. Words in ``stopwords``
    are dropped unless nothing else is left (question words carry no topic); a starred
    word is never dropped.

    Only the first ``limit`` distinct terms are kept (None: all), in the order typed
    (within one whitespace-separated piece its CJK and symbol runs come first); a term
    that only repeats what is kept takes no place, nor does a dropped stopword. The
    rest of the text is not read once a term past the limit is found (the work a query
    causes is bounded), and the result's ``capped`` says so. Everything downstream sees
    only the kept terms: a capped query is searched exactly as the query of those terms
    alone."""
    kept: list[tuple[str, str]] = []  # (list, value) in order, distinct
    seen: set[tuple[str, str]] = set()
    set_aside: list[str] = []  # stopwords, searched only if nothing else is left
    starred: set[str] = set()
    versions: set[str] = set()
    short: list[str] = []  # terms whose * was not honoured, as searched
    searched = 0
    last = ""
    capped = False
    for shown, unit, star, short_star, version in _units(terms):
        if star:
            starred.add(star)
        if version:
            versions.add(version)
        unit = [m for m in unit if m not in seen]
        if not unit:
            if short_star:
                short.append(short_star)
            continue  # a repeat of terms already kept
        if all(k == "word" and v in stopwords and v not in starred for k, v in unit):
            set_aside += [v for _, v in unit]  # (one word: a stopword's unit holds nothing else)
            continue
        unit = [m for m in unit if not (m[0] == "word" and m[1] in stopwords and m[1] not in starred)]
        if limit is not None and searched >= limit:
            capped = True
            break
        seen.update(unit)
        kept += unit
        searched += 1
        last = shown
        if short_star:
            short.append(short_star)
    if not kept:  # stopwords alone are searched as typed, the first `limit` of them
        words = list(dict.fromkeys(set_aside))
        capped = limit is not None and len(words) > limit
        words = words[:limit]
        return QueryTerms(words, searched=len(words), capped=capped, last=words[-1] if capped else "")
    out: dict[str, list[str]] = {"word": [], "phrase": [], "comp": [], "cjk": [], "sym": []}
    for k, v in kept:
        out[k].append(v)
    return QueryTerms(out["word"], out["phrase"], out["comp"], out["cjk"], out["sym"],
                      [w for w in out["word"] if w in starred] + [p for p in out["phrase"] if p in starred],
                      [p for p in out["phrase"] if p in versions], list(dict.fromkeys(short)), searched=searched,
                      capped=capped, last=last if capped else "")


def _units(terms):
    """The terms of :func:`split_query`'s ``terms``, lazily, in order: ``(token as
    folded, [(list, value), ...] it adds, the word or phrase its trailing * stars or "",
    the term as searched when its * is not honoured (after one character) or "", the
    phrase of a version glued to its word or "")``, where list is ``word``, ``phrase``,
    ``comp``, ``cjk`` or ``sym`` (a :class:`QueryTerms` field)."""
    for raw in terms:
        runs, text = _split_cjk(fold(raw))
        for r in runs:
            yield r, [("cjk", r)], "", "", ""
        for r in symbol_runs(text):
            yield r, [("sym", r)], "", "", ""
        for tok in _TOKEN.findall(text):
            tok = _clean(tok)
            star = tok.endswith("*")
            if star:
                tok = _clean(tok.rstrip("*"))
            parts = _WORD.findall(split_versions(tok))
            if not parts:
                continue
            joined = any(c in _JOINER_SET for c in tok)
            if len(parts) == 2 and not joined:
                phrase = " ".join(parts)  # python3: the word index holds "python 3"
                yield tok, [("phrase", phrase)], phrase if star else "", "", phrase
            elif joined and len(tok) <= MAX_COMPOUND:
                if len(parts) >= 2:
                    phrase = " ".join(parts)
                    yield tok, [("comp", tok), ("phrase", phrase)], phrase if star else "", "", ""
                elif len(parts[0]) >= MIN_PREFIX or (star and len(parts[0]) >= MIN_STAR_PREFIX):
                    yield tok, [("comp", tok), ("word", parts[0])], parts[0] if star else "", "", ""
                else:
                    yield tok, [("comp", tok)], "", tok if star else "", ""  # c++*, -v*: as written
            else:
                for w in parts:
                    one = star and len(parts) == 1
                    yield w, [("word", w)], w if one else "", w if one and len(w) < MIN_STAR_PREFIX else "", ""


def prefix_words(qt: QueryTerms, mode: str, stopwords=frozenset()) -> list[str]:
    """The words of ``qt`` searched as prefixes (docs/search.md "Prefixes"), in order:
    every starred word (``deploy*``) of :data:`MIN_STAR_PREFIX` or more characters, in
    any mode (the user asked for it); and outside ``keyword`` mode every word of
    :data:`MIN_PREFIX` or more characters, unless the words are ``stopwords`` alone
    (:func:`split_query` keeps them when nothing else is left; they are then searched
    as typed: ``for`` is not also ``force``). The one rule for both engines' query
    expressions."""
    star = set(w for w in qt.starred if len(w) >= MIN_STAR_PREFIX)
    if mode == "keyword" or all(w in stopwords for w in qt.words):
        return [w for w in qt.words if w in star]
    return [w for w in qt.words if len(w) >= MIN_PREFIX or w in star]


def prefix_phrases(qt: QueryTerms, mode: str) -> list[str]:
    """The phrases of ``qt`` whose last word is searched as a prefix (docs/search.md
    "Terms"), in order: every starred phrase, in any mode (``3.1*`` is "3 1" with ``1``
    a prefix: 3.1, 3.11, 3.12; ``node.js*`` finds node.json); and outside ``keyword``
    mode the phrase of a version typed glued to its word when that word has
    :data:`MIN_PREFIX` or more characters, as the word itself would be a prefix
    (``python3`` finds python3, python 3.11, python311; ``v2`` stays exact). A phrase
    of a compound typed without a star stays exact: ``3.12`` is not ``3.121``. The last
    word may be a single character: the words before it anchor the phrase. The one
    rule for both engines' query expressions."""
    star = set(qt.starred)
    versions = set(qt.versions) if mode != "keyword" else set()
    return [p for p in qt.phrases if p in star or (p in versions and len(p) - p.count(" ") >= MIN_PREFIX)]


# ------------------------------------------------------------------------------ fuzzy
def max_edits(word: str) -> int:
    """Edits a query word may be away from a vocabulary word: 0 below 4 letters, 1 for
    4-7, 2 for 8 or more (the usual typo budget of search engines)."""
    n = len(word)
    return 0 if n < MIN_FUZZY else 1 if n < 8 else 2


def swaps(word: str) -> set[str]:
    """The words one swap of two adjacent, different letters away from ``word``
    (``deplyo`` -> ``edplyo``, ``dpelyo``, ``delpyo``, ``depylo``, ``deploy``), for a
    word that has fuzzy neighbours at all (:func:`max_edits` at least 1; empty
    otherwise). A swap is the commonest typing error and costs 2 in
    :func:`edit_distance`, more than a word of 4-7 letters may be away; so a word's
    neighbours are the words within :func:`max_edits` of it *and* the words one swap
    away (docs/search.md "Fuzzy neighbours"). Each is looked up as it is, not through
    the trigram bound (a swap changes up to 4 trigrams, and a bound of 4 per edit
    would read most of the vocabulary for long words)."""
    if not max_edits(word):
        return set()
    out = set()
    for i in range(len(word) - 1):
        a, b = word[i], word[i + 1]
        if a != b:
            out.add(word[:i] + b + a + word[i + 2:])
    return out


def edit_distance(a: str, b: str, cap: int) -> int:
    """Levenshtein distance (insert, delete or substitute one character, each costing 1)
    between ``a`` and ``b``, or ``cap + 1`` as soon as it is known to exceed ``cap``.
    Plain Levenshtein, not Damerau: a swap of two letters counts 2, which keeps the
    trigram bound of :func:`padded_trigrams` at 3 per edit (words one swap away are
    neighbours through :func:`swaps` instead).

    Runs once per candidate neighbour of every unknown query word, so it only computes
    what the cap needs: for ``cap`` 1 a comparison of the tails after the common
    prefix; above, the cells within ``cap`` of the diagonal (any other cell is more
    than ``cap`` already, since the distance of two prefixes is at least the
    difference of their lengths)."""
    if a == b:
        return 0
    la, lb = len(a), len(b)
    if cap <= 0 or abs(la - lb) > cap:
        return cap + 1
    if cap == 1:
        i = 0
        n = min(la, lb)
        while i < n and a[i] == b[i]:
            i += 1
        if la == lb:
            return 1 if a[i + 1:] == b[i + 1:] else 2
        return 1 if (a[i + 1:] == b[i:] if la > lb else a[i:] == b[i + 1:]) else 2
    over = cap + 1
    prev = [j if j <= cap else over for j in range(lb + 1)]
    for i in range(1, la + 1):
        cur = [over] * (lb + 1)
        if i <= cap:
            cur[0] = i
        ca = a[i - 1]
        lo = cur[0]
        for j in range(max(1, i - cap), min(lb, i + cap) + 1):
            v = prev[j - 1] + (ca != b[j - 1])
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if cur[j - 1] + 1 < v:
                v = cur[j - 1] + 1
            if v > over:
                v = over
            cur[j] = v
            if v < lo:
                lo = v
        if lo > cap:
            return over
        prev = cur
    d = prev[lb]
    return d if d <= cap else over


def padded_trigrams(word: str) -> list[str]:
    """Trigrams of `` word `` (one space each side), in order: a word of n letters has
    n of them. One edit touches at most 3 trigram positions, so a word within k edits
    of ``word`` still holds every distinct trigram of ``word`` but at most 3k of them
    (the q-gram lemma); the store's candidate search relies on this."""
    p = f" {word} "
    return [p[i : i + 3] for i in range(len(p) - 2)]
