"""File keys: the files a memory is about, with the file's state when it was learned.

A file key is a resolved absolute path plus the file's size (bytes), mtime (epoch ms)
and sha256 at the time (see docs/design.md, "file key"). Relevance is an exact path
match; a file whose state changed since marks the memory as possibly stale.

Stdlib only (L0; :func:`is_changed` runs on the hook path). ``hashlib`` and the
:class:`ledger.models.FileKey` value class are imported only when needed, because the
hook path must not pay for ``dataclasses``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from .models import FileKey

#: Above this size a changed mtime alone marks a file changed (hashing would take too
#: long on a hook's critical path).
HASH_LIMIT_BYTES = 64 * 1024 * 1024


def sha256_of(path: str) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MiB blocks. Raises ``OSError``."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_key(path: str | os.PathLike, cwd: str | os.PathLike | None = None) -> FileKey:
    """A :class:`ledger.models.FileKey` for ``path`` resolved against ``cwd``: absolute
    real path with the file's size (bytes), mtime (epoch ms) and sha256 now. A missing
    file gets a key with no state, so a fact can be keyed to a file that does not exist
    yet, and so does a path no file can have (a name too long for the file system, a
    symlink loop). Raises :class:`ledger.errors.InvalidInput` for a path with a NUL
    byte, which no file system takes."""
    from .models import FileKey

    if "\x00" in os.fspath(path):
        from .errors import InvalidInput

        raise InvalidInput(f"A file path cannot contain a NUL byte: {os.fspath(path)!r:.200}. Remove it and try again.",
                           field="files", value=os.fspath(path))
    p = os.path.realpath(os.path.join(os.fspath(cwd or os.getcwd()), os.path.expanduser(os.fspath(path))))
    try:
        st = os.stat(p)
        return FileKey(p, st.st_size, st.st_mtime_ns // 1_000_000, sha256_of(p))
    except OSError:  # missing, a folder, unreadable, a name too long: no state to record
        return FileKey(p)


def named_file_key(path: str | os.PathLike, cwd: str | os.PathLike | None = None) -> FileKey:
    """:func:`file_key` for a path a person or agent gave (``remember --file``, MCP
    ``files``). Raises :class:`ledger.errors.InvalidInput` when it names a folder: a fact
    is keyed to one file (its size, mtime and hash tell when it went stale), and a
    folder's key would never count as changed, nor be matched by a tool touching a file
    in it."""
    key = file_key(path, cwd)
    if os.path.isdir(key.path):
        from .errors import InvalidInput

        given = os.fspath(path)
        raise InvalidInput(f"{given} is a folder{'' if given == key.path else f' ({key.path})'}; a fact is keyed to a file. "
                           "Name a file in it instead, or leave the file out.", field="files", value=given)
    return key


def is_changed(path: str, size: int | None, mtime_ms: int | None, sha256: str | None) -> bool:
    """True when the file at ``path`` changed since a key with this state was taken:
    gone, another size, or (same mtime means unchanged) another content hash; for files
    over :data:`HASH_LIMIT_BYTES` a changed mtime alone counts. A key recorded without
    state (no size, no hash) never counts as changed."""
    if size is None and sha256 is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return True  # the file is gone
    if size is not None and st.st_size != size:
        return True
    if mtime_ms is not None and st.st_mtime_ns // 1_000_000 == mtime_ms:
        return False
    if not sha256 or st.st_size > HASH_LIMIT_BYTES:
        return True
    try:
        return sha256_of(path) != sha256
    except OSError:
        return True


def file_changes(files) -> list[dict]:
    """For each file key in ``files`` (objects with ``path``, ``size``, ``mtime_ms``,
    ``sha256``) whose file changed since it was learned: ``{"path", "state"}`` with
    state ``"changed"`` or ``"gone"``. Unchanged files and keys without state are left
    out, so ``[]`` means nothing a memory is about has moved."""
    out = []
    for f in files:
        if is_changed(f.path, f.size, f.mtime_ms, f.sha256):
            out.append({"path": f.path, "state": "changed" if os.path.exists(f.path) else "gone"})
    return out


def change_note(changes: list[dict]) -> str:
    """``"may be stale: app.cfg changed, old.py is gone since this was learned"`` for
    :func:`file_changes` output; ``""`` when empty."""
    if not changes:
        return ""
    parts = [f"{os.path.basename(c['path'])} {'changed' if c['state'] == 'changed' else 'is gone'}" for c in changes]
    return "may be stale: " + ", ".join(parts) + " since this was learned"
