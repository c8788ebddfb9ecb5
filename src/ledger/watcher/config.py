"""Watcher and LLM settings: ``$LEDGER_HOME/config.toml`` overridden by environment
variables. Stdlib only (read on every hook call; ``tomllib`` is imported only when the
file exists).

Example ``config.toml``::

    [watcher]
    every = 15                 # distill after this many new tool calls (steps)
    agent = "watcher"          # writer id of distilled findings
    escalate_after = 4         # injection count at which the message escalates
    deny_on_escalation = false # also deny the re-investigating tool call (PreToolUse)
    max_facts = 8              # facts per injection
    max_chars = 1200           # characters per injection
    enabled = true

    [llm]
    backend = "command"        # command | openai | anthropic | none
    command = "claude -p"      # command backend: prompt on stdin, answer on stdout
    url = "http://127.0.0.1:11434/v1"   # openai: base URL; anthropic: https://api.anthropic.com
    model = "llama3.1"
    api_key_env = "OPENAI_API_KEY"      # name of the variable holding the key
    timeout = 120              # seconds
    daily_token_budget = 200000
"""

from __future__ import annotations

import os

from ..paths import home_dir

DEFAULTS = {
    "watcher": {
        "every": 15, "agent": "watcher", "escalate_after": 4, "deny_on_escalation": False,
        "max_facts": 8, "max_chars": 1200, "enabled": True, "max_output_chars": 2000, "max_trajectory_chars": 24000,
    },
    "llm": {
        "backend": "none", "command": "", "url": "", "model": "", "api_key_env": "", "timeout": 120,
        "daily_token_budget": 200_000, "max_tokens": 1500,
    },
}

# Environment overrides: variable -> (section, key, type)
ENV = {
    "LEDGER_DISTILL_EVERY": ("watcher", "every", int),
    "LEDGER_WATCHER_AGENT": ("watcher", "agent", str),
    "LEDGER_ESCALATE_AFTER": ("watcher", "escalate_after", int),
    "LEDGER_DENY_ON_ESCALATION": ("watcher", "deny_on_escalation", "bool"),
    "LEDGER_WATCHER": ("watcher", "enabled", "bool"),
    "LEDGER_LLM_BACKEND": ("llm", "backend", str),
    "LEDGER_LLM_COMMAND": ("llm", "command", str),
    "LEDGER_LLM_URL": ("llm", "url", str),
    "LEDGER_LLM_MODEL": ("llm", "model", str),
    "LEDGER_LLM_API_KEY_ENV": ("llm", "api_key_env", str),
    "LEDGER_LLM_TIMEOUT": ("llm", "timeout", float),
    "LEDGER_LLM_DAILY_TOKENS": ("llm", "daily_token_budget", int),
}


def _bool(v: str) -> bool:
    return v.strip().lower() in ("1", "true", "yes", "on")


def load(path: str | None = None, errors: list[str] | None = None) -> dict:
    """Settings as ``{"watcher": {...}, "llm": {...}}``. A malformed file or a bad
    environment value raises ``ValueError`` naming it; with an ``errors`` list the
    problem is appended there instead and only that file or variable is ignored (the
    hook logs them and carries on)."""

    def problem(msg: str, exc: Exception) -> None:
        if errors is None:
            raise ValueError(msg) from exc
        errors.append(msg)

    cfg = {k: dict(v) for k, v in DEFAULTS.items()}
    p = path or os.path.join(home_dir(), "config.toml")
    if os.path.isfile(p):
        import tomllib

        data: dict = {}
        try:
            with open(p, "rb") as fh:
                data = tomllib.load(fh)
        except (tomllib.TOMLDecodeError, OSError) as exc:
            problem(f"{p}: {exc}", exc)
        for section in cfg:
            values = data.get(section)
            for k, v in (values.items() if isinstance(values, dict) else ()):
                if k in cfg[section]:
                    cfg[section][k] = v
    for var, (section, key, typ) in ENV.items():
        raw = os.environ.get(var)
        if raw is None or raw == "":
            continue
        try:
            cfg[section][key] = _bool(raw) if typ == "bool" else typ(raw)
        except ValueError as exc:
            problem(f"${var}={raw!r}: {exc}", exc)
    return cfg
