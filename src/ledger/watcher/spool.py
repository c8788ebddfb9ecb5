"""The spool: PostToolUse observations kept on disk while the store is locked, or,
for a shared PostgreSQL store, while the database cannot be reached over the network.

When another process holds the store's write lock longer than the hook may wait
(``HOOK_BUSY_TIMEOUT_MS``), the hook must still answer at once and must not lose the
observation (issue 12). It appends the observation, already redacted and bounded, as one
JSON line to ``<db>.spool/pending.jsonl``; the next hook on that store, or the distiller,
drains it into the store. Each spooled observation carries a ``tool_use_id`` (the
harness's, or a fresh ``spool-<hex>``), and the store keeps one observation per id, so a
drain cut short by ``kill -9`` is simply redone: every observation arrives exactly once.

Concurrency, with ``fcntl.flock`` on ``<db>.spool/lock``:

- appenders take the lock, append one line with one ``write``, and release it;
- a drainer takes the lock only to rename ``pending.jsonl`` to
  ``draining-<pid>-<n>.jsonl`` (so no appender can still be writing into what it
  drains), then inserts the lines without the lock and deletes the file when every
  line is in;
- a ``draining-*`` file whose process is gone is claimed by renaming it to the
  drainer's own pid, and drained again.

Spooled observations get their step number when drained (after calls stored directly
in the meantime); ``at`` keeps the time of the call. POSIX only (``fcntl``); elsewhere
nothing is spooled and a locked store drops the observation as before. Stdlib only.
"""

from __future__ import annotations

import json
import os

LOCK = "lock"
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


def _locked(folder: str):
    import fcntl

    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _claim(folder: str) -> list[str]:
    """Files this process may drain now: the pending file (renamed under the lock) and
    draining files of dead processes (renamed to ours)."""
    me = os.getpid()
    mine: list[str] = []
    fd = _locked(folder)
    try:
        pending = os.path.join(folder, PENDING)
        if os.path.exists(pending):
            target = os.path.join(folder, f"draining-{me}-{os.urandom(4).hex()}.jsonl")
            os.rename(pending, target)
            mine.append(target)
        for name in sorted(os.listdir(folder)):
            if not name.startswith("draining-"):
                continue
            path = os.path.join(folder, name)
            if path in mine:
                continue
            try:
                pid = int(name.split("-")[1])
            except (IndexError, ValueError):
                pid = -1
            if pid == me:
                mine.append(path)
            elif pid <= 0 or not _alive(pid):
                target = os.path.join(folder, f"draining-{me}-{os.urandom(4).hex()}.jsonl")
                os.rename(path, target)
                mine.append(target)
    finally:
        _unlock(fd)
    return mine


def drain(folder: str, insert, log=None) -> int:
    """Insert every spooled record with ``insert(record)`` (which must be idempotent per
    ``tool_use_id`` and raise to stop); returns how many records were handed over. A
    file is deleted only once all its lines went in; unreadable lines are logged and
    skipped. Exceptions from ``insert`` propagate after leaving the file for a later
    drain."""
    if not has_work(folder):
        return 0
    done = 0
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
    return done
