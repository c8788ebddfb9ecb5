"""What a claim is about, so that the proposer only compares claims about one thing.

Two claims that disagree on a value contradict each other only when they speak of the
same subject: "create_users.exs has 10 lines" and "create_posts.exs has 12 lines" are two
true facts about two files, as are "`pytest -q tests/unit` works: 12 passed" and
"`pytest -q tests/integration` works: 40 passed". The lexical proposer
(:mod:`ledger.conflicts.signals`, :mod:`ledger.conflicts.duplicates`) reads file names
and commands as *values*, so on its own it takes such pairs for one statement with a
changed value. This module says when two claims have different subjects, from two
things (docs/contradictions.md, "Subjects"):

* **file keys**: the files a memory is about (docs/design.md). Two claims that both
  have file keys and share none are about different files;
* the **head name**: a name the claim opens with (after an optional preposition,
  article and one word saying what kind of thing it is), a command in backticks, a path,
  a file name or an identifier (``MyApp.Users``, ``create_users``). Two claims that both
  open with a name, and not the same one, have different subjects. A name further on is
  not the subject but may be the value ("The entry point is src/app/main.py" vs
  "... lib/app/main.py" stays a candidate).

Pure, stdlib only (no ``re``: ``remember``'s start-up budget, docs/benchmarks.md).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Collection

__all__ = ["different_subjects", "head_name", "same_name"]

#: Words that may open a claim before its head name ("In src/app.py ...").
_PREPOSITIONS = frozenset({"in", "for", "under", "inside", "within"})
_ARTICLES = frozenset({"the", "a", "an", "this", "that"})
#: One word saying what kind of thing the name is ("the migration create_users.exs",
#: "running `make test`"). A short list on purpose: a verb in front ("uses src/app.py")
#: makes the name the claim's value, not its subject.
_KINDS = frozenset("""
    file files module modules migration migrations script scripts command commands class function method
    package crate folder directory dir table test tests suite config configuration service job target task
    running run calling executing invoking endpoint route model schema fixture template component binary
""".split())
_EDGE = "\"'()[]{}<>,;:!?."
_LEAD_EDGE = _EDGE.replace(".", "")
_MAX_NAME = 200


def _is_name(word: str) -> bool:
    """A path (``/``), a file name (``name.ext``: a dot followed by a letter), an
    identifier with ``_`` or ``::`` or a capital after a small letter (``MyApp``)."""
    if len(word) < 3 or word[0] in "-+#$" or not any(c.isalpha() for c in word):
        return False
    if "/" in word or "_" in word or "::" in word:
        return True
    if any(a.islower() and b.isupper() for a, b in zip(word, word[1:])):
        return True
    dot = word.rfind(".")
    return 0 < dot < len(word) - 1 and word[dot + 1].isalpha() and word[0].isalnum()


def head_name(text: str) -> str | None:
    """The name ``text`` opens with, normalised (casefolded; a command's whitespace
    collapsed; a path without ``./`` and trailing ``/``), or None.

    >>> head_name("`pytest -q  tests/unit` works (exit 0)"), head_name("The migration create_users.exs adds name")
    ('`pytest -q tests/unit`', 'create_users.exs')
    >>> head_name("The entry point is src/app/main.py") is None
    True
    """
    rest = text.lstrip()
    allowed = [_PREPOSITIONS, _ARTICLES, _KINDS]
    while rest:
        if rest[0] == "`":
            end = rest.find("`", 1)
            if end <= 1:
                return None
            return "`" + " ".join(rest[1:end].split()).casefold()[:_MAX_NAME] + "`"
        word, _, after = rest.partition(" ")
        core = word.lstrip(_LEAD_EDGE).rstrip(_EDGE)  # "./src": the dot is part of the path
        if core and _is_name(core):
            name = core.casefold().removeprefix("./").rstrip("/")
            return name[:_MAX_NAME] or None
        low = core.casefold()
        # Each kind of lead word at most once, in order: preposition, article, kind.
        while allowed and low not in allowed[0]:
            allowed.pop(0)
        if not allowed or word != word.rstrip(":"):
            return None
        allowed.pop(0)
        rest = after.lstrip()
    return None


def same_name(a: str, b: str) -> bool:
    """Whether two head names name one thing: equal, or one path ends with the other
    at a ``/`` (``create_users.exs`` and ``priv/repo/migrations/create_users.exs``)."""
    if a == b:
        return True
    if a.startswith("`") or b.startswith("`"):
        return False
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return long_.endswith("/" + short)


def different_subjects(a: str, b: str, a_files: Collection[str] = (), b_files: Collection[str] = ()) -> bool:
    """Whether claims ``a`` and ``b`` (texts, with the paths of their file keys) are
    about different things, so that no value they hold can contradict the other's:
    both have file keys and share none, or both open with a name and not the same one
    (:func:`head_name`, :func:`same_name`). False when nothing tells them apart.
    Symmetric."""
    if a_files and b_files and not set(a_files) & set(b_files):
        return True
    ha = head_name(a)
    if ha is None:
        return False
    hb = head_name(b)
    return hb is not None and not same_name(ha, hb)
