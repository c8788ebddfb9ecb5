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

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

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
    kind = "not-a-claim"


class UnreadableSource(LedgerError):
    kind = "unreadable-source"


class StoreUnavailable(LedgerError):
    """The database file cannot be opened or written (permissions, disk full, locked
    past the busy timeout, not a SQLite file)."""

    kind = "store-unavailable"
    status = 503


class UnknownCheckpoint(LedgerError):
    kind = "unknown-checkpoint"
    status = 404
