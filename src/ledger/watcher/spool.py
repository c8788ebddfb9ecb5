"""The spool: finished tool calls (observations) kept on this machine's disk until the
store takes them.

Three cases put an observation here:

- the store is locked longer than the hook may wait (``HOOK_BUSY_TIMEOUT_MS``): the
  hook must still answer at once and must not lose the observation (issue 12);
- a shared PostgreSQL store cannot be reached over the network;
- a shared PostgreSQL store, always: a PostToolUse hook there writes the observation
  here and returns without importing the database driver or connecting (about 8x the
  CPU of the rest of the hook); a detached drain process (``ledger __drain``, started
  by the hook when none runs) uploads it. See docs/watcher.md, "The spool".

The hook appends the observation, already redacted and bounded, as one JSON line to
``<spool>/pending.jsonl``; a drainer (the next hook that connects anyway, the detached
drain process, or the distiller) inserts it into the store. Each spooled observation
carries a ``tool_use_id`` (the harness's, or a fresh ``spool-<hex>``), and the store
keeps one observation per id, so a drain cut short by ``kill -9`` or a lost connection
is simply redone: every observation arrives exactly once.

Concurrency, with ``fcntl.flock``:

- ``lock``: appenders take it, append one line with one ``write``, and release it; a
  drainer takes it only to rename ``pending.jsonl`` to ``draining-<pid>-<n>.jsonl`` (so
  no appender can still be writing into what it drains);
- ``drain.lock``: one drainer at a time claims and inserts, so observations are stored
  in the order they were spooled (their step numbers follow that order), whichever
  process drains; a ``draining-*`` file left by a drainer that died or failed is
  claimed again, before the pending file (it is older);
- ``drainer.lock``: held by the detached drain process for its whole life. A hook that
  spooled starts one only when this lock is free. The drain process lets it go only
  while holding ``lock`` and seeing nothing to drain, so an observation appended before
  that is drained by it, and one appended after finds the lock free and starts another.

Spooled observations get their step number when drained (after calls stored directly
in the meantime); ``at`` keeps the time of the call. POSIX only (``fcntl``); elsewhere
nothing is spooled and a locked store drops the observation as before. Stdlib only.
"""

from __future__ import annotations

import json
import os

LOCK = "lock"
DRAIN_LOCK = "drain.lock"
DRAINER_LOCK = "drainer.lock"
PENDING = "pending.jsonl"


def spool_dir(db: str) -> str:
    """The spool folder of the store at ``db``: beside a SQLite file; for a shared
    PostgreSQL store (a URL), in this machine's ``$LEDGER_HOME/spool/``, one folder per
    store (named by a hash of its URL, password left out)."""
    db = os.fspath(db)
    if db.startswith(("postgresql://", "postgres://")):
        import hashlib
        import re

        from ..paths import home_dir

        bare = re.sub(r"(://[^:/@]+):[^@/]*@", r"\1@", db)
        return os.path.join(home_dir(), "spool", hashlib.sha256(bare.encode()).hexdigest()[:16])
    return db + ".spool"


def _locked(folder: str, name: str = LOCK, wait_ms: int | None = None):
    """An open descriptor holding ``name``'s exclusive flock; with ``wait_ms``, None
    when it could not be had within that many milliseconds (0: at once or not)."""
    import fcntl

    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(folder, name), os.O_RDWR | os.O_CREAT, 0o600)
    if wait_ms is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd
    import time

    deadline = time.monotonic() + wait_ms / 1000
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() + delay > deadline:
                os.close(fd)
                return None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _unlock(fd: int) -> None:
    os.close(fd)  # closing releases the flock


