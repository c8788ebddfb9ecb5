"""The one facade every surface calls (docs/architecture.md, layer L3).

``Ledger`` owns the store, the clock and the acting agent. The CLI, the web server, the
TUI and the harness hooks never touch SQL or strength directly; they call these methods
and render the immutable values (:mod:`ledger.models`) they get back.

Example::

    with Ledger.open("/tmp/demo.db") as led:
        m = led.remember("CI runs on Python 3.11", cluster="code", agent="claude").memory
        hits = led.recall("python version", agent="claude").hits
"""

from __future__ import annotations

import os
import time

from . import terms as T
from . import wire
from .clock import Clock, local_midnight_ms, system_clock
from .errors import InvalidInput, StoreUnavailable, TextTooLong, UnknownMemory, missing_id
from .filekeys import file_key  # noqa: F401 - moved to ledger.filekeys; re-exported for callers written before
from .frozen import Frozen
from .ids import PREFIXES
from .models import Candidate, Cluster, Conflict, Event, FileKey, Memory, SearchResult, Source
from .paths import db_file
from .store import Store
from .text import slugify, storable_problem
from .vocab import (  # noqa: F401 - re-exported: surfaces imported these names from the service
    BULK_OPS,
    CONFLICT_KINDS,
    DAY_MS,
    DEFAULT_CONFLICT_KIND,
    DEFAULT_DETECTOR,
    DEFAULT_MODE,
    DEFAULT_SOURCE_TRUST,
    HUMAN,
    MAX_COLOR_CHARS,
    MAX_NOTE_CHARS,
    MAX_TEXT_CHARS,
    MAX_TOPIC_CHARS,
    MODES,
    RESOLUTIONS,
    REVIEW_ACTIONS,
    VERDICTS,
)

# Start-up budget (docs/benchmarks.md "Start-up"): the agent verbs import this module,
# so what only some methods need (ingest, the proposer, the store's conflict queries
# `cq`, the query parser, statistics, pathlib, typing) is imported inside those methods.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Callable, Iterable, Iterator, Sequence

    from . import ingest as ingest_mod

CANDIDATE_PREFIX = PREFIXES["candidate"] + "_"  # "cc_": `resolve` takes candidates too
RECALL_COUNT_WAIT_MS = 1_500  # how long recall waits for the write lock to count its read
#: Why a recall with ``asof:`` is not counted (``SearchResult.not_counted``; the CLI's
#: warning and MCP's ``notCounted`` say it).
ASOF_NOT_COUNTED = ("a recall with asof: looks at what the store held then (memories dropped or edited since "
                    "included), so it strengthens nothing. The same recall without asof: reads the store as it is "
                    "now and counts the read")
#: What to do about a recall the store could not count, after why, by
#: :attr:`StoreUnavailable.reason` (the store's own sentence says what to do about a
#: full disk or a read-only file; the read itself needs nothing more then).
NOT_COUNTED_NEXT = {"locked": "The hits are complete; only the read was not counted. Recall the same query again "
                              "once the other write is done to count it",
                    "read-only": "The hits are complete; reads are counted only in a store this user can write to"}
#: How many agent ids an ``unknown-agent`` warning lists (the most recently seen).
MAX_KNOWN_AGENTS = 12
#: Search filters that make an export part of the store (no whole-store history then).
_NARROWING = ("kind", "pending_only", "pinned_only", "conflicted_only")
MAX_PROPOSALS_PER_WRITE = 20  # best-scored candidates kept per write: a flood helps nobody judge


def _parse(query: str | None, now_ms: int):
    """:func:`ledger.query.parse` of ``query`` (None reads as "") at ``now_ms``: imported
    on the first search, since remember and show parse no query. Raises InvalidQuery."""
    from .query import parse

    return parse(query or "", now_ms)


def _filter_notes(query: str | None, now_ms: int) -> tuple[dict, ...]:
    """:func:`ledger.query.filter_warnings` of ``query`` at ``now_ms`` (epoch ms UTC,
    the instant the search parsed it at), as SearchResult keeps them."""
    from .query import filter_warnings

    return tuple(filter_warnings(query or "", now_ms))


def stopwords_only(q, qt=None) -> bool:
    """Whether the free text of the parsed query ``q`` is question stopwords and nothing
    else (``what is the``: :data:`ledger.text.QUERY_STOPWORDS`, no other word, compound,
    CJK or symbol, no starred word). Such text is not about anything: the store
    searches it as typed (:func:`ledger.terms.split_query` keeps stopwords when nothing
    else is left) and it matches nearly every memory. ``qt``: :func:`_query_terms` of
    ``q``, if the caller has it."""
    if not q.terms:
        return False
    from .text import QUERY_STOPWORDS

    qt = qt or _query_terms(q)
    return bool(qt.words) and not (qt.phrases or qt.compounds or qt.cjk or qt.symbols or qt.starred) and all(
        w in QUERY_STOPWORDS for w in qt.words)


def _query_terms(q):
    """:func:`ledger.terms.split_query` of the free text of the parsed query ``q`` as
    both engines search it (question stopwords dropped, at most
    :data:`ledger.terms.MAX_QUERY_TERMS` terms)."""
    from .text import QUERY_STOPWORDS

    return T.split_query(q.terms, QUERY_STOPWORDS)


#: Why a recall whose words are all stopwords is not counted (``SearchResult.not_counted``).
STOPWORDS_NOT_COUNTED = ("every word of the query is a stopword, so its page is not about anything and it "
                         "strengthens nothing. Recall the words that name the topic (a name, a file, an error "
                         "message) to count the read")


def _typed(query: str | None, key: str) -> str:
    """The value of the last ``key:`` filter in ``query`` as typed (the last one wins, as
    in the parser), for warnings that quote it."""
    from .query.parser import tokens, when_value

    n = len(key) + 1  # tokens as the parser read them (fullwidth folded)
    toks = tokens(query or "")
    found = [when_value(toks, i)[0] for i, t in enumerate(toks) if t[:n].lower() == key + ":"]  # with a time after a date
    return found[-1] if found else ""  # "" only if the parser read a form this split does not


def _text_notes(q) -> tuple[dict, ...]:
    """``({"kind": "nothing-to-search", "values": [terms as typed], "warning"},)`` when
    the free text of the parsed query ``q`` holds no term at all (no letter, digit or
    symbol :func:`ledger.terms.split_query` can search: ``*``, ``---``, ``()``): the
    search then matches nothing, and an empty answer would read as "nothing is known".
    ``({"kind": "stopwords-only", "values": [terms], "warning"},)`` when every word is
    a question stopword (:func:`stopwords_only`): the answer is not about anything.
    ``({"kind": "too-many-terms", "searched", "last", "warning"},)`` when the text
    holds more distinct terms than a query searches (:data:`ledger.terms.MAX_QUERY_TERMS`):
    only the first ``searched`` were, up to ``last`` (as folded). Besides any of these,
    :func:`_short_star_notes`. ``()`` otherwise."""
    if not q.terms:
        return ()
    # Stopwords are dropped only when something else is left, so this split is empty
    # exactly when the split without them is.
    qt = _query_terms(q)
    if stopwords_only(q, qt):
        shown = " ".join(q.terms)
        return ({"kind": "stopwords-only", "values": list(q.terms),
                 "warning": f'every word of "{shown}" is a stopword, so the query names no topic '
                            f"and what it finds is not about anything. Add a word that names the topic (what is the "
                            f"deploy command){', or give the filters alone' if q.has_filters else ''}."},)
    if qt.capped:
        return ({"kind": "too-many-terms", "searched": qt.searched, "last": qt.last,
                 "warning": f"The query holds more than {qt.searched} distinct terms, and a search takes the first "
                            f"{qt.searched}: the words after \"{qt.last}\" were not searched, so a memory that "
                            f"matches only them is not in this answer. Shorten the query to the few words that name "
                            f"the topic (a name, a file, an error message)."},) + _cjk_notes(qt) + _short_star_notes(qt)
    if qt:
        return _cjk_notes(qt) + _short_star_notes(qt)
    shown = " ".join(q.terms)
    return ({"kind": "nothing-to-search", "values": list(q.terms),
             "warning": f"{shown} has no letter, digit or symbol to search for, so it matches nothing. Give words "
                        f"(deploy, or deploy* for words starting with deploy), or filters alone (cluster:proc) to "
                        f"list memories."},)


