"""Text as its reader takes it: tool output without terminal control sequences, and the
folded form a model reads through look-alike and invisible characters.

Two readers see text the hooks pass on (docs/watcher.md "Terminal control sequences",
"What a finding must be to be handed back"):

* a **terminal** acts on control sequences instead of showing them: a coloured test
  run carries ``ESC[31mFAILED ESC[0m``, a hyperlink hides its target in ``ESC]8;;URI
  ESC\\``, a progress bar rewrites its line with ``\\r``. :func:`plain_text` removes
  them (and other controls, NUL included) so what is parsed, stored, written to
  ``.agents/checkpoint.md`` or sent to a model is the text a person saw on screen;
* a **model** reads ``ign\\u00adore`` (a soft hyphen inside), ``ignore\\u200b previous``
  (a zero-width space), ``іgnore`` (a Cyrillic і) or ``ｉｇｎｏｒｅ`` (fullwidth) as the
  word ``ignore``. :func:`reading_views` gives the forms a pattern must be matched on
  to see what the model sees.

Stdlib only. On the hook path (every answer with text passes :func:`plain_text`), so
its patterns are built from stored matcher code (:mod:`ledger.regex`, no ``re`` parser),
each on first use.
"""

from __future__ import annotations

from .regex import Lazy
from .text import LATIN_LOOKALIKES

# ---------------------------------------------------------------- terminal controls

