"""Linked worktrees of one git repository share facts about the same file.

A fact is keyed to a resolved absolute path (docs/design.md, watcher). ``git worktree add``
checks the same repository out in another folder, so ``/repo/src/app.py`` and
``/repo-wt/src/app.py`` are the same repository-relative file: :func:`aliases` gives,
for a path inside a work tree, that path in every *other* work tree of the repository,
so a fact learned in one checkout is handed back in the others (docs/watcher.md,
"Projects and worktrees"). Paths in different repositories, or in sibling folders of one
repository (``projA/config.yml`` vs ``projB/config.yml``), are never aliases: only the
same repository-relative path is.

Read straight from git's files, no subprocess (this runs on PreToolUse):

- a work tree has a ``.git`` entry: a folder (the main checkout) or a file
  ``gitdir: <path>`` (a linked worktree, whose git dir holds ``commondir``);
- the repository's common dir lists linked worktrees as ``worktrees/<name>/gitdir``,
  each holding the path of that worktree's ``.git`` file.

A repository without linked worktrees costs a few ``stat`` calls per path. Never raises.
Stdlib only.
"""

from __future__ import annotations

import os

_MAX_WORKTREES = 64


def work_tree(path: str) -> str | None:
    """The root of the git work tree holding ``path`` (walking up to a ``.git`` entry),
    or None."""
    probe = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if os.path.lexists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def common_dir(root: str) -> str | None:
    """The repository's common git dir for the work tree at ``root``, or None."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    text = _read(dot)
    if not text or not text.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(root, text[len("gitdir:"):].strip()))
    common = _read(os.path.join(gitdir, "commondir"))
    return os.path.normpath(os.path.join(gitdir, common)) if common else gitdir


def _is_fs_root(path: str) -> bool:
    return os.path.dirname(path) == path


def _linked_root(common: str, name: str) -> str | None:
    """The work tree of the linked worktree ``name`` of the repository whose common dir
    is ``common``, when git's files agree both ways, else None.

    ``worktrees/<name>/gitdir`` names the worktree's ``.git`` file, and that file must
    say ``gitdir: <common>/worktrees/<name>`` back. A corrupt or hand-edited ``gitdir``
    (one pointing at ``/etc`` made ``/`` a worktree, and every fact in the store the
    project's) is ignored: a root we cannot trust narrows what is handed back, never
    widens it (docs/watcher.md, "Projects and worktrees")."""
    admin = os.path.join(common, "worktrees", name)
    target = _read(os.path.join(admin, "gitdir"))
    if not target:
        return None
    dot = os.path.normpath(os.path.join(admin, target))
    if os.path.basename(dot) != ".git" or not os.path.isfile(dot):
        return None
    back = _read(dot)
    if not back or not back.startswith("gitdir:"):
        return None
    root = os.path.dirname(dot)
    pointed = os.path.normpath(os.path.join(root, back[len("gitdir:"):].strip()))
    if os.path.realpath(pointed) != os.path.realpath(admin):
        return None
    return root


def roots(common: str) -> list[str]:
    """Every work tree root of the repository whose common dir is ``common``: the main
    checkout (when not bare) first, then linked worktrees that still exist and whose
    ``.git`` file points back at their entry in ``common`` (:func:`_linked_root`).
    Never a filesystem root."""
    out: list[str] = []
    if os.path.basename(common) == ".git":
        out.append(os.path.dirname(common))
    wt = os.path.join(common, "worktrees")
    try:
        names = sorted(os.listdir(wt))[:_MAX_WORKTREES]
    except OSError:
        names = []
    for name in names:
        root = _linked_root(common, name)
        if root and os.path.isdir(root):
            out.append(root)
    return [r for r in (os.path.realpath(r) for r in out) if not _is_fs_root(r)]


def aliases(path: str) -> list[str]:
    """``path`` (absolute, resolved) as it lies in every other work tree of its
    repository; ``[]`` outside git or when the repository has one work tree."""
    try:
        root = work_tree(path)
        if root is None:
            return []
        common = common_dir(root)
        if common is None:
            return []
        if os.path.isdir(os.path.join(root, ".git")) and not os.path.isdir(os.path.join(common, "worktrees")):
            return []  # a main checkout with no linked worktrees: the common case, cheap
        real_root = os.path.realpath(root)
        rel = os.path.relpath(path, real_root)
        if rel.startswith(".."):
            return []
        return [os.path.normpath(os.path.join(r, rel)) for r in roots(common) if r != real_root]
    except (OSError, ValueError):
        return []
