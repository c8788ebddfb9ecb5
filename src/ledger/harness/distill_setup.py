"""Turn distillation on when a harness is installed (``ledger install <harness>``).

Out of the box the LLM backend is ``none``: a user who installs the hooks would get
observations and never a fact. So ``ledger install`` turns distillation on through the
harness's own client, when it can, by writing the ``[llm]`` section of
``$LEDGER_HOME/config.toml``:

- Claude Code: when ``claude`` is on ``PATH``, backend ``command`` running
  ``claude -p`` with a cheap model (``haiku``), every hook disabled for that call
  (``--settings '{"disableAllHooks": true}'``, so the distiller never observes itself;
  ledger also sets ``LEDGER_HOOKS_DISABLED=1`` for it), no tools and no saved session
  (docs/harness-contracts.md §A9).
- Codex: when ``codex`` is on ``PATH``, backend ``codex``: ``codex exec`` with every hook
  off for that call (``--disable hooks``), nothing saved and a read-only sandbox, with
  Codex's configured model (:func:`ledger.watcher.llm.codex_argv`).
- Gemini CLI: when ``gemini`` is on ``PATH``, backend ``gemini``: ``gemini -p`` with no
  extension loaded (``-e none``: ledger's hooks stay out of it), Gemini's own login and
  default model unless ``[llm] model`` names one.
- OpenCode: when ``opencode`` is on ``PATH``, backend ``opencode``, which distills
  through OpenCode's own session API from the plugin (no second process, OpenCode's
  configured model unless ``[llm] model`` names a ``provider/model``).

A backend the user already chose is never replaced, and neither is the one another
harness's install set (the ``[llm]`` section applies to every harness: installing
OpenCode must not move Claude Code's distillation to OpenCode). The lines ledger writes
carry the :data:`MARK` comment, so ``--no-distill`` can take them back, and
``ledger uninstall <harness>`` removes them when that harness's install wrote them and
they are still as written (:func:`disable` with ``harness``). The daily token budget (``[llm] daily_token_budget``, default 200,000) bounds the
cost and is reported.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from . import filetx

MARK = "# set by `ledger install`; `ledger install <harness> --no-distill` removes it"
CLAUDE_COMMAND = "claude -p --model haiku --settings '{\"disableAllHooks\": true}' --tools \"\" --no-session-persistence"


def config_path() -> Path:
    from ..paths import home_dir

    return Path(home_dir()) / "config.toml"


def _current() -> dict:
    from ..watcher import config as config_mod

    return config_mod.load(errors=[])


_OUR_KEYS = r"^\s*(?:backend|command|model)\s*="


def _harness_keys(harness: str) -> dict:
    """The ``[llm]`` lines ``ledger install <harness>`` writes. Raises ``ValueError``."""
    if harness == "claude-code":
        return {"backend": "command", "command": CLAUDE_COMMAND, "model": "haiku"}
    if harness == "opencode":
        return {"backend": "opencode"}
    if harness == "codex":
        return {"backend": "codex"}
    if harness == "gemini":
        return {"backend": "gemini"}
    raise ValueError(f"unknown harness {harness!r}")


def _our_block(text: str) -> dict | None:
    """The ``key -> value`` lines under :data:`MARK` as they are now (None without a
    MARK); a value the user edited shows here, so it no longer matches ours."""
    import tomllib

    lines, inside = [], False
    for line in text.splitlines():
        if line.strip() == MARK:
            inside, lines = True, []
            continue
        if inside:
            if re.match(_OUR_KEYS, line):
                lines.append(line)
            else:
                break
    if not inside:
        return None
    try:
        return tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        return {}


def _require_toml(p: Path) -> None:
    """Raise InvalidInput when ``p`` exists but is not TOML ledger can read: adding lines
    to it would leave distillation off while saying it is on (ledger reads none of a
    broken file's settings)."""
    import tomllib

    from ..errors import InvalidInput

    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as exc:
        _unusable(p, exc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{p} (ledger's settings) is not valid TOML ({exc}); nothing was changed. Fix it (`ledger "
                           "config` shows the settings), or install with --no-distill, then run this again.",
                           field="path", value=str(p)) from None


def _owner(block: dict | None) -> str | None:
    """The harness whose install wrote ``block`` unchanged, else None."""
    for h in ("claude-code", "opencode", "codex", "gemini"):
        if block == _harness_keys(h):
            return h
    return None


def _strip_ours(text: str) -> str:
    """``text`` without the lines ledger wrote: the MARK line and the ``backend``,
    ``command`` and ``model`` lines right after it."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == MARK:
            skipping = True
            continue
        if skipping and not re.match(_OUR_KEYS, line):
            skipping = False
        if not skipping:
            out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "".join(out))


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def enable(harness: str, *, path: Path | None = None) -> dict:
    """Turn distillation on for ``harness`` (``claude-code``, ``opencode`` or ``codex``) unless a
    backend is already configured. Returns ``{"enabled": bool, "backend", "command",
    "model", "budget", "reason", "path"}``; ``reason`` says why nothing changed."""
    p = path or config_path()
    _require_toml(p)
    cfg = _current()
    budget = int(cfg["llm"].get("daily_token_budget") or 0)
    backend = str(cfg["llm"].get("backend") or "none").lower()
    text = p.read_text(encoding="utf-8") if p.exists() else ""
    ours = MARK in text
    result = {"enabled": False, "backend": backend, "command": cfg["llm"].get("command") or None,
              "model": cfg["llm"].get("model") or None, "budget": budget, "reason": None, "path": str(p)}
    keys = _harness_keys(harness)
    if backend not in ("", "none") and not ours:
        result.update(enabled=True, reason="already configured")
        return result
    owner = _owner(_our_block(text)) if ours else None
    if ours and owner != harness:
        # Another harness's install (or the user, editing our lines) chose the backend:
        # it distills for every harness already, so it stays.
        result.update(enabled=True, reason=f"set by `ledger install {owner}`" if owner else "already configured")
        return result
    client = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}.get(harness, "opencode")
    if not shutil.which(client):
        result.update(enabled=False, backend=backend if ours else "none",
                      reason=f"`{client}` is not on PATH; set [llm] in config.toml to distill")
        return result
    body = _strip_ours(text)
    block = MARK + "\n" + "".join(f"{k} = {_toml_str(v)}\n" for k, v in keys.items())
    if re.search(r"(?m)^\s*\[llm\]\s*$", body):
        # Our keys go right under the existing header; a user's own backend/command line
        # there (set to "none" or empty, or we would have stopped above) is replaced.
        body = re.sub(r"(?m)^\s*(?:backend|command)\s*=.*\n?", "", body) if not ours else body
        body = re.sub(r"(?m)^(\s*\[llm\]\s*\n)", lambda m: m.group(1) + block, body, count=1)
    else:
        body = (body.rstrip("\n") + "\n\n" if body.strip() else "") + "[llm]\n" + block
    try:
        filetx.write_text(p, body)
    except OSError as exc:
        _unusable(p, exc)
    result.update(enabled=True, backend=keys["backend"], command=keys.get("command"), model=keys.get("model"))
    return result


def disable(harness: str | None = None, *, path: Path | None = None) -> dict:
    """Take back what :func:`enable` wrote (a user's own ``[llm]`` lines stay). With
    ``harness`` (``ledger uninstall``), only when that harness's install wrote the lines
    and they are unchanged since. Returns ``{"removed": bool, "backend", "path"}``
    (``backend``: the one removed, or None). Raises InvalidInput naming the file when it
    cannot be read or written (a folder in its place, no permission)."""
    p = path or config_path()
    if not p.exists():
        return {"removed": False, "backend": None, "path": str(p)}
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _unusable(p, exc)
    if MARK not in text:
        return {"removed": False, "backend": None, "path": str(p)}
    block = _our_block(text) or {}
    if harness is not None and _owner(block) != harness:
        return {"removed": False, "backend": None, "path": str(p)}
    body = _strip_ours(text)
    body = re.sub(r"(?m)^\[llm\]\s*\n(?=\s*(?:\[|\Z))", "", body).strip("\n")
    try:
        filetx.save(p)
        p.write_text(body + "\n" if body else "", encoding="utf-8")
    except OSError as exc:
        _unusable(p, exc)
    return {"removed": True, "backend": block.get("backend"), "path": str(p)}


def _unusable(p: Path, exc: BaseException):
    """Raise InvalidInput for ledger's settings file ``p`` that cannot be read or written."""
    from ..errors import InvalidInput

    why = getattr(exc, "strerror", None) or exc
    raise InvalidInput(f"Cannot use {p} (ledger's settings): {why}; nothing was changed. Fix or move it, then run "
                       "this again.", field="path", value=str(p)) from None


def summary(r: dict, harness: str) -> str:
    """One line for the install output."""
    if not r["enabled"]:
        return f"Distillation off: {r['reason']}. Injection and checkpoints work without it."
    budget = f"daily budget {r['budget']:,} tokens" if r["budget"] else "no daily token budget"
    if r["reason"] and r["reason"].startswith("set by"):
        return f"Distillation on: backend \"{r['backend']}\" {r['reason']} ({budget}), for every harness."
    if r["reason"] == "already configured":
        return f"Distillation on: your [llm] backend \"{r['backend']}\" ({budget})."
    via = {"command": "`claude -p --model haiku` (hooks disabled for that call)",
           "codex": "`codex exec` (hooks disabled for that call)",
           "gemini": "`gemini -p` (no extensions loaded for that call)"}.get(r["backend"], "OpenCode's own session API")
    return (f"Distillation on: through {via}, {budget}; "
            f"`ledger install {harness} --no-distill` turns it off.")