def _cjk_notes(qt) -> tuple[dict, ...]:
    """``({"kind": "too-many-terms", "searched", "last", "runs", "warning"},)`` when a CJK
    run of the query holds more distinct character pairs than are searched one by one
    (:data:`ledger.terms.MAX_CJK_BIGRAMS`, :func:`ledger.terms.cjk_cut`): the pairs after
    ``last`` (of the first such run) count only inside the whole run's phrase, so a
    memory holding only them is missed, as with words past the term cap. ``runs``: every
    run cut, as folded. ``()`` when no run was cut."""
    cut = [(r, T.cjk_cut(r)) for r in qt.cjk]
    cut = [(r, last) for r, last in cut if last is not None]
    if not cut:
        return ()
    run, last = cut[0]
    n = T.MAX_CJK_BIGRAMS
    shown = run if len(run) <= 12 else run[:12] + "…"
    return ({"kind": "too-many-terms", "searched": n, "last": last, "runs": [r for r, _ in cut],
             "warning": f"The run of CJK characters \"{shown}\" holds more than {n} distinct character pairs, and a "
                        f"search looks for the first {n} one by one: the pairs after \"{last}\" were searched only "
                        f"as part of the whole run, so a memory that holds only them is not in this answer"
                        + (f" ({len(cut)} runs were cut so)" if len(cut) > 1 else "")
                        + ". Put spaces between the words you mean, or shorten the query to the few words that name "
                          "the topic."},)


def _invisible(text: str) -> bool:
    """Whether ``text`` shows nothing: only spaces and format characters (Unicode
    category Cf: zero-width space and joiners, word joiner, BOM, bidi marks), which
    ``str.strip`` keeps. Such a claim would be a memory no one can see or find."""
    from unicodedata import category

    return all(ch.isspace() or category(ch) == "Cf" for ch in text)


def _short_star_notes(qt) -> tuple[dict, ...]:
    """``({"kind": "short-prefix", "values": ["d*"], "searched_as": ["d"], "warning"},)``
    when a ``*`` of the query follows a single character (``d*``, ``-v*``, ``c++*``:
    :attr:`ledger.terms.QueryTerms.short_stars`): such a term is searched without the
    star, since the words starting with one letter are most of the store, and a user
    who typed ``d*`` would otherwise not know that only the word ``d`` was looked for.
    ``()`` when there is none."""
    short = list(qt.short_stars)
    if not short:
        return ()
    typed = [t + "*" for t in short]
    one = len(short) == 1
    as_ = " and ".join((f'the word "{t}"' if t.isalnum() else f'"{t}"') for t in short)
    return ({"kind": "short-prefix", "values": typed, "searched_as": short,
             "warning": f"{' and '.join(typed)} {'was' if one else 'were'} searched as {as_}, not as "
                        f"{'a prefix' if one else 'prefixes'}: the words starting with a single letter are most "
                        f"of the store. Type two or more letters before the * to find the words that start with "
                        f"them (de*)."},)


def clean_text(text: str | None, *, empty: str, field: str | None = None) -> str:
    """A claim's text, trimmed and checked: not empty nor invisible (``empty`` is the message, and
    ``field`` the input named in the error, so a surface can add its own example), at
    most ``MAX_TEXT_CHARS`` characters, no NUL bytes, valid Unicode (no unpaired surrogates, which a
    terminal can pass in from undecodable bytes). Raises InvalidInput."""
    text = (text or "").strip()
    if not text or _invisible(text):
        raise InvalidInput(empty, field=field, value="" if field else None)
    if len(text) > MAX_TEXT_CHARS:
        raise TextTooLong(len(text), MAX_TEXT_CHARS)  # each surface says where a document goes
    if "\x00" in text:
        raise InvalidInput(f"The text contains a NUL byte at position {text.index(chr(0))}; remove it and try again.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"The text is not valid Unicode at position {exc.start} (undecodable bytes?); re-encode it as UTF-8.") from None
    return text


def check_field(value: str | None, *, field: str, what: str, limit: int, longer: str = "") -> None:
    """Refuse free text a person or agent wrote that the store should not hold: over
    ``limit`` characters (the message says the limit and, with ``longer``, where longer
    text goes) or holding a NUL or an unpaired surrogate. ``what`` names it in the
    message ("The note"), ``field`` in the error. Raises InvalidInput; None passes."""
    if not value:
        return
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value):,} characters long; at most {limit:,} are allowed{longer}. "
                           "Nothing was written.", field=field)
    problem = storable_problem(value)
    if problem:
        raise InvalidInput(f"{what} {problem}; remove it and try again.", field=field)


