"""What injection is worth on a replayed transcript: repeated reads met with a fact.

``ledger replay`` feeds every tool call through :class:`RepeatReadMeter`. Definitions
(docs/benchmarks.md, "Injection on repeated reads"):

- a **read** is a Read, Grep, Glob or Bash call touching a file (the watcher's file
  keys for the call); a **repeated read** is a read of a file already read earlier in
  the transcript, counted once per (call, file);
- it is **met** when the PreToolUse answer of that call showed at least one fact keyed
  to that file;
- a fact shown is **true at that moment** when the file's content is the one it had when
  the fact was learned, or when the fact was shown marked "may be stale". The transcript
  replays on a machine without the project, so file contents are followed through the
  transcript itself: a full Read gives the content, a Write its content, an Edit or
  MultiEdit applied to the known content (``originalFile`` when the result carries it)
  the new one; an edit to a file of unknown content makes a new, unknown version. Shell
  commands that rewrite files (formatters, ``git checkout``) are not followed, so
  "true" can be overstated after them;
- **characters per repeated read**: characters injected on repeated reads divided by
  the number of repeated reads.
"""

from __future__ import annotations

import hashlib
import itertools
import re

READ_TOOLS = ("Read", "Grep", "Glob", "Bash")
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
_FACT_LINE = re.compile(r"^  - \[([A-Za-z0-9_]+) · \d+\] (.*)$", re.M)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


class RepeatReadMeter:
    """Accumulates the figures for one transcript; see the module docstring."""

    def __init__(self) -> None:
        self.reads: dict[str, int] = {}
        self.version: dict[str, str] = {}
        self.content: dict[str, str] = {}
        self.fact_files: dict[str, dict[str, str | None]] = {}  # id -> {path: version when learned}
        self._unknown = itertools.count(1)
        self.repeated = 0
        self.met = 0
        self.shown = 0
        self.true = 0
        self.current = 0
        self.marked = 0
        self.chars = 0

    # -------------------------------------------------------------- feeding
    def learned(self, memory_id: str, paths: list[str]) -> None:
        """A fact was added keyed to ``paths``: remember their versions now."""
        self.fact_files[memory_id] = {p: self.version.get(p) for p in paths}

    def before(self, name: str, paths: list[str], context: str) -> None:
        """A tool call is about to run; ``context`` is what its PreToolUse injected."""
        if name not in READ_TOOLS:
            return
        shown = {m.group(1): "may be stale" in m.group(2) for m in _FACT_LINE.finditer(context or "")}
        repeated_paths = [p for p in paths if self.reads.get(p)]
        for p in paths:
            self.reads[p] = self.reads.get(p, 0) + 1
        if not repeated_paths:
            return
        self.repeated += len(repeated_paths)
        if context:
            self.chars += len(context)
        for p in repeated_paths:
            about = [i for i in shown if p in self.fact_files.get(i, {})]
            if not about:
                continue
            self.met += 1
            for i in about:
                self.shown += 1
                unchanged = self.fact_files[i][p] == self.version.get(p)
                self.current += unchanged
                self.marked += shown[i]
                if shown[i] or unchanged:
                    self.true += 1

    def after(self, name: str, tool_input: dict, paths: list[str], result: object) -> None:
        """The call ran: follow file contents through reads and edits."""
        if not paths:
            return
        p = paths[0]
        if name == "Read" and isinstance(result, dict) and isinstance(result.get("file"), dict):
            f = result["file"]
            content = f.get("content")
            start, num, total = f.get("startLine"), f.get("numLines"), f.get("totalLines")
            if isinstance(content, str) and start in (None, 1) and (not isinstance(total, int) or num == total):
                self.content[p] = content
                self.version[p] = _sha(content)
            elif p not in self.version:
                self.version[p] = f"unseen#{next(self._unknown)}"
        elif name == "Write" and isinstance(tool_input.get("content"), str):
            self.content[p] = tool_input["content"]
            self.version[p] = _sha(tool_input["content"])
        elif name in EDIT_TOOLS:
            base = result.get("originalFile") if isinstance(result, dict) else None
            base = base if isinstance(base, str) else self.content.get(p)
            edits = tool_input.get("edits") if name == "MultiEdit" else [tool_input]
            new = _apply(base, edits if isinstance(edits, list) else [])
            if new is None:
                self.content.pop(p, None)
                self.version[p] = f"edited#{next(self._unknown)}"
            else:
                self.content[p] = new
                self.version[p] = _sha(new)

    # -------------------------------------------------------------- result
    def report(self) -> dict:
        """``{"repeatedReads", "metWithFact", "metShare", "factsShown", "factsTrue",
        "trueShare", "factsUnchanged", "factsMarkedStale", "charsPerRepeatedRead"}``;
        shares are 0-1 (None when undefined)."""
        return {
            "repeatedReads": self.repeated,
            "metWithFact": self.met,
            "metShare": round(self.met / self.repeated, 3) if self.repeated else None,
            "factsShown": self.shown,
            "factsTrue": self.true,
            "trueShare": round(self.true / self.shown, 3) if self.shown else None,
            "factsUnchanged": self.current,
            "factsMarkedStale": self.marked,
            "charsPerRepeatedRead": round(self.chars / self.repeated, 1) if self.repeated else None,
        }


def _apply(base: str | None, edits: list) -> str | None:
    if base is None:
        return None
    text = base
    for e in edits:
        if not isinstance(e, dict):
            return None
        old, new = e.get("old_string"), e.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or old not in text:
            return None
        text = text.replace(old, new) if e.get("replace_all") else text.replace(old, new, 1)
    return text
