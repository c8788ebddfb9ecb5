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
    """The store path as a string (see :func:`db_path`). Raises
    :class:`~ledger.errors.InvalidInput` for a URL whose scheme is not PostgreSQL's
    (:func:`check_store_target`)."""
    if explicit:
        # ":memory:" passed in by ledger itself is the empty stand-in a read of a missing
        # store opens (cli/verbs.read_target); one a user types is refused where it is
        # typed (the --db options, `ledger config set`), and here for the variable and the
        # config file, which reach every surface, the hooks included.
        return _expanded(check_store_target(os.fspath(explicit), "--db", in_memory=True))
    env = os.environ.get("LEDGER_DB")
    if env:
        return _expanded(check_store_target(env, "$LEDGER_DB"))
    configured = _configured_db()
    if configured:
        return _expanded(check_store_target(configured, "store.db in config.toml"))
    return os.path.join(home_dir(), "ledger.db")


def _expanded(target: str) -> str:
    return target if is_store_url(target) else os.path.expanduser(target)


#: The forms a store location may take, for messages.
STORE_FORMS = "a SQLite file path (e.g. ~/.ledger/ledger.db) or a PostgreSQL URL (postgresql://user@host:5432/db)"


def url_scheme(target: str) -> str | None:
    """The scheme of ``target`` when it is written as a URL (``scheme://...``, RFC 3986
    scheme characters), else None. A Windows drive (``C:\\x``) is not a URL."""
    head, sep, _ = target.partition("://")
    if sep and head[:1].isascii() and head[:1].isalpha() and all(c.isascii() and (c.isalnum() or c in "+.-") for c in head):
        return head
    return None


#: SQLite's name for a database that lives in the process's memory and is gone when it ends.
IN_MEMORY = ":memory:"


def check_store_target(target: str, where: str = "--db", *, in_memory: bool = False) -> str:
    """``target`` unchanged when it is a store location ledger can open: a PostgreSQL
    URL or a file path. Any other ``scheme://`` (``mysql://``, ``https://``,
    ``file://``...) raises :class:`~ledger.errors.InvalidInput` naming ``where`` it
    came from and the supported forms, instead of becoming a folder named ``mysql:``.
    So does SQLite's ``:memory:`` unless ``in_memory`` (ledger's own stand-in, never
    what a user typed): every command is its own process, so a store in memory took
    each write, said "remembered", and lost it when the command ended."""
    if is_store_url(target):
        return target
    if target == IN_MEMORY and not in_memory:
        from .errors import InvalidInput

        raise InvalidInput(in_memory_message(where), field="db", value=target)
    scheme = url_scheme(target)
    if scheme is None:
        return target
    from .errors import InvalidInput

    raise InvalidInput(f"{where} is {shown_location(target)}: ledger cannot open a {scheme}:// store. "
                       f"A store is {STORE_FORMS}. Nothing was changed.", field="db", value=shown_location(target))


def in_memory_message(where: str) -> str:
    """Why ``where`` (``--db``, ``$LEDGER_DB``...) may not be ``:memory:``, and what to give."""
    return (f"{where} is :memory:, a SQLite store that lives in one process's memory: each ledger command (and each "
            f"hook) is its own process, so every write would be lost when it ends. Give a store file (e.g. "
            f"~/.ledger/ledger.db, or a file under /tmp for a throwaway store) or a postgresql:// URL. Nothing was changed.")


def store_location(target: str | os.PathLike) -> str:
    """``target`` as it must be written down for a process started elsewhere (a hook
    command, an MCP client's configuration): a PostgreSQL URL unchanged, a file path
    made absolute (``~`` expanded, against the current folder). Raises
    :class:`~ledger.errors.InvalidInput` for another URL scheme."""
    t = check_store_target(os.fspath(target))
    return t if is_store_url(t) else os.path.abspath(os.path.expanduser(t))


def shown_location(target: str | os.PathLike) -> str:
    """``target`` fit to print: a URL's password replaced by ``***``
    (``postgresql://me:***@host/db``); a path unchanged."""
    t = os.fspath(target)
    if "://" not in t:
        return t
    import re

    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", t)


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


def names_folder(target: str) -> bool:
    """Whether the store location ``target`` ends in a path separator (``/tmp/new/``):
    it names a folder, never a store file, even when the folder does not exist yet
    (SQLite would make a *file* of that name, which then blocks the folder). A
    PostgreSQL URL never does (its trailing ``/`` is not a path)."""
    return not is_store_url(target) and target.endswith(tuple(s for s in (os.sep, os.altsep) if s))


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
    """Acting agent id: ``--agent``, then ``$LEDGER_AGENT``, then ``"agent"`` (docs/originals.md §1.0),
    in its normal form (:func:`ledger.text.agent_id`: lowercased, so ``--agent Claude``
    is ``claude`` and ``agent:Claude`` finds it). Raises :class:`ledger.errors.InvalidInput`
    for an id with a space or a control character."""
    raw = (explicit or os.environ.get("LEDGER_AGENT") or "agent").strip() or "agent"
    if raw.isascii() and raw.isalnum() and raw.islower():
        return raw  # the usual id: nothing to fold, and no import on the agent verbs' path
    from .text import agent_id

    return agent_id(raw, source="--agent or $LEDGER_AGENT")