class WriteResult(Frozen):
    """What ``remember`` did: the new claim, candidates it proposed, the conflict opened
    by ``supersedes`` (if any), and the store-wide count of unjudged candidates.
    Immutable (:class:`ledger.frozen.Frozen`, like the models)."""

    __slots__ = ("memory", "proposed", "conflict_id", "pending_candidates", "duplicate", "redacted", "new_reader")

    def __init__(
        self,
        memory: Memory,
        proposed: tuple[str, ...],
        conflict_id: str | None,
        pending_candidates: int,
        duplicate: bool = False,  # the same text was already a live claim: counted as corroboration
        redacted: int = 0,  # secrets replaced by [REDACTED:<kind>] in the text and note before storing
        new_reader: bool = False,  # a duplicate from an agent not yet among its readers: corroboration rose
    ) -> None:
        s = object.__setattr__
        s(self, "memory", memory)
        s(self, "proposed", proposed)
        s(self, "conflict_id", conflict_id)
        s(self, "pending_candidates", pending_candidates)
        s(self, "duplicate", duplicate)
        s(self, "redacted", redacted)
        s(self, "new_reader", new_reader)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.write_result`."""
        return wire.write_result(self.memory.to_dict(), self.proposed, self.conflict_id, self.pending_candidates,
                                 self.duplicate, self.redacted)


class IngestResult(Frozen):
    """``chunks``: live chunks of the source afterwards. ``updated``: a re-ingest of a
    known path updated an existing source, keeping ``kept`` chunks (with their reads),
    adding ``added`` and retiring ``retired`` (``store/source_sync.py``). ``redacted``:
    secrets replaced by ``[REDACTED:<kind>]`` in the text before it was chunked. Immutable."""

    __slots__ = ("source_id", "chunks", "filename", "updated", "kept", "added", "retired", "redacted")

    def __init__(
        self,
        source_id: str,
        chunks: int,
        filename: str,
        updated: bool = False,
        kept: int = 0,
        added: int = 0,
        retired: int = 0,
        redacted: int = 0,
    ) -> None:
        s = object.__setattr__
        s(self, "redacted", redacted)
        s(self, "source_id", source_id)
        s(self, "chunks", chunks)
        s(self, "filename", filename)
        s(self, "updated", updated)
        s(self, "kept", kept)
        s(self, "added", added)
        s(self, "retired", retired)

    def to_dict(self) -> dict:
        """The JSON shape: :func:`ledger.wire.ingest_result`."""
        return wire.ingest_result(self)


class Ledger:
    """Facade over one store file. ``clock`` returns epoch ms (tests pass a FixedClock)."""

    def __init__(self, store: Store, *, clock: Clock = system_clock):
        self.store = store
        self.clock = clock
        self.started_at = clock()

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, clock: Clock = system_clock, readonly: bool = False) -> "Ledger":
        """Open (creating if needed) the store at ``path`` or the default location."""
        p = db_file(path)
        return cls(Store(p, readonly=readonly, now=clock()), clock=clock)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self.store.path

    # ------------------------------------------------------------------ memories
    def remember(
        self,
        text: str,
        *,
        cluster: str,
        agent: str,
        note: str = "",
        supersedes: str | None = None,
        source_id: str | None = None,
        files: Sequence[FileKey] = (),
        topic: str | None = None,
        named_files: Sequence[str] = (),
    ) -> WriteResult:
        """Write a claim and run the contradiction proposer on it.

        Raises InvalidInput (empty or oversized text, a ``note`` over
        :data:`MAX_NOTE_CHARS` or a ``topic`` over :data:`MAX_TOPIC_CHARS` characters,
        several ids in ``supersedes``),
        UnknownCluster, UnknownMemory (a ``supersedes`` id that does not exist). With ``supersedes`` a conflict is opened
        at once (detector 1, seed's "supersede, never overwrite") instead of proposing.

        ``named_files``: absolute paths the text is about that are not file keys (the
        distiller keeps a file key only for files its trajectory touched); duplicates and
        conflict peers are also looked for among claims keyed to them.

        Secrets in ``text`` and ``note`` are replaced by ``[REDACTED:<kind>]``
        (:func:`ledger.redact.redact`) before anything is stored or compared; the result's
        ``redacted`` says how many.
        """
        from .redact import redact_counted  # here, not at the top: read verbs never import it
        from .store import conflicts as cq

        text = clean_text(text, empty="Nothing to remember.", field="claim")
        check_field(note, field="note", what="The note", limit=MAX_NOTE_CHARS,
                    longer=" (a note says where the claim came from; a longer text is a document, not a note)")
        check_field(topic, field="topic", what="The topic", limit=MAX_TOPIC_CHARS,
                    longer=" (a topic is a short key such as file-format:model.ckpt)")
        if topic is not None and not topic.strip():
            topic = None  # a blank topic is none (stored as "", its export could not be imported)
        # Whatever is stored is redacted first (docs/architecture.md): hooks hand claims
        # back into agents' context and a PostgreSQL store shares them with a team.
        text, redacted = redact_counted(text)
        note, in_note = redact_counted(note or "")
        redacted += in_note
        now = self.clock()
        self.store.require_cluster(cluster)
        if supersedes and len(supersedes.replace(",", " ").split()) > 1:
            # One claim opens one conflict, with the memory it replaces; a list would
            # otherwise read as one mistyped id.
            raise InvalidInput(f"supersedes takes one memory id, not several ({supersedes!r}): a claim supersedes "
                               "one memory. Give the one it replaces. Nothing was remembered.",
                               field="supersedes", value=supersedes)
        if supersedes:
            try:
                supersedes = self.resolve_id(supersedes)
            except UnknownMemory as e:
                raise UnknownMemory(f"{e} Nothing was remembered.",
                                    field="supersedes", value=supersedes) from None
            old = self.store.row(supersedes)
            if old.deleted_at is not None:
                raise InvalidInput(f"{supersedes} was already dropped; there is nothing live to supersede. Remember the new fact without superseding.",
                                   field="supersedes", value=supersedes)
            from .conflicts.duplicates import is_near_duplicate

            # The same fact cannot replace itself: a conflict of a claim with its own copy
            # would only leave the person two identical sides to choose from.
            if is_near_duplicate(old.text, text):
                raise InvalidInput(f"The new text says the same as {supersedes}, the memory it would supersede, so "
                                   "there is nothing to replace. Give the changed fact, or remember it without "
                                   "superseding to count it as corroboration. Nothing was remembered.",
                                   field="supersedes", value=supersedes)
        conflict_id = None
        proposed: tuple[str, ...] = ()
        with self.store.atomic():
            paths = list(dict.fromkeys([f.path for f in files] + list(named_files)))
            peers = [] if supersedes else self._peers("", text, cluster, paths)
            dup = self._duplicate_of(text, peers, keyed=bool(paths))
            if dup is not None:
                # The same fact again: corroboration, not a copy (docs/store.md "Corroboration").
                added = self.store.corroborate(dup, agent, now, note or "remembered again")
                return WriteResult(self.store.get(dup, now), (), None, cq.pending_candidate_count(self.store), duplicate=True,
                                   redacted=redacted, new_reader=added)
            mid = self.store.insert_claim(text, cluster, agent, now, note=note, source_id=source_id, topic=topic, files=files)
            if supersedes:
                old = self.store.row(supersedes)
                conflict_id = cq.insert_conflict(self.store, supersedes, mid, DEFAULT_CONFLICT_KIND, old.cluster_id, 1.0,
                                                 f"declared by {agent} on write", now)
            else:
                proposed = self._propose(mid, text, peers, now, [f.path for f in files])
        memory = self.store.get(mid, now)
        # Only the one count the CLI prints: `counts()` would run ten full counts per write.
        return WriteResult(memory, proposed, conflict_id, cq.pending_candidate_count(self.store), redacted=redacted)

    def _peers(self, memory_id: str, text: str, cluster: str, files: Sequence[str]) -> list[tuple[str, str, bool]]:
        from .conflicts.signals import query_terms
        from .store import conflicts as cq

        return cq.find_peers(self.store, memory_id, cluster, query_terms(text), files)

    def _duplicate_of(self, text: str, peers: list[tuple[str, str, bool]], *, keyed: bool) -> str | None:
        """The live claim ``text`` repeats (:func:`ledger.conflicts.duplicates.is_near_duplicate`),
        looked for only where the new claim lives: among claims keyed to one of its files
        when it has file keys, else among the cluster's claims keyed to no file. None
        when it says anything new, even one changed value."""
        from .conflicts.duplicates import is_near_duplicate
        from .store import conflicts as cq

        if keyed:
            found = [pid for pid, ptext, via_file in peers if via_file and is_near_duplicate(ptext, text)]
        else:
            found = [pid for pid, ptext, _ in peers if is_near_duplicate(ptext, text)]
            found = [pid for pid in found if pid not in cq.keyed_to_files(self.store, found)]
        return found[0] if found else None

    def _propose(self, memory_id: str, text: str, peers: list[tuple[str, str, bool]], now: int,
                 files: Sequence[str] = ()) -> tuple[str, ...]:
        """Record the best suspected contradictions of ``memory_id`` (its text, and
        ``files``: the paths of its file keys) among ``peers`` (at most 20 per write,
        best score first); pairs seen before are skipped, and so are peers about another
        subject (:func:`ledger.conflicts.subjects.different_subjects`: other files, other
        commands, other named things)."""
        from .conflicts.duplicates import propose
        from .store import conflicts as cq

        settled = cq.settled_pairs(self.store, memory_id)
        found = []
        for peer_id, peer_text, _ in peers:
            if peer_id == memory_id or peer_id in settled:
                continue
            s = propose(text, peer_text)
            if s is not None:
                found.append((s.score, peer_id, s, peer_text))
        if not found:
            return ()
        from .conflicts.subjects import different_subjects  # only with suspects: remember's start-up budget

        found = [x for x in found if not different_subjects(text, x[3])]
        if found and files:
            # Only now, for the few suspected peers: a read of their file keys.
            keys = cq.file_paths(self.store, [x[1] for x in found])
            found = [x for x in found if not different_subjects("", "", files, keys.get(x[1], ()))]
        found.sort(key=lambda x: -x[0])
        out = []
        for _, peer_id, s, _ in found[:MAX_PROPOSALS_PER_WRITE]:
            cid = cq.insert_candidate(self.store, memory_id, peer_id, s.score, s.signals, now)
            if cid:
                out.append(cid)
        return tuple(out)

    def get(self, memory_id: str) -> Memory:
        """One memory by id or short id (dropped ones too). Never counts as a retrieval."""
        return self.store.get(self.resolve_id(memory_id), self.clock())

    def history(self, memory_id: str, limit: int = 50) -> tuple[list[Event], list[tuple[str, int, str]]]:
        """What happened to one memory (id or short id; dropped ones too): the
        operation log's rows about it, oldest first (at most ``limit``, the newest
        kept), and every text it had before an edit or merge as ``(text, replaced_at
        epoch ms, replaced_by agent)``, oldest first. Never counts as a retrieval.
        Raises UnknownMemory."""
        mid = self.resolve_id(memory_id)
        return self.store.memory_events(mid, limit), self.store.former_texts(mid)

    def resolve_id(self, ref: str) -> str:
        """Full id from an id, a unique tail of one (the short ids ``search`` and
        ``review`` print) or a unique head. Every method here that takes memory ids goes
        through it, so a short id works wherever a full one does. Raises UnknownMemory
        for no match or several (listing them)."""
        return self.store.resolve_id(ref)

    def _resolve_ids(self, refs: Sequence[str]) -> list[str]:
        return [self.resolve_id(r) for r in refs]

    def _search(self, query: str, *, limit: int, offset: int = 0, mode: str = DEFAULT_MODE, now: int | None = None, **kw) -> SearchResult:
        if mode not in MODES:
            raise InvalidInput(f'Unknown mode "{mode}". Use one of: {", ".join(MODES)}.', field="mode", value=mode, choices=MODES)
        if limit < 0 or offset < 0:
            raise InvalidInput("limit and offset must be zero or more.", field="limit", value=min(limit, offset))
        t0 = time.perf_counter()
        now = self.clock() if now is None else now
        q, unknown, known, labelled = self._resolve_clusters(_parse(query, now))
        hits, total = self.store.search(self._resolve_agents(q), now, mode=mode, limit=limit, offset=offset, **kw)
        return SearchResult(tuple(hits), total, (time.perf_counter() - t0) * 1000, query or "",
                            unknown_clusters=unknown, known_clusters=known,
                            notes=labelled + self._held_agents(_filter_notes(query, now)) + self._asof_notes(q, query)
                            + self._agent_notes(q) + _text_notes(q),
                            cluster_suggestions=self._near_clusters(unknown))

    def _resolve_clusters(self, q):
        """``(q, unknown, known, notes)`` for a parsed query ``q``: a ``cluster:`` value
        that is no cluster's id but is a cluster's label (case-insensitive, or the label's
        slug: ``cluster:procedures`` for the cluster ``proc`` labelled "procedures") is
        replaced by that cluster's id (every such cluster's, if labels repeat), with a
        ``cluster-label`` note ``{"kind", "warning", "values": [given], "ids": [ids]}``
        saying so; an id always wins over a label. ``unknown`` are the values still naming
        no cluster (kept in ``q``, so they match nothing), ``known`` the known ids when
        there are such. One read of the clusters table, only when ``q`` has ``cluster:``."""
        if not q.clusters:
            return q, (), (), ()
        from .query.parser import has_own_warning

        labels = self.store.cluster_labels()
        ids: list[str] = []
        unknown: list[str] = []
        notes: list[dict] = []
        for c in q.clusters:
            if c in labels:
                matched = [c]
            else:
                matched = [i for i, label in labels.items() if c in (label.strip().lower(), slugify(label))]
                if matched:
                    named = " and ".join(f"cluster:{i}" for i in matched)
                    label = labels[matched[0]]
                    notes.append({"kind": "cluster-label", "values": [c], "ids": matched,
                                  "warning": f'cluster:{c} is the label "{label}" of cluster {", ".join(matched)}, '
                                             f"not an id; searched {named}. cluster: takes ids."})
                elif not has_own_warning(c):  # quoted-value or list-value says what to write
                    unknown.append(c)
            ids.extend(i for i in matched if i not in ids)
        if notes:
            q = q.replace(clusters=tuple(ids + unknown))
        return q, tuple(unknown), tuple(labels) if unknown else (), tuple(notes)

    def query_warnings(self, query: str) -> list[dict]:
        """The warnings a search for ``query`` would carry
        (:meth:`ledger.models.SearchResult.warnings`), without running it: for ``export``
        and other readers that stream their results. Raises InvalidQuery as search does."""
        now = self.clock()
        q, unknown, known, labelled = self._resolve_clusters(_parse(query, now))
        return SearchResult((), 0, 0.0, query or "", unknown_clusters=unknown, known_clusters=known,
                            notes=labelled + self._held_agents(_filter_notes(query, now)) + self._asof_notes(q, query)
                            + self._agent_notes(q) + _text_notes(q),
                            cluster_suggestions=self._near_clusters(unknown)).warnings()

    def _asof_notes(self, q, query: str | None) -> tuple[dict, ...]:
        """The notes of a time filter that reaches back before the store's first memory
        (:meth:`Store.first_created_ms`): the store held nothing then, so the search
        matches nothing, and an empty answer would read as "nothing is known".

        - ``{"kind": "early-asof", "key": "asof", "values": [as typed], "first": ISO
          instant, "warning"}``: an ``asof:`` earlier than the first memory;
        - ``{"kind": "early-before", "key": "before", ...}`` (same fields): a ``before:``
          at or before it (``before:`` keeps memories created strictly earlier).

        ``()`` otherwise (neither filter, an empty store, later ones). One index read,
        only for a query with ``asof:`` or ``before:``."""
        if q.asof_ms is None and q.before_ms is None:
            return ()
        first = self.store.first_created_ms()
        if first is None:
            return ()
        from .query.parser import format_instant

        when = format_instant(first)
        out = []
        if q.asof_ms is not None and q.asof_ms < first:
            typed = _typed(query, "asof")
            out.append({"kind": "early-asof", "key": "asof", "values": [typed], "first": when,
                        "warning": f"asof:{typed} is before this store's first memory ({when}), so it matches nothing: "
                                   f"the store held nothing then. Give asof:{when} or later."})
        if q.before_ms is not None and q.before_ms <= first:
            typed = _typed(query, "before")
            # before: keeps memories created strictly earlier: the first memory's own
            # instant keeps nothing either, hence "later than".
            out.append({"kind": "early-before", "key": "before", "values": [typed], "first": when,
                        "warning": f"before:{typed} is not later than this store's first memory ({when}), so it "
                                   f"matches nothing: nothing was stored before then. Give a before: later than "
                                   f"{when}, or drop it."})
        return tuple(out)

    def _resolve_agents(self, q):
        """``q`` with each ``agent:`` value widened to the stored ids that are that agent:
        those with the same normal form (:func:`ledger.text.agent_key`). Every write path
        stores the normal form, but a store written before that may hold ``Claude`` next
        to ``claude``; both are matched, on either engine, without rewriting the store
        (docs/search.md "agent:"). One read of the agents table, only for a query with
        ``agent:``."""
        if not q.agents:
            return q
        from .text import agent_key

        wanted = {agent_key(v): v for v in q.agents}
        ids = list(q.agents)
        ids += [a for a in self.store.agent_ids() if agent_key(a) in wanted and a not in ids]
        return q.replace(agents=tuple(ids)) if len(ids) > len(q.agents) else q

    def _held_agents(self, notes: tuple[dict, ...]) -> tuple[dict, ...]:
        """``notes`` without the ``list-value`` and ``quoted-value`` warnings of ``agent:``
        values that name an agent the store holds: ids with a comma or a leading quote are
        refused on write now (:func:`ledger.text.agent_id`), but a store written before may
        hold ``a,b`` or ``"x``, and ``agent:a,b`` matches it, so a warning that it names
        nothing would be false. One read of the agents table, only when such a note exists."""
        odd = [n for n in notes if n.get("key") == "agent" and n["kind"] in ("list-value", "quoted-value")]
        if not odd:
            return notes
        from .text import agent_key

        held = {agent_key(a) for a in self.store.agent_ids()}
        named = [n for n in odd if agent_key(n["values"][0]) in held]
        return tuple(n for n in notes if not any(n is m for m in named)) if named else notes

    def _agent_notes(self, q) -> tuple[dict, ...]:
        """``({"kind": "unknown-agent", "key": "agent", "values": [given], "known": [ids],
        "suggest": {value: id}, "warning"},)`` when an ``agent:`` value of the parsed
        query ``q`` is no agent this store has seen (case-insensitive: the parser
        lowercases it), so it matches nothing; ``suggest`` holds the nearest known id of
        each value that is a near miss (``agent:testr`` is ``tester``), at the cutoff
        :meth:`_near_clusters` uses. ``known`` is the :data:`MAX_KNOWN_AGENTS` most
        recently seen. ``()`` otherwise. One read of the agents table, only for a query
        with ``agent:``."""
        if not q.agents:
            return ()
        from .text import agent_key

        known = self.store.agent_ids()
        by_lower = {}
        for a in known:
            by_lower.setdefault(agent_key(a), a)
        unknown = [v for v in q.agents if agent_key(v) not in by_lower]
        if not unknown:
            return ()
        import difflib

        suggest = {}
        for v in unknown:
            near = difflib.get_close_matches(v, list(by_lower), n=1, cutoff=0.75)
            if near:
                suggest[v] = by_lower[near[0]]
        s = len(unknown) > 1
        named = " and ".join(f"agent:{v}" for v in unknown)
        hint = ""
        if suggest:
            hint = "Did you mean " + " or ".join(f"agent:{i}" + (f" for {v}" if s else "")
                                                 for v, i in suggest.items()) + "? "
        shown = known[:MAX_KNOWN_AGENTS]
        more = f" and {len(known) - len(shown)} more" if len(known) > len(shown) else ""
        what = "are no agents" if s else "is no agent"
        return ({"kind": "unknown-agent", "key": "agent", "values": unknown, "known": shown, "suggest": suggest,
                 "warning": f"{named} {what} this store has seen, so {'they match' if s else 'it matches'} nothing. "
                            f"{hint}Known agents: {', '.join(shown) + more if shown else '(none)'}."},)

    def _near_clusters(self, unknown) -> tuple[tuple[str, str, str], ...]:
        """``(value, id, label)`` for each ``cluster:`` value in ``unknown`` (naming no
        cluster) that is a near miss of a cluster's id, label (case-insensitive) or the
        label's slug: the cluster whose spelling :func:`difflib.get_close_matches` rates
        highest, at 0.75 or more (one dropped, added or swapped letter in a word of 4+,
        the cutoff :func:`ledger.query.parser.near_key` uses for filter keys):
        ``procedurs`` is ``proc`` ("procedures"), ``prco`` is ``proc``; else the one
        cluster whose label or slug has the value as its first word (``cluster:Client work``
        typed with a space is ``client``: ``client-work``). Only read when a
        value named no cluster (difflib imports ``re``: off the agent verbs' usual path)."""
        if not unknown:
            return ()
        import difflib

        spellings: dict[str, str] = {}
        labels = self.store.cluster_labels()
        for i, label in labels.items():
            for sp in (i, label.strip().lower(), slugify(label)):
                spellings.setdefault(sp, i)
        out = []
        for v in unknown:
            near = difflib.get_close_matches(v, list(spellings), n=1, cutoff=0.75)
            if not near:
                # The first word of a label of several (cluster:Client work: a filter value
                # ends at a space), when it starts one cluster's label or slug only.
                near = sorted({spellings[sp] for sp in spellings if sp.startswith((v + " ", v + "-"))})
                near = near if len(near) == 1 else []
                if near:
                    out.append((v, near[0], labels[near[0]]))
                continue
            i = spellings[near[0]]
            out.append((v, i, labels[i]))
        return tuple(out)

    def recall(self, query: str, *, agent: str, limit: int = 10, mode: str = DEFAULT_MODE) -> SearchResult:
        """Counted search for agents: the returned page gets hits+1, last read = now and
        ``agent`` as a reader; the search is logged with its timing. Shares one code path
        with :meth:`search`, which never counts. A query with ``asof:`` counts nothing
        (the result's ``not_counted`` is :data:`ASOF_NOT_COUNTED`): it reads the past, and
        its page may hold memories dropped since. Nor does one whose words are all
        stopwords (:func:`stopwords_only`, ``not_counted`` :data:`STOPWORDS_NOT_COUNTED`):
        its page is not about anything."""
        q = _parse(query, self.clock())
        if not q.terms and not q.has_filters:
            # No surface's syntax here: each phrases its own example (cli/hints.py, mcp/server.py).
            raise InvalidInput("What should I recall? Give words or a filter.", field="query", value=query)
        res = self._search(query, limit=limit, mode=mode)
        now = self.clock()
        # Stopwords alone (what is the) are not about anything: the page is arbitrary, and
        # counting it would strengthen arbitrary memories (docs/search.md "Counted reads").
        idle = stopwords_only(q)
        try:
            # Counting is worth a short wait, not an agent's turn: behind a long writer
            # (a large ingest) the results still go back, marked as not counted.
            with self.store.atomic(wait_ms=RECALL_COUNT_WAIT_MS):
                if q.asof_ms is None and not idle:
                    self.store.count_read([m.id for m in res.hits], agent, now)
                self.store.touch_agent(agent, now)
                self.store.log(now, agent, "memory.search", None, f'{res.total} for "{query}"', res.took_ms)
        except StoreUnavailable as exc:
            # Why (the store's own sentence) and what to do about the read itself.
            nxt = NOT_COUNTED_NEXT.get(exc.reason, "The hits are complete; only the read was not counted")
            return res.replace(not_counted=f"{exc.message.rstrip('.')}. {nxt}")
        if q.asof_ms is not None and res.hits:
            # A recall with asof: looks at the past: its page may hold memories dropped
            # since and texts replaced since, and reading what the store held then says
            # nothing about what it holds now. It strengthens nothing (docs/search.md "asof:").
            return res.replace(not_counted=ASOF_NOT_COUNTED)
        if idle and res.hits:
            return res.replace(not_counted=STOPWORDS_NOT_COUNTED)
        # As in the seed, the hits are returned as ranked: strength before this read.
        return res

    def search(self, query: str = "", *, limit: int = 25, offset: int = 0, mode: str = DEFAULT_MODE, kind: str = "all",
               sort: str | None = None, direction: str = "desc", include_archived: bool = False, pending_only: bool = False,
               pinned_only: bool = False, conflicted_only: bool = False) -> SearchResult:
        """Uncounted search for people and the UI. Raises InvalidQuery on a bad token."""
        return self._search(query, limit=limit, offset=offset, mode=mode, kind=kind, sort=sort, direction=direction,
                            include_archived=include_archived, pending_only=pending_only, pinned_only=pinned_only,
                            conflicted_only=conflicted_only)

    def export(self, query: str = "", *, batch: int = 1000, mode: str = DEFAULT_MODE, **kw) -> Iterator[Memory]:
        """Every match of ``query`` (no cap), in ranked order, streamed in batches. Every
        batch is ranked at the same instant: strength moves with time, so pages ranked at
        different instants could repeat some rows and skip others."""
        now = self.clock()
        offset = 0
        while True:
            res = self._search(query, limit=batch, offset=offset, mode=mode, now=now, **kw)
            yield from res.hits
            offset += len(res.hits)
            if not res.hits or offset >= res.total:
                return

    def export_records(self, query: str = "", *, ids: Sequence[str] | None = None, batch: int = 1000,
                       **kw) -> Iterator[dict]:
        """What every export writes (``ledger export``, the web UI's ``/api/export`` and
        its export of selected memories): each match of ``query`` (or with ``ids``, those
        memories in that order; an unknown id raises :class:`UnknownMemory`) as
        ``Memory.to_dict()`` plus ``links`` (linked ids) and ``source`` (the source record,
        for chunks and claims from a document), so ``ledger import`` can restore it
        elsewhere (``store/transfer.py``); then history lines (``{"record": ...}``): every
        conflict, event, session, observation and checkpoint for a whole-store export (no
        query, no ids, no filter that narrows: ``sort``, ``mode`` and archived memories
        only order or widen it), only the conflicts among the exported memories otherwise
        (``store/transfer_history.py``). ``kw``: :meth:`search`'s filters."""
        from .store import transfer, transfer_history

        whole = ids is None and not (query or "").strip() and not any(
            kw.get(k) not in (None, False, "all") for k in _NARROWING)
        page: list[Memory] = []
        exported: list[str] = []
        if ids is not None:
            memories: Iterable[Memory] = [self.get(i) for i in dict.fromkeys(ids)]  # every id checked first
        else:
            memories = self.export(query, batch=batch, **kw)
        for m in memories:
            page.append(m)
            exported.append(m.id)
            if len(page) >= batch:
                yield from self._with_extras(page, transfer)
                page = []
        yield from self._with_extras(page, transfer)
        if whole:  # dropped memories come along, dropped: the log and conflicts name them
            seen = set(exported)
            missing = sorted({*transfer_history.conflict_sides(self.store, seen), *transfer.dropped_ids(self.store, seen)})
            for start in range(0, len(missing), batch):
                yield from self._with_extras(self.store.get_many(missing[start:start + batch], self.clock()), transfer)
        yield from transfer_history.export_history(self.store, None if whole else exported)

    def export_lines(self, query: str = "", **kw) -> Iterator[str]:
        """:meth:`export_records` as NDJSON lines (UTF-8 text kept, each ending in a
        newline): the one serialisation every export surface writes."""
        import json

        for rec in self.export_records(query, **kw):
            yield json.dumps(rec, ensure_ascii=False) + "\n"

    def _with_extras(self, page: list, transfer) -> Iterator[dict]:
        extras = transfer.export_extras(self.store, [m.id for m in page])
        for m in page:
            yield {**m.to_dict(), **extras[m.id]}

    def import_records(self, records: Iterable[tuple[int, dict]], *, batch: int = 500,
                       progress: Callable[[int], None] | None = None) -> dict:
        """Restore ``(line number, export record)`` pairs into this store without
        duplicates (``store/transfer.py`` says how ids and equal claims are merged).
        Records must already be checked with :func:`ledger.store.transfer.validate`.
        The whole import is one transaction (each ``batch`` of records a savepoint in
        it): a failure part way leaves the store as it was, so "Nothing was saved" is
        true and running the import again is safe. ``progress(n)`` is called after each
        batch with the number just written. History lines (``{"record": ...}``, checked with
        :func:`ledger.store.transfer_history.validate_history`) are written after the
        memories. Returns ``{"imported", "merged", "sources", "clusters", "links",
        "conflicts", "events", "sessions", "observations", "checkpoints"}``."""
        from .store import transfer, transfer_history

        now = self.clock()
        keys = transfer.claim_keys(self.store)
        total = {"imported": 0, "merged": 0, "sources": 0, "clusters": 0, "links": 0}
        pending: list[tuple[str, str]] = []
        history: list[dict] = []
        renamed: dict[str, str] = {}
        chunk_sources: set[str] = set()
        page: list[tuple[int, dict]] = []

        def flush() -> None:
            if not page:
                return
            r = transfer.import_batch(self.store, page, now=now, keys=keys)
            for k in total:
                total[k] += r[k]
            pending.extend(r["pendingLinks"])
            renamed.update(r["renamed"])
            if progress:
                progress(len(page))
            page.clear()

        with self.store.atomic():  # all or nothing: memories, links, contexts and history
            for line, rec in records:
                if "record" in rec:
                    history.append(rec)
                    if progress:
                        progress(1)
                    continue
                page.append((line, rec))
                if rec.get("kind") == "chunk" and isinstance(rec.get("sourceId"), str):
                    chunk_sources.add(rec["sourceId"])
                if len(page) >= batch:
                    flush()
            flush()
            total["links"] += transfer.add_links(self.store, pending)
            transfer.reindex_contexts(self.store, sorted(chunk_sources))
            total.update(transfer_history.import_history(self.store, history, renamed))
        return total

    def forget(self, ids: Sequence[str], *, agent: str) -> int:
        """Soft-delete memories; returns how many were live and are now dropped. Unknown
        ids raise UnknownMemory before anything changes."""
        return len(self.forget_each(ids, agent=agent)["forgotten"])

    def forget_each(self, ids: Sequence[str], *, agent: str) -> dict:
        """:meth:`forget`, saying which ids it dropped and which were already forgotten:
        ``{"forgotten": [full ids], "already": [full ids]}`` (input order, duplicates
        once). Raises InvalidInput for no ids, UnknownMemory before anything changes."""
        if not ids:
            raise InvalidInput("Which memories? No memory id was given, so nothing was forgotten.", field="memories",
                               value="")
        resolved = []
        for mid in ids:
            try:
                resolved.append(self.resolve_id(mid))
            except UnknownMemory as e:
                raise UnknownMemory(f"{e} Nothing was forgotten.",
                                    field="memory", value=mid) from None
        ids = list(dict.fromkeys(resolved))
        now = self.clock()
        out: dict = {"forgotten": [], "already": []}
        with self.store.atomic():
            self.store.touch_agent(agent, now)
            for mid in ids:
                dropped = self.store.soft_delete(mid, f"forgotten by {agent}", agent, now)
                out["forgotten" if dropped else "already"].append(mid)
        return out

    def link(self, a: str, b: str, *, agent: str) -> tuple[str, str]:
        """Link two memories (ids or short ids); returns the two full ids."""
        a, b = self.resolve_id(a), self.resolve_id(b)
        now = self.clock()
        with self.store.atomic():
            self.store.touch_agent(agent, now)
            self.store.link(a, b, agent, now)
        return a, b

    def links(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """Linked pairs ``(a, b)`` with ``a < b``; only those touching ``ids`` when given."""
        return self.store.links(ids)

    def related(self, memory_id: str, limit: int = 5) -> list[Memory]:
        memory_id = self.resolve_id(memory_id)
        self.store.row(memory_id)
        return self.store.related(memory_id, self.clock(), limit)

    def update(self, memory_id: str, *, text: str | None = None, cluster: str | None = None, by: str = HUMAN) -> Memory:
        """Edit a claim's text (redacted, re-indexed, proposer re-run) and/or move it to a cluster."""
        memory_id = self.resolve_id(memory_id)
        now = self.clock()
        row = self.store.row(memory_id)
        if text is not None:
            from .redact import redact

            self.store.require_claim(memory_id)
            text = redact(clean_text(text, empty="The new text is empty. To remove a memory, drop it instead."))
        with self.store.atomic():
            if cluster is not None and cluster != row.cluster_id:
                self.store.update_cluster(memory_id, cluster, by, now)
            if text is not None and text != row.text:
                self.store.update_text(memory_id, text, by, now)
                files = [f.path for f in self.store.get(memory_id, now).files]
                self._propose(memory_id, text, self._peers(memory_id, text, cluster or row.cluster_id, files), now, files)
        return self.store.get(memory_id, now)

    def bulk(self, op: str, ids: Sequence[str], *, by: str = HUMAN) -> dict:
        """Apply ``op`` (pin, unpin, archive, unarchive, merge, drop) to ``ids``.
        Returns ``{"affected": n}``, or ``{"merged": memory}`` for merge (the first id is
        kept; the others' hits, sources and readers fold into it)."""
        if op not in BULK_OPS:
            raise InvalidInput(f'Unknown bulk operation "{op}". Use one of: {", ".join(BULK_OPS)}.', field="op", value=op,
                               choices=BULK_OPS)
        ids = list(dict.fromkeys(self._resolve_ids(ids)))
        if not ids:
            raise InvalidInput("no memories selected")
        for mid in ids:
            self.store.row(mid)
        now = self.clock()
        with self.store.atomic():
            self.store.touch_agent(by, now)
            if op == "merge":
                if len(ids) < 2:
                    raise InvalidInput("merge needs at least two memories")
                for other in ids[1:]:
                    self.store.merge_into(ids[0], other, by, now, take_text=False)
                self.store.log(now, by, "memory.merge", ids[0], f"merged {len(ids) - 1} into {ids[0]}")
                return {"merged": self.store.get(ids[0], now)}
            affected = 0
            for mid in ids:
                row = self.store.row(mid)
                if op in ("pin", "unpin"):
                    if row.kind != "claim":
                        continue
                    self.store.set_flags(mid, now, pinned=op == "pin", reviewed=True if op == "pin" else None)
                elif op in ("archive", "unarchive"):
                    self.store.set_flags(mid, now, archived=op == "archive")
                elif op == "drop":
                    if not self.store.soft_delete(mid, "dropped in bulk", by, now):
                        continue
                    affected += 1
                    continue
                self.store.log(now, by, f"memory.{op}", mid)
                affected += 1
        return {"affected": affected}

    # ------------------------------------------------------------------ clusters
    def clusters(self) -> list[Cluster]:
        return self.store.clusters()

    def add_cluster(self, label: str, *, cluster_id: str | None = None, color: str | None = None) -> Cluster:
        """Create a cluster. Raises InvalidInput for a label, id or colour holding a NUL
        or an unpaired surrogate (no store can hold them)."""
        for what, value in (("label", label), ("id", cluster_id), ("colour", color)):
            problem = storable_problem(value) if isinstance(value, str) else None
            if problem:
                raise InvalidInput(f"The cluster {what} {problem}; remove it and try again.")
        check_field(color, field="color", what="The cluster colour", limit=MAX_COLOR_CHARS,
                    longer=" (a CSS colour such as #4f8a8b)")
        return self.store.add_cluster(label, self.clock(), cluster_id=cluster_id, color=color)

    # ------------------------------------------------------------------ sources
    def ingest(self, source: ingest_mod.SourceText, *, cluster: str, agent: str, trust: float | None = DEFAULT_SOURCE_TRUST,
               path: str | None = None, as_new: bool = False) -> IngestResult:
        """Chunk a document and store every chunk (whole or not at all, as readers see
        it). ``trust`` 0–1
        (None: ``DEFAULT_SOURCE_TRUST`` for a new source, unchanged for an updated one).

        ``path`` is the resolved file the text was read from. When a live source was
        read from the same path and ``as_new`` is false, that source is updated instead
        of a second one added (``store/source_sync.py``): unchanged chunks keep their
        reads, changed and removed ones are retired (``asof:`` still finds them), new
        ones are added. Raises :class:`InvalidInput` for empty text or a bad trust.

        Secrets are redacted from the whole text before it is chunked (so one cut across
        a chunk boundary is still found); the result's ``redacted`` says how many.
        """
        from . import ingest as ingest_mod
        from .redact import redact_counted

        text, redacted = redact_counted(source.text)
        chunks = [c.strip() for c in ingest_mod.chunk_text(text) if c and c.strip()]
        if path and not as_new:
            from .store import source_sync

            known = source_sync.find_by_path(self.store, path)
            if known:
                return self._update_source(known, source, chunks, cluster=cluster, agent=agent, trust=trust,
                                           redacted=redacted)
        from .store.sources import SourcePathTaken

        # The chunks are cut from redacted text: stored as they are, not redacted again.
        try:
            res = self._store_chunks(source.filename, chunks, cluster=cluster, agent=agent,
                                     trust=DEFAULT_SOURCE_TRUST if trust is None else trust, ext=source.ext,
                                     nbytes=source.bytes, path=path, unique_path=bool(path and not as_new))
        except SourcePathTaken:
            # Another process ingested the same file while this one was writing: this
            # copy is gone, and the file updates that source as a re-ingest would.
            from .store import source_sync

            known = source_sync.find_by_path(self.store, path)
            return self._update_source(known, source, chunks, cluster=cluster, agent=agent, trust=trust,
                                       redacted=redacted)
        return IngestResult(res.source_id, res.chunks, res.filename, False, 0, res.chunks, 0, redacted)

    def _update_source(self, known: dict, source: ingest_mod.SourceText, chunks: list[str], *, cluster: str, agent: str,
                       trust: float | None, redacted: int) -> IngestResult:
        """:meth:`ingest` of a file read before (``known``, :func:`source_sync.find_by_path`):
        that source is updated in its own cluster. Raises InvalidInput for another cluster."""
        from .store import source_sync

        if not chunks:
            raise InvalidInput("source text is empty: nothing to ingest.")
        # An update keeps the source in its cluster: a --cluster naming another one
        # (or none) would otherwise be ignored while the command said "updated".
        self.store.require_cluster(cluster)
        if cluster != known["cluster_id"]:
            raise InvalidInput(
                f"{source.filename} was ingested before (source {known['id']}, cluster {known['cluster_id']}); "
                f"ingesting it again updates that source, which stays in {known['cluster_id']}. Run it again "
                f"with --cluster {known['cluster_id']}, or add --as-new to ingest a separate copy into "
                f"{cluster}. Nothing was ingested.", field="cluster", value=cluster,
                suggestion=known["cluster_id"])
        t = None if trust is None else self._trust(trust)
        r = source_sync.resync(self.store, known["id"], source.filename, chunks, agent=agent, nbytes=source.bytes,
                               trust=t, now=self.clock())
        return IngestResult(known["id"], r["chunks"], source.filename, True, r["kept"], r["added"], r["retired"],
                            redacted)

    @staticmethod
    def _trust(trust) -> float:
        try:
            t = float(trust)
        except (TypeError, ValueError):
            raise InvalidInput(f"trust must be a number from 0 to 1, got {trust!r}.", field="trust", value=str(trust)) from None
        if not 0 <= t <= 1:
            raise InvalidInput(f"trust must be from 0 to 1, got {t}.", field="trust", value=t)
        return t

    def ingest_chunks(self, filename: str, chunks: Sequence[str], *, cluster: str, agent: str, trust: float = DEFAULT_SOURCE_TRUST,
                      ext: str | None = None, nbytes: int | None = None, neighbours: int = 2,
                      path: str | None = None) -> IngestResult:
        """Store pre-split chunks as one source (used by ``ingest`` and benchmarks),
        committed in batches but shown to readers only once whole (``store/sources.py``).
        ``path`` is the resolved file the text came from (re-ingests find it by it).
        Each chunk is redacted (``redacted`` of the result counts what that replaced)."""
        from .redact import redact_counted

        redacted = 0
        kept = []
        for c in chunks:
            if c and c.strip():
                c, n = redact_counted(c.strip())
                redacted += n
                kept.append(c)
        res = self._store_chunks(filename, kept, cluster=cluster, agent=agent, trust=trust, ext=ext, nbytes=nbytes,
                                 neighbours=neighbours, path=path)
        return IngestResult(res.source_id, res.chunks, res.filename, redacted=redacted)

    def _store_chunks(self, filename: str, chunks: Sequence[str], *, cluster: str, agent: str, trust: float,
                      ext: str | None = None, nbytes: int | None = None, neighbours: int = 2,
                      path: str | None = None, unique_path: bool = False) -> IngestResult:
        """:meth:`ingest_chunks` for chunks already stripped, non-empty and redacted
        (:meth:`ingest` cuts them from redacted text). ``unique_path``: see
        :meth:`ledger.store.sources.SourcesMixin.insert_source` (raises its
        ``SourcePathTaken``)."""
        from . import ingest as ingest_mod

        if not chunks:
            raise InvalidInput("source text is empty: nothing to ingest.")
        t = self._trust(trust)
        self.store.require_cluster(cluster)
        now = self.clock()
        sid, ids = self.store.insert_source(
            filename, ingest_mod.extension(filename) if ext is None else ext, cluster, agent,
            sum(len(c.encode()) for c in chunks) if nbytes is None else nbytes, t, chunks, now, neighbours=neighbours,
            path=path, unique_path=unique_path,
        )
        return IngestResult(sid, len(ids), filename)

    def sources(self) -> list[Source]:
        return self.store.sources()

    def source_detail(self, source_id: str, preview: int = 4) -> dict:
        """A source with its first ``preview`` chunks and its distilled claims."""
        src = self.store.source(source_id)
        now = self.clock()
        return {
            "source": src,
            "chunks": self.store.get_many(self.store.source_memory_ids(source_id, "chunk", preview), now),
            "claims": self.store.get_many(self.store.source_memory_ids(source_id, "claim"), now),
        }

    def source_previews(self, source_ids: Sequence[str], preview: int = 4) -> dict[str, dict]:
        """``{source_id: {"chunks": [Memory], "claims": [Memory]}}``: :meth:`source_detail`'s
        first ``preview`` chunks and distilled claims for many sources, read with one
        indexed query per source and hydrated together (the web's source list with
        previews did four queries and two hydrations per source)."""
        ids = self.store.source_preview_ids(source_ids, preview)
        by_id = {m.id: m for m in self.store.get_many([i for c, k in ids.values() for i in c + k], self.clock())}
        return {sid: {"chunks": [by_id[i] for i in c if i in by_id], "claims": [by_id[i] for i in k if i in by_id]}
                for sid, (c, k) in ids.items()}

    def set_trust(self, source_id: str, trust: float, *, by: str = HUMAN) -> float:
        """Set a live source's trust (0-1); returns it. Raises InvalidInput for a bad
        number, UnknownSource for an unknown or dropped source (a dropped source has no
        chunks left for its trust to weigh)."""
        try:
            t = float(trust)
        except (TypeError, ValueError):
            raise InvalidInput(f"trust must be a number from 0 to 1, got {trust!r}.", field="trust", value=str(trust)) from None
        if not 0 <= t <= 1:  # also refuses NaN and infinities
            raise InvalidInput(f"trust must be from 0 to 1, got {trust}.", field="trust", value=str(trust))
        return self.store.set_trust(source_id, t, by, self.clock())

    def drop_source(self, source_id: str, *, by: str = HUMAN) -> dict:
        chunks, flagged = self.store.drop_source(source_id, by, self.clock())
        return {"chunks": chunks, "flagged": flagged}

    # ------------------------------------------------------------------ conflicts (agents judge)
    def candidates(self, limit: int = 5) -> list[Candidate]:
        """The ``limit`` best unjudged candidate pairs, best score first."""
        from .store import conflicts as cq

        return cq.pending_candidates(self.store, self.clock(), limit)

    def candidate_count(self) -> int:
        """How many candidate pairs wait for a verdict (the rows :meth:`candidates` ranks)."""
        from .store import conflicts as cq

        return cq.pending_candidate_count(self.store)

    def judge(self, candidate_id: str, verdict: str, *, agent: str, kind: str | None = None,
              detector: float | None = None, note: str = "") -> str | None:
        """An agent's verdict on a candidate. ``unrelated`` settles the pair for good
        (returns None); ``conflict`` opens a conflict for a person and returns its id.
        Raises InvalidInput for a blank id, a bad verdict, kind or detector (must be 0–1),
        a ``note`` over :data:`MAX_NOTE_CHARS` characters."""
        from .store import conflicts as cq

        if not (candidate_id or "").strip():
            raise missing_id("candidate", candidate_id or "")
        if verdict not in VERDICTS:
            raise InvalidInput(f'verdict must be "conflict" or "unrelated", got "{verdict}".', field="verdict", value=verdict,
                               choices=VERDICTS)
        kind = (kind or DEFAULT_CONFLICT_KIND).strip().lower()
        if kind not in CONFLICT_KINDS:
            raise InvalidInput(f'Unknown kind "{kind}". Kinds: {", ".join(CONFLICT_KINDS)}.', field="kind", value=kind,
                               choices=CONFLICT_KINDS)
        check_field(note, field="note", what="The note", limit=MAX_NOTE_CHARS,
                    longer=" (a note says in a line or two why the pair conflicts)")
        if detector is None:
            detector = DEFAULT_DETECTOR
        try:
            detector = float(detector)
        except (TypeError, ValueError):
            raise InvalidInput(f"detector must be a number from 0 to 1, got {detector!r}.", field="detector", value=str(detector)) from None
        if not 0 <= detector <= 1:
            raise InvalidInput(f"detector must be from 0 to 1 (your confidence), got {detector}.", field="detector", value=detector)
        now = self.clock()
        with self.store.atomic():
            cand = cq.get_pending_candidate(self.store, candidate_id, now)
            self.store.touch_agent(agent, now)
            cq.mark_judged(self.store, candidate_id, verdict, agent, now)
            if verdict == "unrelated":
                self.store.log(now, agent, "conflicts.judge", cand.a.id, f"not a conflict with {cand.b.id}")
                return None
            cf = cq.insert_conflict(self.store, cand.a.id, cand.b.id, kind, cand.a.cluster_id, detector, note, now)
            self.store.log(now, agent, "conflicts.judge", cand.a.id, f"conflicts with {cand.b.id}")
            return cf

    def checkpoints(self, *, project: str | None = None, session: str | None = None, limit: int = 10) -> list[dict]:
        """Checkpoints (written when a hooked agent stops), newest first: dicts with
        ``id``, ``session``, ``project`` (absolute folder), ``at`` (epoch ms), ``event``,
        ``branch``, ``content`` (markdown). ``project`` must be an absolute path to match."""
        return self.store.watch.checkpoints(session=session, project=project, limit=limit)

    def conflicts(self, *, status: str = "open", limit: int = 50) -> list[Conflict]:
        from .store import conflicts as cq

        return cq.list_conflicts(self.store, self.clock(), status=status, limit=limit)

    def conflict(self, conflict_id: str) -> Conflict:
        from .store import conflicts as cq

        return cq.get_conflict(self.store, conflict_id, self.clock())

    # ------------------------------------------------------------------ conflicts (people resolve)
    def resolve(self, conflict_id: str, outcome: str, *, by: str = HUMAN) -> Conflict:
        """Resolve an open conflict: ``a``/``b`` keep one side (the other is retired),
        ``both`` keeps both and links them, ``merge`` puts B's text on A with the
        evidence of both (hits and sources summed, readers unioned, latest read kept),
        ``dismiss`` marks the detector wrong. A candidate id (``cc_...``) is judged and
        resolved in one step (:meth:`resolve_candidate`). Unknown outcomes raise
        InvalidInput; an id that is not open raises UnknownConflict / UnknownCandidate."""
        from .store import conflicts as cq

        if not (conflict_id or "").strip():
            raise missing_id("conflict", conflict_id or "")
        if outcome not in RESOLUTIONS:
            raise InvalidInput(f'Unknown outcome "{outcome}". Use one of: {", ".join(RESOLUTIONS)}.', field="outcome", value=outcome,
                               choices=RESOLUTIONS)
        if conflict_id.startswith(CANDIDATE_PREFIX):
            return self.resolve_candidate(conflict_id, outcome, by=by)
        now = self.clock()
        with self.store.atomic():
            c = cq.get_conflict(self.store, conflict_id, now, open_only=True)
            self._settle(c, outcome, by, now)
        return cq.get_conflict(self.store, conflict_id, now)

    def resolve_candidate(self, candidate_id: str, outcome: str, *, by: str = HUMAN) -> Conflict:
        """A person judges a waiting candidate and resolves it in one step, without
        waiting for an agent's verdict. ``dismiss`` settles the pair as not a conflict;
        ``a``/``b``/``both``/``merge`` judge it a conflict (kind "direct contradiction",
        detector 1.0) and resolve it at once, as :meth:`resolve` does. Either way a
        conflict row records the decision and is returned (status ``resolved`` or
        ``dismissed``). A candidate an agent already judged a conflict resolves that
        conflict. Raises InvalidInput (outcome), UnknownCandidate (no such candidate,
        settled as unrelated, or a side was dropped), UnknownConflict (its conflict is
        no longer open)."""
        from .store import conflicts as cq

        if not (candidate_id or "").strip():
            raise missing_id("candidate", candidate_id or "")
        if outcome not in RESOLUTIONS:
            raise InvalidInput(f'Unknown outcome "{outcome}". Use one of: {", ".join(RESOLUTIONS)}.', field="outcome", value=outcome,
                               choices=RESOLUTIONS)
        now = self.clock()
        with self.store.atomic():
            conflict_id = cq.conflict_of_candidate(self.store, candidate_id)
            if conflict_id is None:
                cand = cq.get_pending_candidate(self.store, candidate_id, now)
                cq.mark_judged(self.store, candidate_id, "unrelated" if outcome == "dismiss" else "conflict", by, now)
                conflict_id = cq.insert_conflict(self.store, cand.a.id, cand.b.id, DEFAULT_CONFLICT_KIND, cand.a.cluster_id,
                                                 1.0, f"judged and resolved by {by} in one step", now)
                self.store.log(now, by, "conflicts.judge", cand.a.id,
                               f"{'not a conflict' if outcome == 'dismiss' else 'conflicts'} with {cand.b.id} ({candidate_id})")
            c = cq.get_conflict(self.store, conflict_id, now, open_only=True)
            self._settle(c, outcome, by, now)
        return cq.get_conflict(self.store, conflict_id, now)

    def _settle(self, c: Conflict, outcome: str, by: str, now: int) -> None:
        """Apply a resolution to the open conflict ``c`` (inside the caller's write)."""
        from .store import conflicts as cq

        conflict_id = c.id
        self.store.touch_agent(by, now)
        a, b = c.a.id, c.b.id
        if outcome in ("a", "b"):
            win, lose = (a, b) if outcome == "a" else (b, a)
            cq.set_conflict_status(self.store, conflict_id, "resolved", outcome, by, now)
            self.store.set_flags(win, now, reviewed=True)
            self.store.soft_delete(lose, f"retired resolving conflict {conflict_id}", by, now)
        elif outcome == "merge":
            cq.set_conflict_status(self.store, conflict_id, "resolved", outcome, by, now)
            self.store.merge_into(a, b, by, now, take_text=True)
            self.store.set_flags(a, now, reviewed=True)
        elif outcome == "both":
            cq.set_conflict_status(self.store, conflict_id, "resolved", outcome, by, now)
            self.store.link(a, b, by, now)
            self.store.set_flags(a, now, reviewed=True)
            self.store.set_flags(b, now, reviewed=True)
        else:
            cq.set_conflict_status(self.store, conflict_id, "dismissed", outcome, by, now)
            self.store.set_flags(a, now, reviewed=True)
            self.store.set_flags(b, now, reviewed=True)
        self.store.log(now, by, "conflicts.resolve", a, f"{outcome} on {conflict_id}")

    # ------------------------------------------------------------------ review (people)
    def review_counts(self) -> dict:
        """The one definition of the review queue's size, used by ``stats``, ``review``
        and the web UI: ``{"claims": n, "conflicts": m, "candidates": k, "waiting": n + m}``.
        ``claims`` are live unreviewed claims not in an open conflict (a conflicted claim
        is reviewed through its conflict, so it counts once, as the conflict);
        ``candidates`` wait for an agent's verdict, not for a person, so they are not
        ``waiting``."""
        from .store import conflicts as cq

        claims = cq.pending_review_count(self.store)
        conflicts = cq.open_conflict_count(self.store)
        return {"claims": claims, "conflicts": conflicts, "candidates": cq.pending_candidate_count(self.store),
                "waiting": claims + conflicts}

    def review_queue(self, limit: int = 200) -> dict:
        """``{"claims": [Memory], "conflicts": [Conflict], "candidates": [Candidate],
        "claimCount": n, "conflictCount": m, "candidateCount": k}``: pending claims not
        in an open conflict (newest first), open conflicts, and candidates still waiting
        for an agent's verdict (best score first), which a person may resolve at once."""
        from .store import conflicts as cq

        now = self.clock()
        claims = self.store.get_many(cq.pending_review_ids(self.store, limit), now)
        conflicts = cq.list_conflicts(self.store, now, status="open", limit=limit)
        candidates = cq.pending_candidates(self.store, now, limit)
        n = self.review_counts()
        return {
            "claims": claims,
            "conflicts": conflicts,
            "candidates": candidates,
            "claimCount": n["claims"],
            "conflictCount": n["conflicts"],
            "candidateCount": n["candidates"],
            "waiting": n["waiting"],
        }

    def review(self, memory_id: str, action: str, *, text: str | None = None, by: str = HUMAN) -> Memory:
        """A person's review action on a claim: keep, pin (keeps and holds 0.99), drop,
        edit (new text, re-indexed and re-proposed, then kept). Chunks are refused with
        NotAClaim pointing at their source."""
        if action not in REVIEW_ACTIONS:
            raise InvalidInput(f'Unknown review action "{action}". Use one of: {", ".join(REVIEW_ACTIONS)}.', field="action",
                               value=action, choices=REVIEW_ACTIONS)
        memory_id = self.resolve_id(memory_id)
        row = self.store.require_claim(memory_id)
        if row.deleted_at is not None:
            raise UnknownMemory(f"{memory_id} was dropped (perhaps by another process); nothing to {action}.")
        now = self.clock()
        if action == "edit":
            if text is None or not text.strip():
                raise InvalidInput("edit needs the new text.")
            self.update(memory_id, text=text, by=by)
        with self.store.atomic():
            self.store.touch_agent(by, now)
            if action == "keep" or action == "edit":
                self.store.set_flags(memory_id, now, reviewed=True)
                if action == "keep":
                    self.store.log(now, by, "review.keep", memory_id)
            elif action == "pin":
                self.store.set_flags(memory_id, now, reviewed=True, pinned=True)
                self.store.log(now, by, "review.pin", memory_id)
            elif action == "drop":
                if not self.store.soft_delete(memory_id, "dropped in review", by, now):
                    raise UnknownMemory(f"{memory_id} was already dropped (perhaps by another process).")
        return self.store.get(memory_id, now)

    # ------------------------------------------------------------------ overview
    def stats(self) -> dict:
        """Store counts (docs/originals.md §1.13) plus disk size (bytes, main file), the median search
        time today (ms), and the store path."""
        import statistics

        now = self.clock()
        midnight = local_midnight_ms(now)
        c = self.store.counts(midnight)
        ms = c.pop("searchMs")
        c.update({
            "diskBytes": self.store.disk_bytes(),
            "startedAt": self.started_at,
            "p50SearchMs": round(statistics.median(ms), 2) if ms else None,
            # The review queue as review and the web UI count it (see review_counts);
            # "pending" above stays every unreviewed claim, conflicted ones included.
            "reviewQueue": (n := self.review_counts())["waiting"],
            "reviewClaims": n["claims"],
            "db": str(self.path),
            "watcher": self.store.watch.watcher_counts(),
            "llmToday": self.store.watch.llm_usage(midnight),
        })
        return c

    def events(self, limit: int = 20) -> list:
        return self.store.events(limit)

    def facets(self) -> dict:
        return self.store.facets()

    def timeline(self, buckets: int = 60) -> dict:
        return self.store.timeline(buckets)

    def agents(self) -> dict:
        since = self.clock() - DAY_MS
        activity, overlap = self.store.agents_activity(since)
        agents = []
        for a in self.store.agents():
            d = a.to_dict()
            d.update(activity.get(a.id, {"wrote": 0, "calls": 0, "hitRate": None, "top": []}))
            agents.append(d)
        return {"agents": agents, "overlap": overlap, "machines": self.store.machines(), "engine": self.store.engine}
