"""The harness registry: one module in this package per harness, found by its name.

``claude-code`` is ``adapters/claude_code.py``, ``codex`` ``adapters/codex.py``, ``gemini``
``adapters/gemini.py``, ``opencode`` ``adapters/opencode.py``;
adding a harness (Cursor...) is one new module here plus its tests, and
``ledger hook <name>``, ``ledger install <name>`` and ``ledger uninstall <name>`` pick it
up. Listing reads this folder (no import); :func:`get` imports only the module asked for,
so the hook path stays stdlib-only and small.

An adapter module defines:

- ``HARNESS``: its name (``"claude-code"``) and ``TITLE`` (``"Claude Code"``).
- ``install(scope, project_dir, *, link=False, env=None) -> dict`` (``env``: store
  variables to write into the hook command, where the harness allows) and
  ``uninstall(scope, project_dir) -> dict``: write or remove ledger's hooks in the
  harness's configuration (``scope`` is ``"project"`` or ``"user"``); the dicts have at
  least ``path``, and ``removed`` for uninstall. ``install_lines(result, scope)`` gives
  the lines ``ledger install`` prints.
- For a harness that runs one process per hook event (``ledger hook <name> <event>``):
  ``parse_payload(raw: bytes, expected_event: str | None) -> HookEvent`` (raises
  ``ValueError`` saying what is wrong) and ``render_response(event, response) -> str``
  (what to print; ``""`` for nothing). Optionally ``expand(event) -> list[HookEvent]``
  (several engine events for one hook call) with ``merge(responses) -> HookResponse |
  None`` (one answer from theirs).
- For a harness whose plugin talks to one long-lived child instead:
  ``serve_session(args: list[str]) -> int``, run as ``ledger __serve-session <name>``.
- ``probe(cwd, path) -> (event | None, payload)``: a finished tool call reading ``path``
  in the harness's own shape, which ``ledger doctor`` sends through the command the
  harness's configuration runs (``ledger hook <name> <event>``, or with ``None`` one
  request to ``ledger __serve-session <name>``) to check the install end to end.

Stdlib only (imported on the hook path).
"""

from __future__ import annotations

import os
import sys


class UnknownHarness(ValueError):
    """A harness name no adapter module has; the message lists the known ones."""


def names() -> list[str]:
    """Every harness with an adapter module, sorted (``claude_code.py`` -> ``claude-code``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return sorted(f[:-3].replace("_", "-") for f in os.listdir(here) if f.endswith(".py") and not f.startswith("_"))


def get(harness: str):
    """The adapter module for ``harness``. Raises :class:`UnknownHarness`. Imports the
    one module directly (no folder listing: this runs on every hook call)."""
    module = f"{__name__}.{harness.replace('-', '_')}"
    if not harness or not all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in harness):
        raise UnknownHarness(f"unknown harness {harness!r}; ledger knows {', '.join(names())}")
    try:
        __import__(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise  # the adapter exists but one of its own imports is missing
        raise UnknownHarness(f"unknown harness {harness!r}; ledger knows {', '.join(names())}") from None
    return sys.modules[module]


def with_hook(harness: str):
    """The adapter for ``ledger hook <harness>``: one that parses per-event payloads.
    Raises :class:`UnknownHarness` or ``ValueError`` for a harness that works otherwise."""
    adapter = get(harness)
    if not hasattr(adapter, "parse_payload"):
        how = f"`ledger __serve-session {harness}`" if hasattr(adapter, "serve_session") else "another way"
        raise ValueError(f"{harness} does not run `ledger hook`: its plugin talks to {how} "
                         f"(`ledger install {harness}` sets it up)")
    return adapter
