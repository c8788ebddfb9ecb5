"""Domain errors. Every error carries a ``kind`` (a stable machine name used by the
JSON API and ``--json`` output) and a message written for the person or agent who has
to act on it: it says what went wrong and what to do next.

Stdlib only (layer L0).
"""

from __future__ import annotations


class LedgerError(Exception):
    """Base class. ``kind`` is a stable slug such as ``"unknown-memory"``."""

    kind = "ledger-error"
    #: HTTP status the web API answers with for this error.
    status = 400

    def __init__(self, message: str, *, field: str | None = None, value: object = None, choices: tuple = (),
                 suggestion: str | None = None):
        super().__init__(message)
        self.message = message
        #: Which input was wrong, by its neutral name (``"cluster"``, ``"trust"``), its
        #: value, the valid choices when there is a closed set, and the choice it most
        #: likely meant. Surfaces phrase their own hint from these (the CLI names its
        #: flag, the web API returns them as JSON); ``message`` names no surface.
        self.field = field
        self.value = value
        self.choices = tuple(choices)
        self.suggestion = suggestion

    def fields(self) -> dict:
        """The structured fields that are set, JSON-ready: ``field``, ``value``,
        ``choices``, ``suggestion``."""
        d: dict = {}
        if self.field is not None:
            d["field"] = self.field
        if self.value is not None:
            d["value"] = self.value if isinstance(self.value, (str, int, float, bool)) else str(self.value)
        if self.choices:
            d["choices"] = list(self.choices)
        if self.suggestion is not None:
            d["suggestion"] = self.suggestion
        return d

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InvalidInput(LedgerError):
    kind = "invalid-input"


class InvalidQuery(LedgerError):
    """A query token that does not parse. ``token`` and ``reason`` are kept apart so
    surfaces can highlight the token; ``str()`` is ``Cannot parse "<token>": <reason>``."""

    kind = "invalid-query"

    def __init__(self, token: str, reason: str):
        super().__init__(f'Cannot parse "{token}": {reason}')
        self.token = token
        self.reason = reason


class QueryTooLong(InvalidQuery):
    """A query longer than the parser's limit (``ledger.query.parser.MAX_QUERY_CHARS``).
    Not a token that fails to parse, so it is not worded as one: the message gives the
    query's length, the limit (both in characters) and what to do. Still of kind
    ``invalid-query`` (its subclass), with ``length`` and ``limit`` as structured fields."""

    def __init__(self, length: int, limit: int):
        LedgerError.__init__(self, f"The query is too long: {length:,} characters, and the limit is {limit:,}. "
                                   "Search for the few words that matter (names, error messages, file names) "
                                   "instead of pasting a whole text.", field="query")
        self.token = ""
        self.reason = f"longer than {limit:,} characters"
        self.length = length
        self.limit = limit

    def fields(self) -> dict:
        return {**super().fields(), "length": self.length, "limit": self.limit}


class TextTooLong(InvalidInput):
    """A claim's text longer than a claim may be (``service.MAX_TEXT_CHARS``): kind
    ``invalid-input``, field ``claim``, with ``length`` and ``limit`` (characters) as
    structured fields. The message says what a claim is and names no surface; each adds
    where a whole document goes instead in its own terms (the CLI's ``ingest``, the
    web's Sources, an MCP client's user)."""

    def __init__(self, length: int, limit: int):
        super().__init__(f"A claim is one self-contained fact; this text has {length} characters (max {limit}).",
                         field="claim")
        self.length = length
        self.limit = limit

    def fields(self) -> dict:
        return {**super().fields(), "length": self.length, "limit": self.limit}


#: Store failures whose way out is another store location (a path or URL that is no
#: ledger store, or one this version cannot use): each surface adds where its store is
#: chosen (the CLI's --db and $LEDGER_DB, an MCP server's entry in its client's config,
#: the store ``ledger serve`` was started on). The core's messages name none of them.
STORE_LOCATION_REASONS = ("bad-path", "corrupt", "newer-store", "unreachable")


class UnknownCluster(LedgerError):
    kind = "unknown-cluster"
    status = 404


class UnknownMemory(LedgerError):
    kind = "unknown-memory"
    status = 404


class UnknownSource(LedgerError):
    kind = "unknown-source"
    status = 404


class UnknownCandidate(LedgerError):
    kind = "unknown-candidate"
    status = 404


class UnknownConflict(LedgerError):
    kind = "unknown-conflict"
    status = 404


class NotAClaim(LedgerError):
    """A chunk was given where a claim is needed; ``source_id`` is the chunk's source
    (chunks are reviewed with their document)."""

    kind = "not-a-claim"

    def __init__(self, message: str, *, source_id: str | None = None, **kw):
        super().__init__(message, **kw)
        self.source_id = source_id

    def fields(self) -> dict:
        d = super().fields()
        if self.source_id is not None:
            d["sourceId"] = self.source_id
        return d


class UnreadableSource(LedgerError):
    kind = "unreadable-source"


