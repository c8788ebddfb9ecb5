"""Small pure text helpers shared by the store and retrieval. Stdlib only (L0)."""

from __future__ import annotations

import unicodedata

from ledger import regex
from ledger.vocab import MAX_AGENT_ID

#: Letters of other scripts drawn like Latin ones, which NFKC leaves alone, as pairs
#: "look-alike, then its Latin letter": Cyrillic small а с е һ і ј ӏ о р ԛ ѕ ԝ х у ԁ,
#: capital А В С Е Н І Ј К М О Р Ѕ Т Х Ү Ԛ Ԝ; Greek small α ι κ ν ο ρ υ, capital Α Β Ε Ζ
#: Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ. Only whole look-alikes: no Russian or Greek word folds to an
#: ASCII word (пароль, токен keep letters with no Latin twin). Redaction folds these
#: (ledger.redact); the instruction filter folds these and more (ledger.plaintext).
LATIN_LOOKALIKES = (
    "\u0430a \u0441c \u0435e \u04bbh \u0456i \u0458j \u04cfl \u043eo \u0440p \u051bq \u0455s \u051dw "
    "\u0445x \u0443y \u0501d "
    "\u0410A \u0412B \u0421C \u0415E \u041dH \u0406I \u0408J \u041aK \u041cM \u041eO \u0420P \u0405S "
    "\u0422T \u0425X \u04aeY \u051aQ \u051cW "
    "\u03b1a \u03b9i \u03bak \u03bdv \u03bfo \u03c1p \u03c5u "
    "\u0391A \u0392B \u0395E \u0396Z \u0397H \u0399I \u039aK \u039cM \u039dN \u039fO \u03a1P \u03a4T "
    "\u03a5Y \u03a7X").split()


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 chunk``, ``2 chunks``; ``many`` for an irregular plural (``memories``). For
    every count shown to a person (CLI lines and the event details the feed shows)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


_WS = regex.compile(r"\s+")
_NON_SLUG = regex.compile(r"[^\w]+|_+", regex.UNICODE)

# Words that carry no topic in a question or a claim. Dropping them from the BM25
# expression measurably helps (docs/design.md, retrieval notes: +5 R@5 on LoCoMo) and keeps an
# OR of prefix terms from matching most of the store.
QUERY_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    """.split()
)


def collapse(text: str) -> str:
    """Collapse every whitespace run to one space and trim."""
    return _WS.sub(" ", text).strip()


def slugify(label: str, max_len: int = 40) -> str:
    """Cluster id from a label (docs/originals.md §1.2): lowercase, NFKD, runs of non-alphanumerics
    become ``-``, dashes trimmed, at most 40 characters. ``"Client work"`` → ``client-work``."""
    s = unicodedata.normalize("NFKD", label.lower())
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    s = _NON_SLUG.sub("-", s).strip("-")
    return s[:max_len].strip("-")


def storable_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None if it can: a NUL character
    (SQLite's C API and FTS5 treat it as the end of the text) or an unpaired surrogate
    (undecodable command-line bytes, or ``"\\ud800"`` in JSON: not encodable as UTF-8).
    The answer names the position (0-based, in characters)."""
    nul = value.find("\x00")
    if nul >= 0:
        return f"contains a NUL character at position {nul}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode at position {exc.start} (an unpaired surrogate: undecodable bytes?)"
    return None


# Bidirectional embeddings, overrides and isolates: invisible, and they reorder how an id
# is drawn (termfmt.visible shows them as U+FFFD); refused in an agent id like controls.
_BIDI = frozenset(map(chr, (*range(0x202A, 0x202F), *range(0x2066, 0x206A))))


# What no agent: filter could name (docs/search.md "agent:"), refused in an id: a list
# comma anywhere (agent:a,b is read as a list: query.parser.LIST_COMMAS, as NFKC leaves
# them) and a quote first (quotes are no part of the query language: the parser's
# quoted-value openers). tests/test_agent_ids.py checks both against the parser's.
ID_COMMAS = ",、،"
ID_QUOTES = "\"'“‘«「"
# Closing quotes, stripped from the end of the id suggested instead of a quoted one.
_CLOSERS = "\"'”’»」"