# Escape sequences (ECMA-48), longest forms first:
# CSI (ESC [ or the 8-bit U+009B): parameters, intermediates, one final byte (colour,
# cursor moves, erase); OSC (ESC ] or U+009D) up to BEL or ST (ESC \ or U+009C): window
# titles, clipboard writes, hyperlinks ESC]8;params;URI ST text ESC]8;; ST (the
# link text is kept, it is what was shown); DCS, SOS, PM, APC strings (ESC P/X/^/_ or
# U+0090/0098/009E/009F) up to ST; then any other ESC sequence (ESC ( B, ESC 7, ESC =).
# A string sequence left unterminated ends at the line's end, so it never swallows
# the rest of a log.
_SEQUENCE = Lazy(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# What a progress bar overwrites: everything before a carriage return that more text
# follows on the same line (the terminal showed that text over it).
_OVERWRITTEN = Lazy(r"[^\n]*\r(?=[^\n\r])")
# Backspace erases the character before it (``X\bX`` is how man pages embolden).
_ERASED = Lazy(r"[^\n\x08]\x08")
# Any character :func:`plain_text` changes: C0 controls but tab and newline, DEL, C1,
# the bidirectional embeddings, overrides and isolates (they reorder how the text
# after them is drawn: a line can read other than it is), and the tag characters
# (invisible copies of ASCII a model may still read: "ASCII smuggling").
_ANY = Lazy("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")
_DROP = Lazy("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")


def plain_text(text: str) -> str:
    """``text`` as a terminal showed it, with nothing left for a terminal to act on.

    Escape sequences (CSI colours and cursor moves, OSC titles and hyperlinks, whose
    link text stays, DCS/APC strings, lone ESC) are removed; ``\\r\\n`` is a newline and
    text a ``\\r`` overwrote on its line is dropped (the last progress line stays); a
    backspace erases the character before it; vertical tab, form feed and NEL
    (U+0085) become newlines; every other C0 control (NUL, BEL ...), DEL, C1 control,
    bidi embedding/override/isolate and tag character is removed. Tabs and newlines
    stay. Text without any of these comes back as it is (one regex scan). Never
    raises; ``None`` or a non-string gives ``""``."""
    if not isinstance(text, str):
        return ""
    if _ANY.get().search(text) is None:
        return text
    if "\x1b" in text or "\x9b" in text or "\x9d" in text or "\x90" in text or "\x98" in text or "\x9e" in text \
            or "\x9f" in text:
        text = _SEQUENCE.get().sub("", text)
    if "\r" in text:
        text = _OVERWRITTEN.get().sub("", text.replace("\r\n", "\n")).replace("\r", "")
    if "\x08" in text:
        for _ in range(64):  # each pass erases one character per backspace run
            new = _ERASED.get().sub("", text)
            if new == text:
                break
            text = new
    if "\x0b" in text or "\x0c" in text or "\x85" in text:
        text = text.replace("\x0b", "\n").replace("\x0c", "\n").replace("\x85", "\n")
    return _DROP.get().sub("", text)


def plain_ends(text: str, keep: int) -> str:
    """``text`` with :func:`plain_text` applied to its first and last ``keep``
    characters only, the middle left as it is: for a long output that is about to be
    cut to its head and tail (``redact.clip``), so a 10 MB log costs a scan of what is
    kept, not of all of it. The whole when it is not longer than ``2 * keep``."""
    if not isinstance(text, str):
        return ""
    if len(text) <= 2 * keep:
        return plain_text(text)
    head, tail = text[:keep], text[-keep:]
    clean_head, clean_tail = plain_text(head), plain_text(tail)
    if clean_head is head and clean_tail is tail:
        return text  # nothing to remove: no copy of the middle
    return clean_head + text[keep:-keep] + clean_tail


def plain_value(value: object, depth: int = 0) -> object:
    """A JSON-like ``value`` with :func:`plain_text` applied to every string at every
    depth (dict keys too); other values as they are. Never raises."""
    if isinstance(value, str):
        return plain_text(value)
    if depth > 32:
        return value
    if isinstance(value, dict):
        return {plain_text(k) if isinstance(k, str) else k: plain_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_value(v, depth + 1) for v in value]
    return value


# ---------------------------------------------------------------- reading as a model does

#: Letters of other scripts drawn like Latin ones, which Unicode normalisation leaves
#: alone: Cyrillic, Greek, Armenian, and Latin's own small capitals and dotless i. Only
#: whole look-alikes (no Russian or Greek word becomes an English one through them).
_LOOKALIKES = {ord(pair[0]): pair[1] for pair in (*LATIN_LOOKALIKES, *(
    # Those redaction folds too (ledger.text.LATIN_LOOKALIKES), and Cyrillic ѵ Ӏ, Greek ϲ ϳ
    "\u0475v \u04c0I \u03f2c \u03f3j "
    # Armenian small հ ո ս օ
    "\u0570h \u0578n \u057du \u0585o "
    # Latin dotless i and j, script a and g, iota, small capitals
    "\u0131i \u0237j \u0251a \u0261g \u0269i \u026ai \u1d00a \u0299b \u1d04c \u1d05d \u1d07e \u0262g \u029ch "
    "\u1d0aj \u1d0bk \u029fl \u1d0dm \u0274n \u1d0fo \u1d18p \u0280r \ua731s \u1d1bt \u1d1cu \u1d20v \u1d21w "
    "\u028fy \u1d22z").split())}
#: Invisible characters that are not format characters (category Cf, handled by
#: category): Hangul fillers, the braille blank, the combining grapheme joiner.
_INVISIBLE = frozenset((0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F))
_TAGS = Lazy("[\U000e0020-\U000e007e]")
_JOIN, _SPACE = 0, 1  # the two views of an invisible character


def _invisible(cp: int, c: str) -> bool:
    """Whether the character ``c`` (code point ``cp``) is drawn as nothing: a format
    character (soft hyphen, zero-width space and joiners, word joiner, BOM, bidi
    controls, tag characters), a variation selector, or one of :data:`_INVISIBLE`."""
    import unicodedata

    return cp in _INVISIBLE or unicodedata.category(c) == "Cf" or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


class _Table(dict):
    """``str.translate`` tables of :func:`reading_views`, filled on first sight of each
    character (a hook process sees a few dozen)."""

    def __init__(self, view: int) -> None:
        super().__init__()
        self.view = view

    def __missing__(self, cp: int) -> str | None:
        import unicodedata

        c = chr(cp)
        out: str | None
        if cp in _LOOKALIKES:
            out = _LOOKALIKES[cp]
        elif _invisible(cp, c):
            # soft hyphen, zero-width space/joiners, word joiner, BOM, bidi controls,
            # variation selectors: nothing inside a word, a space between two words
            out = " " if self.view == _SPACE else None
        elif unicodedata.category(c) == "Zs" or c in "\u2028\u2029":
            out = " "
        else:
            # Compatibility forms (fullwidth, mathematical letters, ligatures, circled
            # letters) and accented letters: their base letters, marks left out.
            base = "".join(ch for ch in unicodedata.normalize("NFKD", c) if not unicodedata.combining(ch))
            out = "".join(_LOOKALIKES.get(ord(ch), ch) for ch in base) if base else None
        self[cp] = out
        return out


_TABLES = (_Table(_JOIN), _Table(_SPACE))


def reading_views(text: str) -> tuple[str, ...]:
    """The forms of ``text`` a pattern must be matched on to read it as a model does:
    :func:`plain_text` first, then every character folded to what it is drawn or read
    as (fullwidth and other compatibility forms to ASCII, accents and combining marks
    left out, Cyrillic/Greek/Armenian look-alike letters and small capitals to Latin
    ones, Unicode spaces to a space, tag characters to the ASCII they hide). An
    invisible character (zero-width space or joiner, soft hyphen, bidi control,
    variation selector) may join two halves of a word or separate two words, so
    there are two views then: one with it left out, one with a space in its place.
    ASCII text without controls is its own single view. Case is kept."""
    if _TAGS.get().search(text) is not None:  # before plain_text, which removes them
        text = _TAGS.get().sub(lambda m: chr(ord(m.group()) - 0xE0000), text)
    text = plain_text(text)
    if text.isascii():
        return (text,)
    joined = text.translate(_TABLES[_JOIN])
    spaced = text.translate(_TABLES[_SPACE])
    return (joined,) if joined == spaced else (joined, spaced)


_ZWJ = "\u200d"
_ANY_INVISIBLE = Lazy("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd"
                      "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def visible_text(text: str) -> str:
    """``text`` as it is drawn: :func:`plain_text`, then without the characters drawn
    as nothing (zero-width space and joiners, soft hyphen, word joiner, BOM, invisible
    operators, variation selectors, Hangul fillers, the braille blank: the invisible
    characters the reading views take out, less the few format characters that are
    drawn, such as the Arabic number signs), so what is stored is what a person reading
    it sees, and a phrase an invisible character split reads whole. A zero-width joiner
    between two pictographs stays (it draws the family 👨‍👩‍👧 as one sign). Text
    without any of them comes back as it is (one scan). Never raises; a non-string
    gives ``""``."""
    text = plain_text(text)
    if not text or _ANY_INVISIBLE.get().search(text) is None:
        return text
    import unicodedata

    def drop(m) -> str:
        i = m.start()
        if m.group() == _ZWJ and 0 < i < len(text) - 1 and unicodedata.category(text[i - 1]) == "So" \
                and unicodedata.category(text[i + 1]) == "So":
            return _ZWJ
        return ""

    return _ANY_INVISIBLE.get().sub(drop, text)


# ---------------------------------------------------------------- spellings read through

# Three or more single letters or digits, each set apart from the next by one space, dot,
# hyphen, underscore or asterisk: "i g n o r e", "i.g.n.o.r.e", "1-g-n-0-r-e". A word
# break between two such words is usually wider ("i g n o r e  p r e v"), and where it
# is not, the caller's words find the breaks again. Not a slash: /i/g/n is a path.
_SPELLED = Lazy(r"(?<![^\W_])[^\W_](?:[ .\-_*][^\W_]){2,}(?![^\W_])")
_APART = Lazy(r"[ .\-_*]")
# A word mixing letters with digits or @ $ drawn for letters: "1gn0re", "pr3vious",
# "$ystem" (one quick scan finds whether there is one).
_MIXED = Lazy(r"[A-Za-z][0-9@$]|[0-9@$][A-Za-z]")
_LEET_LETTERS = str.maketrans("0134578@$9", "oieastbasg")
_ONE_AS_L = str.maketrans("1", "l")


def respelled(view: str, words: Lazy | None = None) -> tuple[str, ...]:
    """Forms of ``view`` (one of :func:`reading_views`) with two spelling tricks read
    through as a model reads them; ``()`` when it has neither (the common case: two
    scans). Letters set apart ("i g n o r e", "i.g.n.o.r.e") are joined into their
    word; in a joined run whose words were set apart as narrowly as their letters
    ("i g n o r e p r e v i o u s"), the matches of ``words`` (a pattern of the
    caller's vocabulary) are set apart again. When a word mixes letters with digits or
    ``@ $``, these are read as the letters they are drawn for (``0`` o, ``1`` i, ``3``
    e, ``4`` a, ``5`` s, ``7`` t, ``8`` b, ``9`` g, ``@`` a, ``$`` s), everywhere in the
    text: one translation, numbers included (``8080`` reads ``bobo``, which is no word
    of any order); since ``1`` stands for ``l`` as often as for ``i``, a second form
    reads it as ``l``. Case is kept (the digits become lower case letters)."""
    out = view
    if _SPELLED.get().search(out) is not None:
        def join(m) -> str:
            run = _APART.get().sub("", m.group())
            return run if words is None else " " + words.get().sub(lambda w: " " + w.group() + " ", run) + " "

        out = _SPELLED.get().sub(join, out)
    forms = [out]
    if _MIXED.get().search(out) is not None:
        forms = [out.translate(_LEET_LETTERS)]
        if "1" in out:
            forms.append(out.translate(_ONE_AS_L).translate(_LEET_LETTERS))
    return tuple(dict.fromkeys(v for v in forms if v != view))
