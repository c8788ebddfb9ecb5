"""Where state lives. One function decides the store path; everything else asks it.

Order (docs/design.md): ``--db`` argument, then ``$LEDGER_DB``, then ``$LEDGER_HOME/ledger.db``,
then ``~/.ledger/ledger.db``. Stdlib only (L0). The string versions (:func:`home_dir`,
:func:`db_file`) exist for the hook path, which must not pay for importing ``pathlib``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path


def home_dir() -> str:
    """``$LEDGER_HOME`` or ``~/.ledger``, as a string."""
    home = os.environ.get("LEDGER_HOME")
    return os.path.expanduser(home) if home else os.path.join(os.path.expanduser("~"), ".ledger")


def db_file(explicit: str | os.PathLike | None = None) -> str:
    """The store path as a string (see :func:`db_path`)."""
    if explicit:
        return os.path.expanduser(os.fspath(explicit))
    env = os.environ.get("LEDGER_DB")
    if env:
        return os.path.expanduser(env)
    return os.path.join(home_dir(), "ledger.db")


def ledger_home() -> "Path":
    """The folder for ledger's own files (logs, config): ``$LEDGER_HOME`` or ``~/.ledger``."""
    from pathlib import Path

    return Path(home_dir())


def db_path(explicit: str | os.PathLike | None = None) -> "Path":
    """Resolve the store path. The folder is *not* created here; the store creates it
    on first open so that read-only commands like ``--help`` never touch the disk."""
    from pathlib import Path

    return Path(db_file(explicit))


def default_agent(explicit: str | None = None) -> str:
    """Acting agent id: ``--agent``, then ``$LEDGER_AGENT``, then ``"agent"`` (docs/originals.md §1.0)."""
    return (explicit or os.environ.get("LEDGER_AGENT") or "agent").strip() or "agent"
