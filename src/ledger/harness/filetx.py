"""All or nothing for ``ledger install`` and ``ledger uninstall``.

One install touches several files: a harness's hooks file, its MCP client entry, a git
exclude line, Codex's compaction prompt, ledger's own ``config.toml`` (distillation),
Gemini CLI's extension folder. When one of them cannot be read or written (a hooks file
that is not JSON, a ``config.toml`` that is not TOML, a read-only folder), stopping there
left the others half changed, while the error said "nothing was changed" (issue: ``ledger
uninstall codex`` with a broken ``~/.codex/hooks.json`` removed the MCP entry and kept
the hooks).

Every place in ``ledger.harness`` that changes a file or folder first calls :func:`save`
with its path. Inside :func:`all_or_nothing`, that keeps the path's state before the
first change (a file's bytes and mode, a symlink's target, a folder's whole tree, or
that nothing was there, with the folders a write would create); when the block raises,
every saved path is put back as it was, newest first, and the folders the block created
are removed again when empty. Outside a block :func:`save` does nothing. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterator

_active: list["Journal"] = []


class Journal:
    """The saved state of every path changed inside one :func:`all_or_nothing` block."""

    def __init__(self) -> None:
        self._saved: dict[str, tuple] = {}
        self._copies: str | None = None  # a private folder holding copies of saved folders

    def save(self, path: str | os.PathLike) -> None:
        """Keep ``path``'s state unless it is already kept (the first state is the one
        to go back to). Raises OSError when a file or folder there cannot be read."""
        p = os.path.abspath(os.fspath(path))
        if p in self._saved:
            return
        if os.path.islink(p):
            self._saved[p] = ("link", os.readlink(p))
        elif os.path.isdir(p):
            if self._copies is None:
                import tempfile

                self._copies = tempfile.mkdtemp(prefix="ledger-install-undo-")
            copy = os.path.join(self._copies, str(len(self._saved)))
            shutil.copytree(p, copy, symlinks=True)
            self._saved[p] = ("dir", copy)
        elif os.path.exists(p):
            with open(p, "rb") as fh:
                self._saved[p] = ("file", fh.read(), stat.S_IMODE(os.stat(p).st_mode))
        else:
            top = p  # the outermost folder a write to p would have to create
            while not os.path.exists(os.path.dirname(top)) and os.path.dirname(top) != top:
                top = os.path.dirname(top)
            self._saved[p] = ("missing", top)

    def save_folder(self, path: str | os.PathLike) -> None:
        """Keep only that a folder is at ``path`` (not what is in it): for removing it
        when empty, so a user's large folder (``~/.codex``, ``~/.claude``) is never
        copied. Undo makes the folder again if it is gone."""
        p = os.path.abspath(os.fspath(path))
        if p not in self._saved and os.path.isdir(p) and not os.path.islink(p):
            self._saved[p] = ("folder",)

    def undo(self) -> list[str]:
        """Put every saved path back, newest first; returns the paths that could not
        be restored (each is tried; one failure does not stop the others)."""
        failed = []
        for p, state in reversed(list(self._saved.items())):
            try:
                kind = state[0]
                if kind == "folder":
                    os.makedirs(p, exist_ok=True)
                    continue
                _remove(p)
                if kind == "link":
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    os.symlink(state[1], p)
                elif kind == "dir":
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    shutil.copytree(state[1], p, symlinks=True)
                elif kind == "file":
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p, "wb") as fh:
                        fh.write(state[1])
                    os.chmod(p, state[2])
                else:  # nothing was there: remove the folders made for it, while empty
                    d, top = os.path.dirname(p), state[1]
                    while len(d) >= len(top) and d != os.path.dirname(d):
                        try:
                            os.rmdir(d)
                        except OSError:
                            break
                        if d == top:
                            break
                        d = os.path.dirname(d)
            except OSError:
                failed.append(p)
        return failed

    def discard(self) -> None:
        """Forget the saved states (their copies included)."""
        if self._copies is not None:
            shutil.rmtree(self._copies, ignore_errors=True)
            self._copies = None
        self._saved.clear()


def _remove(p: str) -> None:
    if os.path.islink(p) or os.path.isfile(p):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)


def save(path: str | os.PathLike) -> None:
    """Call before changing ``path`` (writing, replacing, deleting a file or a folder
    with what is in it): inside :func:`all_or_nothing` its state is kept for undoing;
    elsewhere nothing."""
    for journal in _active:
        journal.save(path)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Replace the file at ``path`` with ``text`` (UTF-8) through a temporary file beside
    it renamed over it, so a reader never sees half a file. Saves ``path`` first (see
    :func:`save`), creates missing folders and keeps an existing file's mode (a private
    ``~/.claude.json`` stays private). Raises OSError, with the temporary file removed,
    when the folder or the file cannot be written."""
    path = os.fspath(path)
    save(path)
    folder, name = os.path.split(path)
    os.makedirs(folder or ".", exist_ok=True)
    tmp = os.path.join(folder, f".{name}.ledger-tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except OSError:
        if os.path.isfile(tmp):
            os.unlink(tmp)  # never leave our temporary file in the user's folder
        raise


def save_folder(path: str | os.PathLike) -> None:
    """Call before removing the folder ``path`` if it is empty (:meth:`Journal.save_folder`)."""
    for journal in _active:
        journal.save_folder(path)


@contextlib.contextmanager
def all_or_nothing() -> "Iterator[Journal]":
    """Run the block so that either all its file changes stay or none do: on any
    exception every path passed to :func:`save` inside it is restored, then the
    exception goes on (its message may say "nothing was changed": now it is true).
    Nested blocks join the outermost one."""
    if _active:
        yield _active[0]
        return
    journal = Journal()
    _active.append(journal)
    try:
        yield journal
    except BaseException:
        journal.undo()
        raise
    finally:
        _active.remove(journal)
        journal.discard()
