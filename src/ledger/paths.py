"""Where state lives. One function decides the store path; everything else asks it.

Order (docs/design.md): ``--db`` argument, then ``$LEDGER_DB``, then ``store.db`` in
``$LEDGER_HOME/config.toml`` (``ledger config set store.db ...``), then
``$LEDGER_HOME/ledger.db``, then ``~/.ledger/ledger.db``. A store is a SQLite file or a
PostgreSQL URL (``postgresql://...``, docs/postgres.md). Stdlib only (L0). The string versions (:func:`home_dir`,
:func:`db_file`) exist for the hook path, which must not pay for importing ``pathlib``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path


#: Variables read by ledger that are not named ``LEDGER_*`` (harness contracts).
_OTHER_ENV = ("CLAUDE_PROJECT_DIR",)


def check_environment(environ=None) -> None:
    """Refuse an environment variable of ledger's (``LEDGER_*``, and
    ``CLAUDE_PROJECT_DIR``) whose value is not valid UTF-8.

    Python keeps the undecodable bytes of ``os.environ`` as lone surrogates
    (``surrogateescape``); SQLite, JSON and the terminal cannot carry them, so a bad
    ``$LEDGER_AGENT`` failed deep inside SQLite with a traceback, and a bad
    ``$LEDGER_DB`` made a store whose path no message could print. Raises
    :class:`~ledger.errors.InvalidInput` naming the variable (``field``), the offending
    byte and its position, and what to set instead. ``environ`` defaults to
    ``os.environ``. One pass over the variables: microseconds, fine on the hook path."""
    env = os.environ if environ is None else environ
    for name in sorted(env):
        if not (name.startswith("LEDGER_") or name in _OTHER_ENV):
            continue
        value = env[name]
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            from .errors import InvalidInput

            bad = value[exc.start]
            byte = f"byte 0x{ord(bad) - 0xDC00:02X}" if 0xDC80 <= ord(bad) <= 0xDCFF else f"character U+{ord(bad):04X}"
            shown = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") \
                if all(0xDC80 <= ord(c) <= 0xDCFF for c in value if 0xD800 <= ord(c) <= 0xDFFF) else ascii(value)
            example = {"LEDGER_DB": "~/.ledger/ledger.db", "LEDGER_HOME": "~/.ledger"}.get(name, "<utf-8 text>")
            raise InvalidInput(
                f"${name} is not valid UTF-8 ({byte} at position {exc.start} of {shown}). ledger keeps text and paths "
                f"as UTF-8: set it again in UTF-8 (export {name}={example}) or unset it (unset {name}).",
                field=name, value=shown) from None


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
    configured = _configured_db()
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(home_dir(), "ledger.db")


def _configured_db() -> str | None:
    """``store.db`` from ``$LEDGER_HOME/config.toml``, if set. ``tomllib`` is imported
    only when the file has a ``[store]`` table; an unreadable file is ignored here
    (``ledger config`` and hook.log report it)."""
    path = os.path.join(home_dir(), "config.toml")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if b"[store]" not in raw:
        return None
    import tomllib

    try:
        value = tomllib.loads(raw.decode("utf-8")).get("store", {}).get("db")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        return None
    return value.strip() or None if isinstance(value, str) else None


def ledger_home() -> "Path":
    """The folder for ledger's own files (logs, config): ``$LEDGER_HOME`` or ``~/.ledger``."""
    from pathlib import Path

    return Path(home_dir())


def is_store_url(target: object) -> bool:
    """Whether a store target is a PostgreSQL URL (``postgresql://...``), not a file."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def db_path(explicit: str | os.PathLike | None = None) -> "Path":
    """Resolve the store path. The folder is *not* created here; the store creates it
    on first open so that read-only commands like ``--help`` never touch the disk.
    A PostgreSQL store's URL is returned as the string it is (a ``Path`` would fold
    its ``//``)."""
    from pathlib import Path

    f = db_file(explicit)
    return f if is_store_url(f) else Path(f)


def machine_id() -> str:
    """This machine's name, recorded with every write (row-level attribution on a shared
    store): ``$LEDGER_MACHINE``, else the host name, else ``"unknown"``."""
    name = (os.environ.get("LEDGER_MACHINE") or "").strip()
    if not name:
        uname = getattr(os, "uname", None)
        name = (uname().nodename if uname else os.environ.get("COMPUTERNAME", "")).strip()
    return name or "unknown"


def default_agent(explicit: str | None = None) -> str:
    """Acting agent id: ``--agent``, then ``$LEDGER_AGENT``, then ``"agent"`` (docs/originals.md §1.0)."""
    return (explicit or os.environ.get("LEDGER_AGENT") or "agent").strip() or "agent"