class NoStore(LedgerError):
    """A read that reports on a store (its counts, its conflicts, its sources, an export
    of it) was asked of a store file that does not exist. Nothing was created; the
    message names ``path`` and says how a store is created. Not a
    :class:`StoreUnavailable`: the store is not failing, it is not there. HTTP 404."""

    kind = "no-store"
    status = 404

    def __init__(self, message: str, *, path: str, **kw):
        super().__init__(message, **kw)
        self.path = path

    def fields(self) -> dict:
        d = super().fields()
        d["path"] = self.path
        return d


class StoreUnavailable(LedgerError):
    """The database file cannot be opened or written (permissions, disk full, locked
    past the busy timeout, not a SQLite file). SQLite's own errors are translated into
    this inside ``ledger.store``: ``reason`` is one of :data:`STORE_REASONS`, ``detail``
    what SQLite said, ``path`` the store file (when known)."""

    kind = "store-unavailable"
    status = 503

    def __init__(self, message: str, *, reason: str = "error", detail: str | None = None, path: str | None = None, **kw):
        super().__init__(message, **kw)
        self.reason = reason
        self.detail = detail
        self.path = path
        if reason == "read-only":
            # 403, not 503: the store will not become writable by itself, so the request
            # must not be retried as a passing outage (503 invites retries); the server
            # refuses the change and says what to do.
            self.status = 403

    def fields(self) -> dict:
        d = super().fields()
        d["reason"] = self.reason
        if self.path is not None:
            d["path"] = self.path
        return d


class DiskFull(StoreUnavailable):
    """The disk holding the store is full (SQLITE_FULL, or ENOSPC on the file, its WAL
    or its folder): the change was not saved, and nothing already saved was lost. Its
    own kind, so a script or an agent can tell "free some space" from a ledger bug; HTTP
    507 (Insufficient Storage)."""

    kind = "disk-full"
    status = 507

    def __init__(self, message: str, **kw):
        kw["reason"] = "disk-full"
        super().__init__(message, **kw)


class NewerStore(StoreUnavailable):
    """The store records a schema migration this version does not know: a newer ledger
    wrote it. It is refused before anything is read or written (using it would fail
    later, naming columns this version has never heard of). The fix is to upgrade
    ledger or point at another store; HTTP 409 (Conflict: the store's version)."""

    kind = "newer-store"
    status = 409

    def __init__(self, message: str, **kw):
        kw["reason"] = "newer-store"
        super().__init__(message, **kw)


#: Why the store failed: ``disk-full`` (raised as :class:`DiskFull`), ``newer-store``
#: (:class:`NewerStore`), ``read-only`` (permissions, a read-only file or folder),
#: ``locked`` (another process held the write lock past the busy timeout), ``corrupt``
#: (not a SQLite file, a damaged page), ``bad-path`` (the path cannot hold a store: a
#: file where a folder must be, a folder where the file must be), ``error`` (anything
#: else: a bug).
STORE_REASONS = ("disk-full", "newer-store", "read-only", "locked", "corrupt", "bad-path", "unreachable", "missing-driver",
                 "migrating", "error")


def store_unavailable(message: str, *, reason: str = "error", **kw) -> StoreUnavailable:
    """The error for a store failure of ``reason`` (one of :data:`STORE_REASONS`): the
    class with its own kind where there is one (:class:`DiskFull`, :class:`NewerStore`),
    else :class:`StoreUnavailable`. ``kw``: ``detail``, ``path`` and the base fields."""
    if reason == "disk-full":
        return DiskFull(message, **kw)
    if reason == "newer-store":
        return NewerStore(message, **kw)
    return StoreUnavailable(message, reason=reason, **kw)


#: What each kind of id looks like and where a person finds one, for :func:`missing_id`.
_ID_HELP = {
    "memory": ("m_abc123", "a search shows the ids; the short ones work too"),
    "source": ("s_abc123", "the list of sources shows them"),
    "conflict": ("cf_abc123", "the review queue shows open conflicts (cf_...) and candidates (cc_...)"),
    "candidate": ("cc_abc123", "the review queue shows the candidates waiting for a verdict"),
}


def id_example(what: str) -> str:
    """An example id of ``what`` (``m_abc123`` for a memory), for messages."""
    return _ID_HELP.get(what, (f"<{what} id>", ""))[0]


def missing_id(what: str, value: str = "") -> InvalidInput:
    """The error for an empty (or blank) id of ``what`` (``memory``, ``source``,
    ``conflict``, ``candidate``): "Which memory? ..." with an example id and where ids
    are listed, naming no surface (each phrases its own hint). ``field`` is ``what``,
    ``value`` the blank text given. An empty id used to reach the lookup and read "No
    source ." or name a CLI command on the web."""
    example, where = _ID_HELP.get(what, (f"<{what} id>", ""))
    return InvalidInput(f"Which {what}? The {what} id is empty: give one such as {example}" + (f" ({where})." if where else "."),
                        field=what, value=value)


class UnknownCheckpoint(LedgerError):
    kind = "unknown-checkpoint"
    status = 404
