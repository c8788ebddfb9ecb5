"""A new SQLite store file appears whole or not at all (docs/store.md "A missing store").

The first write to a store file that does not exist builds the store in a temporary
file beside it (``.<name>.new-<pid>-<random>``, in the same folder so it is on the same
file system), closes it (closing the last connection checkpoints the WAL into the file
and deletes the ``-wal`` and ``-shm`` files), and only then gives it the store's name
with ``link(2)``, which fails if the name exists. So:

- a write that fails (bad input, a refused claim, an error halfway, Ctrl-C, SIGTERM or
  SIGHUP) leaves no file and no folder behind: the temporary file, its side files and
  the folders this write made are removed;
- a successful one leaves exactly one store, and a reader never sees it half built;
- two processes creating the same store at once: the first link wins, the second finds
  the name taken, drops its temporary file and writes again into the store that now
  exists (:func:`create` returns ``created`` False), so nothing is lost.

The write itself runs once (an earlier version ran it on an empty store in memory first,
then again for real). A process killed with SIGKILL leaves its temporary file, which
the next first write in that folder removes (its process is gone).
"""

from __future__ import annotations

import errno
import os

from ..errors import LedgerError, StoreUnavailable
from ._sqlite import sqlite3
from .connection import _folder_error_message, _os_reason

#: Between the store's name and the writer's pid in a temporary store file's name.
MARK = ".new-"

#: Characters of the store's name kept in the temporary name (a 255-byte name plus the
#: mark would be too long for the file system).
NAME_KEPT = 120

#: The signals that end a first write cleanly (the temporary file removed) before the
#: process ends by them as it would have. SIGINT already raises KeyboardInterrupt.
_CLEAN_ON = ("SIGTERM", "SIGHUP")

#: SQLite's side files of a store file (WAL mode, and the rollback journal).
SIDE_FILES = ("-wal", "-shm", "-journal")

#: ``link(2)`` errors meaning "this file system has no hard links" (FAT, some network
#: mounts), where :func:`_publish` falls back to a rename.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


class Interrupted(BaseException):
    """SIGTERM or SIGHUP arrived while a new store was being built (``signum``)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def create(path: str, build):
    """Create the SQLite store ``path`` (a file that does not exist) by ``build(temp)``:
    a function that opens the store at ``temp`` (an absolute path beside ``path``),
    writes, closes it and returns its result.

    Returns ``(result, True)`` when ``path`` now holds what ``build`` wrote, or
    ``(None, False)`` when another process created ``path`` meanwhile: nothing of this
    build was kept, and the caller writes again into that store.

    Raises what ``build`` raises, after removing the temporary file, its side files and
    the folders this call made (an error that names the temporary file names ``path``
    instead); :class:`ledger.errors.StoreUnavailable` when the folders cannot be made
    or the file cannot be given its name (reason ``bad-path`` or ``read-only``). SIGTERM or SIGHUP meanwhile (main thread
    only) ends the process by that signal once everything is removed."""
    target = os.path.abspath(path)
    folder, name = os.path.split(target)
    made = _make_folders(folder, path)
    prefix = "." + name[:NAME_KEPT] + MARK
    _sweep(folder, prefix)
    temp = os.path.join(folder, f"{prefix}{os.getpid()}-{os.urandom(4).hex()}")
    previous = _trap_signals()
    try:
        try:
            result = build(temp)
            _settle(temp)
            try:
                created = _publish(temp, target)
            except OSError as exc:
                raise StoreUnavailable(f"Cannot create the store at {path}: {exc.strerror or exc}. Nothing was "
                                       "saved. Check the folder and its permissions.", reason=_os_reason(exc),
                                       detail=str(exc), path=path) from exc
        except BaseException as exc:
            _remove(temp)
            for d in reversed(made):
                try:
                    os.rmdir(d)
                except OSError:
                    break  # not empty: someone else uses it now
            if isinstance(exc, LedgerError):
                _rename_in_message(exc, temp, path)
            raise
    except Interrupted as stop:
        _restore_signals(previous)
        os.kill(os.getpid(), stop.signum)  # ends the process as the signal would have
        raise SystemExit(128 + stop.signum) from None  # a handler of our caller's ran instead
    finally:
        _restore_signals(previous)
    _remove(temp)
    _sync_folder(folder)
    return (result, True) if created else (None, False)


def _make_folders(folder: str, given: str) -> list[str]:
    """Make ``folder`` and its missing parents; return those made, outermost first.
    Raises StoreUnavailable naming the store ``given`` (and the file in the way)."""
    missing = []
    d = folder
    while not os.path.isdir(d):
        missing.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    made: list[str] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if os.path.isdir(d):
                continue  # another first writer made it: theirs to keep
            exc = NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), d)
        except OSError as err:
            exc = err
        else:
            made.append(d)
            continue
        for m in reversed(made):
            try:
                os.rmdir(m)
            except OSError:
                break
        raise StoreUnavailable(_folder_error_message(given, exc), reason=_os_reason(exc), detail=str(exc),
                               path=given) from exc
    return made


def _settle(temp: str) -> None:
    """Make sure the closed temporary store holds all it was given in its one file: a
    ``-wal`` left with frames (a close that could not checkpoint) is checkpointed into
    it; empty side files are removed."""
    wal = temp + "-wal"
    if os.path.exists(wal) and os.path.getsize(wal) > 0:
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            conn.close()
        if busy:
            raise StoreUnavailable(f"Could not finish the new store {temp}: its WAL could not be checkpointed.",
                                   reason="error", path=temp)
    for side in SIDE_FILES:
        try:
            if os.path.getsize(temp + side) == 0:
                os.unlink(temp + side)
        except FileNotFoundError:
            pass


def _publish(temp: str, target: str) -> bool:
    """Give ``temp`` the name ``target`` unless ``target`` exists (then False)."""
    try:
        os.link(temp, target)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
    # No hard links on this file system: rename, which would replace a store another
    # process created since the check; the window is this one call.
    if os.path.lexists(target):
        return False
    os.rename(temp, target)
    return True


def _remove(temp: str) -> None:
    for f in (temp, *(temp + s for s in SIDE_FILES)):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError:
            pass  # best effort: the error being raised is the one worth reporting


def _sweep(folder: str, prefix: str) -> None:
    """Remove the temporary stores of writers to this store whose process is gone
    (killed with SIGKILL mid-build): ``<prefix><pid>-<random>`` and side files."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return
    for n in names:
        pid = n[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(folder, n))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def _sync_folder(folder: str) -> None:
    """fsync the folder, so the new name survives a power cut as the file's content does."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _trap_signals() -> dict:
    """Have SIGTERM and SIGHUP raise :class:`Interrupted` (so the temporary file is
    removed); returns the handlers they had. Nothing outside the main thread (Python
    allows handlers there only)."""
    import signal

    previous = {}

    def stop(signum, frame):
        raise Interrupted(signum)

    for name in _CLEAN_ON:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, stop)
        except (ValueError, OSError):  # not the main thread
            break
    return previous


def _restore_signals(previous: dict) -> None:
    import signal

    while previous:
        sig, handler = previous.popitem()
        try:
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        except (ValueError, OSError):
            pass


def _rename_in_message(exc: LedgerError, temp: str, path: str) -> None:
    """An error about the temporary file is about the store being created: name that."""
    if temp in exc.message:
        exc.message = exc.message.replace(temp, path)
        exc.args = (exc.message, *exc.args[1:])
    if getattr(exc, "path", None) == temp:
        exc.path = path
