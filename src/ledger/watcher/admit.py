"""Which distilled findings may become facts handed back to agents (docs/watcher.md,
"What a finding must be to be handed back").

A finding comes from tool outputs (through an LLM or the fallback distiller), and a fact
with file keys is handed back automatically: before a tool touches the file and after a
compaction, in later sessions too. So a tool output that carries text addressed to the
agent ("ignore previous instructions", "you must ...", a fake system prompt) must not
come back as a known fact, and a finding must say what it is about:

* :func:`instruction_like`: text that reads as instructions to the agent. Such a finding
  is rejected (not stored at all).
* :func:`names_session`: whether the text names a file or a command of the session it
  was distilled from. A finding that does not is stored without file keys: ``ledger
  recall`` still finds it, no hook hands it back by itself.

Conservative on purpose: the patterns are phrases a fact about code has no reason to
use (tested against real distilled facts for false positives). Stdlib only.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

# Kept as source and compiled on first use through re's cache (hook-path import cost).
_INSTRUCTION_PATTERNS = (
    # "ignore previous instructions", "disregard all prior prompts", "forget your rules"
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|my\s+)?"
    r"(?:previous|prior|above|earlier|preceding|system|original|old)\s+(?:instructions?|prompts?|messages?|rules|"
    r"directions|directives|guidelines|context)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all|any|your|everything)\s+(?:instructions?|rules|guidelines|you\s+were\s+told)\b",
    # addressed to the agent as orders
    r"\byou\s+(?:must|shall|are\s+now|will\s+now|should\s+now|have\s+been\s+instructed|are\s+instructed)\b",
    r"\byour\s+(?:new\s+|real\s+|true\s+|actual\s+)?(?:task|instructions?|goal|role|orders)\s+(?:is|are|now)\b",
    r"\bnew\s+instructions?\s*:", r"\bfrom\s+now\s+on\b",
    r"\bdo\s+not\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+the\s+user\b",
    # a system prompt, or chat-template role markers
    r"\b(?:system|developer)\s+(?:prompt|message|instructions?)\b",
    r"(?:^|\n)\s*(?:system|assistant|developer)\s*:", r"<\|?(?:im_start|im_end|system|endoftext)\|?>",
    r"\[/?(?:INST|SYS)\]", r"<</?SYS>>", r"</?system>",
    r"\bas\s+an\s+(?:ai|a\.i\.|language\s+model|llm)\b",
)


def instruction_like(text: str) -> bool:
    """True when ``text`` reads as instructions to an agent rather than a fact about
    code: an order to ignore earlier instructions, "you must ...", "your task is",
    "from now on", a system prompt or chat-template role marker (case-insensitive).
    Never raises."""
    if not isinstance(text, str) or not text:
        return False
    return any(re.search(p, text, re.I) for p in _INSTRUCTION_PATTERNS)


def _program_words(command: str) -> list[str]:
    """The leading words of each simple command of ``command``: ``mix test``, ``git
    push`` (program and first argument, assignments and ``sudo``/``env`` skipped)."""
    out = []
    for part in re.split(r"&&|\|\||[;|\n]", command):
        words = [w for w in part.split() if w]
        while words and (re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[0] in ("sudo", "env", "time", "nice")):
            words = words[1:]
        if not words or words[0] in ("cd", "echo", "printf", "true", "pwd"):
            continue
        out.append(" ".join(words[:2]))
    return out


def names_session(text: str, files: Iterable[str], commands: Iterable[str]) -> bool:
    """True when ``text`` names one of ``files`` (its full path, or its file name as a
    word: ``config.py``, ``lib/app.ex``) or one of ``commands`` (a backquoted command
    whose program one of them runs, or a command's first two words, as ``mix test``).
    Directories count by name too. Never raises."""
    if not isinstance(text, str) or not text:
        return False
    for path in files:
        if not isinstance(path, str) or not path:
            continue
        if path in text:
            return True
        name = os.path.basename(path.rstrip("/"))
        if len(name) >= 2 and re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", text):
            return True
    quoted = [q.split()[0] for q in re.findall(r"`([^`\n]+)`", text) if q.split()]
    for command in commands:
        if not isinstance(command, str):
            continue
        for lead in _program_words(command):
            program = lead.split()[0]
            if program in quoted or os.path.basename(program) in quoted:
                return True
            if " " in lead and lead in text:
                return True
    return False