def append(folder: str, record: dict) -> None:
    """Append one observation record (JSON-able dict) to the spool. Raises OSError (or
    ImportError off POSIX) when it cannot: the caller logs and moves on."""
    if not record.get("tool_use_id"):
        record = {**record, "tool_use_id": "spool-" + os.urandom(8).hex()}
    line = (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
    fd = _locked(folder)
    try:
        out = os.open(os.path.join(folder, PENDING), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(out, line)
        finally:
            os.close(out)
    finally:
        _unlock(fd)


def has_work(folder: str) -> bool:
    """True when the spool holds anything to drain (one ``listdir``; a missing folder
    costs one failed call)."""
    try:
        return any(n == PENDING or n.startswith("draining-") for n in os.listdir(folder))
    except OSError:
        return False


def _claim(folder: str) -> list[str]:
    """Files this process drains now, oldest first: every ``draining-*`` file (called
    with ``drain.lock`` held, so whoever renamed one is no longer draining it: it died,
    or its insert failed), renamed to ours, then the pending file (renamed under the
    appenders' lock). Process ids are not consulted: a drain process that died may
    linger as a zombie where nothing reaps it (a container without an init)."""
    me = os.getpid()
    mine: list[str] = []
    fd = _locked(folder)
    try:
        left = []
        for name in os.listdir(folder):
            if name.startswith("draining-"):
                try:
                    left.append((os.path.getmtime(os.path.join(folder, name)), name))
                except OSError:
                    continue
        for _mtime, name in sorted(left):
            target = os.path.join(folder, f"draining-{me}-{os.urandom(4).hex()}.jsonl")
            os.rename(os.path.join(folder, name), target)
            mine.append(target)
        pending = os.path.join(folder, PENDING)
        if os.path.exists(pending):
            target = os.path.join(folder, f"draining-{me}-{os.urandom(4).hex()}.jsonl")
            os.rename(pending, target)
            mine.append(target)
    finally:
        _unlock(fd)
    return mine


def drain(folder: str, insert, log=None, wait_ms: int | None = None) -> int:
    """Insert every spooled record with ``insert(record)`` (which must be idempotent per
    ``tool_use_id`` and raise to stop), oldest first; returns how many records were
    handed over. A file is deleted only once all its lines went in; unreadable lines
    are logged and skipped. Exceptions from ``insert`` propagate after leaving the file
    for a later drain. One drainer at a time (``drain.lock``): ``wait_ms`` bounds the
    wait for another one's batch (None: wait as long as it takes); not had in time,
    nothing is drained and 0 returned."""
    if not has_work(folder):
        return 0
    guard = _locked(folder, DRAIN_LOCK, wait_ms=10**9 if wait_ms is None else wait_ms)
    if guard is None:
        return 0
    done = 0
    try:
        for path in _claim(folder):
            try:
                with open(path, "rb") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            for raw in lines:
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except ValueError:
                    if log:
                        log(f"spool: unreadable line skipped in {os.path.basename(path)}: {raw[:80]!r}")
                    continue
                if isinstance(record, dict):
                    insert(record)
                    done += 1
            try:
                os.unlink(path)
            except OSError:
                pass
    finally:
        _unlock(guard)
    return done


def hold_drainer(folder: str) -> int | None:
    """For the detached drain process: take ``drainer.lock`` at once, or None when
    another drain process holds it (that one will drain what is spooled). Keep the
    returned descriptor until :func:`release_if_idle` lets it go (or the process
    ends)."""
    return _locked(folder, DRAINER_LOCK, wait_ms=0)


def drainer_running(folder: str) -> bool:
    """Whether a drain process holds ``drainer.lock`` now (a hook that spooled starts
    one when not)."""
    fd = _locked(folder, DRAINER_LOCK, wait_ms=0)
    if fd is None:
        return True
    _unlock(fd)
    return False


def release_if_idle(folder: str, drainer_fd: int) -> bool:
    """Let ``drainer.lock`` go if nothing waits in the spool, deciding under the
    appenders' lock (see the module's notes); True when released."""
    fd = _locked(folder)
    try:
        if has_work(folder):
            return False
        _unlock(drainer_fd)
        return True
    finally:
        _unlock(fd)


def spawn_drainer(db: str, env: dict | None = None, *, migrate: bool = False) -> int | None:
    """Start the detached drain process for the store at ``db`` (``python -m ledger
    __drain``; the store is passed in ``$LEDGER_DB``, not on the command line, where
    ``ps`` would show a URL's password) unless one runs. Its own session, no
    terminal, output discarded; our hooks disabled in it. ``migrate``: it opens the
    store first, applying pending schema changes, even with nothing spooled (a hook
    left them to it: :data:`ledger.harness.runner.HOOK_MIGRATE_AT_MOST`). Returns its
    pid, or None when one was running. ``os.posix_spawn``: no ``subprocess`` import on
    the hook path. Raises OSError when it cannot be started."""
    import sys

    if drainer_running(spool_dir(db)):
        return None
    child_env = dict(os.environ if env is None else env)
    child_env.update(LEDGER_DB=db, LEDGER_HOOKS_DISABLED="1")
    devnull = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0)]
    argv = [sys.executable, "-m", "ledger", "__drain"] + (["--migrate"] if migrate else [])
    return os.posix_spawn(sys.executable, argv, child_env, file_actions=actions, setsid=True)