# The longest agent id a store takes (from ledger.vocab, which imports nothing: the
# agent verbs' start-up path reads this module before the store's).
_SLUG_MAX = MAX_AGENT_ID


def agent_key(agent: str) -> str:
    """The normal form of an agent id, what ``agent:`` compares (docs/search.md
    "agent:"): trimmed, NFKC-folded when not ASCII (a fullwidth ``Ｃｌａｕｄｅ`` is
    ``claude``), lowercased with :meth:`str.lower` (the query parser lowercases a filter's
    value the same way). ``Claude``, ``CLAUDE`` and ``claude`` are one agent."""
    s = agent.strip()
    if not s.isascii():
        s = unicodedata.normalize("NFKC", s)
    return s.lower()


def _nameable(key: str, bad: list[str]) -> str:
    """The id an ``agent:`` filter can name nearest to ``key``: ``bad`` characters
    dropped, whitespace runs and commas as ``-``, quotes around it dropped (``"x"`` is
    ``x``, ``a,b`` is ``a-b``). May be '' (nothing nameable was left)."""
    s = "".join(c for c in key if c not in bad).strip()
    if s[:1] in ID_QUOTES:
        s = s.lstrip(ID_QUOTES).rstrip(_CLOSERS)
    s = s.strip(ID_COMMAS)
    for c in ID_COMMAS:
        s = s.replace(c, " ")
    return "-".join(s.split())


def agent_id(agent: str, *, slug: bool = False, source: str | None = None) -> str:
    """``agent`` as every write stores it: :func:`agent_key`, checked. An id is one word,
    because a query splits on spaces (``agent:my agent`` is the filter ``agent:my`` and the
    word ``agent``), holds no control or bidi character (it is printed in tables) and
    no comma, and does not start with a quote (``agent:a,b`` is a list, ``agent:"x`` a
    quoted value: no filter could name such an id; :data:`ID_COMMAS`, :data:`ID_QUOTES`).

    ``slug``: for a name nobody can be asked to retype (an MCP client's ``clientInfo.name``,
    a harness name in a hook): whitespace runs become ``-`` and control and bidi characters
    are dropped (``Claude Desktop`` is ``claude-desktop``). Otherwise such an id raises
    :class:`ledger.errors.InvalidInput` naming ``source`` (where the id came from, in the
    calling surface's terms: the core names none) and the id to use instead. An id empty once trimmed raises too (callers fall back first)."""
    key = agent_key(agent)
    bad = [c for c in key if (unicodedata.category(c) == "Cc" and not c.isspace()) or c in _BIDI]
    spaced = any(c.isspace() for c in key)
    comma = next((c for c in key if c in ID_COMMAS), "")
    quoted = key[:1] in ID_QUOTES
    if slug:  # cut to the store's limit (store.ops.MAX_AGENT_ID): a long name must not break every call
        return _nameable(key, bad)[:_SLUG_MAX].rstrip("-")
    if key and not bad and not spaced and not comma and not quoted:
        return key
    from .errors import InvalidInput

    fixed = _nameable(key, bad)
    if not key:
        why = "is empty"
    elif spaced:
        why = "has a space: an agent id is one word, because a query splits on spaces (agent:<id> could never name it)"
    elif bad:
        why = "holds a control character"
    elif comma:
        why = (f"holds a comma ({comma}): agent:{key} would be read as a list of agents, so no agent: filter "
               f"could name it")
    else:
        why = "starts with a quote: quotes are not part of a query, so no agent: filter could name it"
    why += (". An agent id may hold letters, digits and punctuation, but no space, comma (, 、 ،) or control "
            "character, and may not start with a quote (\" ' “ ‘ « 「)") if key else ""
    hint = f" Use {fixed}." if fixed else ""
    where = f" ({source})" if source else ""
    raise InvalidInput(f"The agent id {agent!r}{where} {why}.{hint} Nothing was written.", field="agent",
                       value=agent, suggestion=fixed or None)
