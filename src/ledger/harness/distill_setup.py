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
- OpenCode: backend ``opencode``, which distills through OpenCode's own session API from
  the plugin (no second process, OpenCode's configured model unless ``[llm] model`` names
  a ``provider/model``).

A backend the user already chose is never replaced. The lines ledger writes carry the
:data:`MARK` comment, so ``--no-distill`` (and a later install) can take exactly those
back. The daily token budget (``[llm] daily_token_budget``, default 200,000) bounds the
cost and is reported.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

MARK = "# set by `ledger install`; `ledger install <harness> --no-distill` removes it"
CLAUDE_COMMAND = "claude -p --model haiku --settings '{\"disableAllHooks\": true}' --tools \"\" --no-session-persistence"


def config_path() -> Path:
    from ..paths import home_dir

    return Path(home_dir()) / "config.toml"


def _current() -> dict:
    from ..watcher import config as config_mod

    return config_mod.load(errors=[])


_OUR_KEYS = r"^\s*(?:backend|command|model)\s*="


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
    """Turn distillation on for ``harness`` (``claude-code`` or ``opencode``) unless a
    backend is already configured. Returns ``{"enabled": bool, "backend", "command",
    "model", "budget", "reason", "path"}``; ``reason`` says why nothing changed."""
    p = path or config_path()
    cfg = _current()
    budget = int(cfg["llm"].get("daily_token_budget") or 0)
    backend = str(cfg["llm"].get("backend") or "none").lower()
    text = p.read_text(encoding="utf-8") if p.exists() else ""
    ours = MARK in text
    result = {"enabled": False, "backend": backend, "command": cfg["llm"].get("command") or None,
              "model": cfg["llm"].get("model") or None, "budget": budget, "reason": None, "path": str(p)}
    if backend not in ("", "none") and not ours:
        result.update(enabled=True, reason="already configured")
        return result
    if harness == "claude-code":
        if not shutil.which("claude"):
            result.update(enabled=False, backend="none",
                          reason="`claude` is not on PATH; set [llm] in config.toml to distill")
            return result
        keys = {"backend": "command", "command": CLAUDE_COMMAND, "model": "haiku"}
    elif harness == "opencode":
        keys = {"backend": "opencode"}
    else:
        raise ValueError(f"unknown harness {harness!r}")
    body = _strip_ours(text)
    block = MARK + "\n" + "".join(f"{k} = {_toml_str(v)}\n" for k, v in keys.items())
    if re.search(r"(?m)^\s*\[llm\]\s*$", body):
        # Our keys go right under the existing header; a user's own backend/command line
        # there (set to "none" or empty, or we would have stopped above) is replaced.
        body = re.sub(r"(?m)^\s*(?:backend|command)\s*=.*\n?", "", body) if not ours else body
        body = re.sub(r"(?m)^(\s*\[llm\]\s*\n)", lambda m: m.group(1) + block, body, count=1)
    else:
        body = (body.rstrip("\n") + "\n\n" if body.strip() else "") + "[llm]\n" + block
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, p)
    result.update(enabled=True, backend=keys["backend"], command=keys.get("command"), model=keys.get("model"))
    return result


def disable(*, path: Path | None = None) -> dict:
    """Take back what :func:`enable` wrote (a user's own ``[llm]`` lines stay). Returns
    ``{"removed": bool, "path"}``."""
    p = path or config_path()
    if not p.exists():
        return {"removed": False, "path": str(p)}
    text = p.read_text(encoding="utf-8")
    if MARK not in text:
        return {"removed": False, "path": str(p)}
    body = _strip_ours(text)
    body = re.sub(r"(?m)^\[llm\]\s*\n(?=\s*(?:\[|\Z))", "", body).strip("\n")
    p.write_text(body + "\n" if body else "", encoding="utf-8")
    return {"removed": True, "path": str(p)}


def summary(r: dict, harness: str) -> str:
    """One line for the install output."""
    if not r["enabled"]:
        return f"Distillation off: {r['reason']}. Injection and checkpoints work without it."
    budget = f"daily budget {r['budget']:,} tokens" if r["budget"] else "no daily token budget"
    if r["reason"] == "already configured":
        return f"Distillation on: your [llm] backend \"{r['backend']}\" ({budget})."
    via = "`claude -p --model haiku` (hooks disabled for that call)" if r["backend"] == "command" \
        else "OpenCode's own session API"
    return (f"Distillation on: through {via}, {budget}; "
            f"`ledger install {harness} --no-distill` turns it off.")
