"""Where state lives. One function decides the store path; everything else asks it.

Order (DESIGN.md): ``--db`` argument, then ``$LEDGER_DB``, then ``$LEDGER_HOME/ledger.db``,
then ``~/.ledger/ledger.db``. Stdlib only (L0).
"""

from __future__ import annotations

import os
from pathlib import Path


def ledger_home() -> Path:
    """The folder for ledger's own files (logs, config): ``$LEDGER_HOME`` or ``~/.ledger``."""
    home = os.environ.get("LEDGER_HOME")
    return Path(home).expanduser() if home else Path.home() / ".ledger"


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """Resolve the store path. The folder is *not* created here; the store creates it
    on first open so that read-only commands like ``--help`` never touch the disk."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("LEDGER_DB")
    if env:
        return Path(env).expanduser()
    return ledger_home() / "ledger.db"


def default_agent(explicit: str | None = None) -> str:
    """Acting agent id: ``--agent``, then ``$LEDGER_AGENT``, then ``"agent"`` (seed §1.0)."""
    return (explicit or os.environ.get("LEDGER_AGENT") or "agent").strip() or "agent"
