"""The deterministic distiller: facts read straight off observations, no LLM.

Used by ``ledger replay`` (and by ``[llm] backend = "fallback"``) so a session yields
facts an agent would want handed back without any model (docs/watcher.md,
"Distillers"):

- **outline** of a file the agent read in full: its top-level definitions with line
  numbers, its size in lines and bytes, and the first 12 hex digits of its sha256, so
  the agent can check the fact against the file without reading it again;
- **last outcome of a command** that failed, or of a test/build/lint command: exit
  status, the test summary (``13 tests, 1 failure``), the failing tests with their
  file:line, or the first error line;
- **commands that worked**: a test, build or lint command that passed, with its summary.

Within one batch only the last outcome of each command is kept. Facts are at most
:data:`MAX_FACT` characters. Stdlib only; pure except for the optional ``read_file``
callback.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

MAX_FACT = 400
MAX_DEFS = 14
MAX_FINDINGS = 12

# --------------------------------------------------------------------------- outlines

# Per extension: patterns whose group "name" names a top-level definition and group
# "kind" (optional) its keyword. Anchored at line start; top-level means no (or, for
# languages that nest everything in a module/class, shallow) indentation.
_DEF_PATTERNS: dict[tuple[str, ...], list[str]] = {
    ("py", "pyi"): [r"^(?P<kind>class|def|async def)\s+(?P<name>\w+)"],
    ("ex", "exs"): [r"^\s{0,4}(?P<kind>defmodule|defprotocol|defimpl|defmacrop?|defp?|defdelegate|defstruct|defexception)"
                    r"\b\s*(?P<name>[\w.?!]*)"],
    ("js", "mjs", "cjs", "jsx", "ts", "tsx"): [
        r"^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(?P<kind>function\*?|class|interface|type|enum|const|let)"
        r"\s+(?P<name>[\w$]+)"],
    ("go",): [r"^(?P<kind>func)\s+(?:\([^)]*\)\s*)?(?P<name>\w+)", r"^(?P<kind>type)\s+(?P<name>\w+)"],
    ("rs",): [r"^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?P<kind>fn|struct|enum|trait|impl|mod|type|const|static)\s+"
              r"(?P<name>[\w<>:, ]+?)(?:\s*[({<;=:]|\s+for\b|\s*$)"],
    ("rb",): [r"^\s{0,2}(?P<kind>class|module|def)\s+(?P<name>[\w:.?!]+)"],
    ("java", "kt", "kts", "scala", "cs", "swift"): [
        r"^\s{0,4}(?:(?:public|private|protected|internal|open|abstract|final|static|data|sealed)\s+)*"
        r"(?P<kind>class|interface|enum|record|object|struct|protocol|fun|func)\s+(?P<name>\w+)"],
    ("sh", "bash", "zsh"): [r"^(?:function\s+)?(?P<name>[A-Za-z_][\w-]*)\s*\(\)\s*\{?"],
    ("md", "mdx", "rst"): [r"^(?P<kind>#{1,3})\s+(?P<name>.+?)\s*#*$"],
    ("yml", "yaml"): [r"^(?P<name>[A-Za-z_][\w.-]*):(?:\s|$)"],
    ("toml", "ini", "cfg", "conf"): [r"^\[(?P<name>[^\]\n]+)\]"],
    ("sql",): [r"(?i)^\s*create\s+(?:or\s+replace\s+)?(?:unique\s+)?(?P<kind>table|view|index|function|trigger)"
               r"\s+(?:if\s+not\s+exists\s+)?(?P<name>[\w.\"]+)"],
    ("mk", "makefile"): [r"^(?P<name>[A-Za-z0-9_.-]+):(?!=)"],
}
_BY_EXT = {ext: pats for exts, pats in _DEF_PATTERNS.items() for ext in exts}


def _ext(path: str) -> str:
    name = os.path.basename(path).lower()
    if name in ("makefile", "gnumakefile"):
        return "makefile"
    return name.rsplit(".", 1)[-1] if "." in name else ""


def definitions(path: str, text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """``[(line number, "kind name"), ...]`` of the top-level definitions in ``text``
    (the content of ``path`` starting at line ``first_line``), in order. Repeated
    clauses of one function (Elixir, Erlang style) are listed once. JSON files list
    their top-level keys (line 1)."""
    ext = _ext(path)
    if ext == "json":
        try:
            data = json.loads(text)
        except ValueError:
            return []
        return [(first_line, f"key {k}") for k in list(data)[:50]] if isinstance(data, dict) else []
    pats = [re.compile(p) for p in _BY_EXT.get(ext, ())]
    if not pats:
        return []
    out: list[tuple[int, str]] = []
    last = None
    in_fence = False
    for i, line in enumerate(text.splitlines()):
        if ext in ("md", "mdx") and line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for p in pats:
            m = p.match(line)
            if not m:
                continue
            name = (m.group("name") or "").strip()
            kind = (m.groupdict().get("kind") or "").strip()
            label = f"{kind} {name}".strip() if kind and not kind.startswith("#") else name
            if label and label != last:
                out.append((first_line + i, label[:60]))
                last = label
            break
    return out


def outline_fact(path: str, text: str, rel: str, *, complete: bool = True, first_line: int = 1) -> str | None:
    """``"lib/x.ex (212 lines, 7,340 bytes, sha256 1a2b3c4d5e6f): defmodule X (1), def run (12), …"``;
    None when no definition is recognised. ``complete`` False (a partial read) leaves
    size and hash out and says which lines were seen."""
    defs = definitions(path, text, first_line)
    if not defs:
        return None
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if complete:
        data = text.encode("utf-8", "replace")
        head = f"{rel} ({lines} lines, {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()[:12]})"
    else:
        head = f"{rel} lines {first_line}-{first_line + max(lines - 1, 0)}"
    parts: list[str] = []
    room = MAX_FACT - len(head) - len(" top-level: ") - 16
    for n, (line, label) in enumerate(defs):
        item = f"{label} ({line})"
        if sum(len(x) + 2 for x in parts) + len(item) > room:
            parts.append(f"+{len(defs) - n} more")
            break
        parts.append(item)
    return f"{head} top-level: " + ", ".join(parts)


# --------------------------------------------------------------------------- commands

# Test, build and lint commands worth remembering when they work (first word[s]).
_RUNNER = re.compile(
    r"^(?:(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(?:"
    r"mix\s+(?:test|compile|credo|format|dialyzer|ecto\.migrate|deps\.get)"
    r"|(?:python3?\s+-m\s+)?(?:pytest|tox|nox|mypy|ruff|black|flake8|pyright|unittest)"
    r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|build|lint|typecheck|check)\b"
    r"|npx\s+(?:tsc|jest|vitest|eslint|playwright)|tsc\b|jest\b|vitest\b|eslint\b"
    r"|cargo\s+(?:test|build|check|clippy|fmt)|go\s+(?:test|build|vet)|make\b|cmake\b|ninja\b"
    r"|gradle\w*\s|\./gradlew\s|mvn\s|dotnet\s+(?:test|build)|bundle\s+exec\s+r(?:spec|ake)|rspec\b|rake\b"
    r"|bash\s+-n\b|shellcheck\b|\./scripts/(?:test|build|lint)\w*"
    r")"
)
_EXIT = re.compile(r"(?:^|\n)(?:Error: )?Exit code (\d+)")
_SUMMARIES = [
    re.compile(r"^(?:\d+ doctests?, )?\d+ (?:tests?|propert(?:y|ies))(?:, \d+ (?:failures?|excluded|skipped|invalid))*.*$", re.M),
    re.compile(r"^(?:=+ )?(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)(?:, )?)+ in [\d.]+s.*$",
               re.M),
    re.compile(r"^Tests?:\s+.*\d+ (?:passed|failed).*$", re.M),
    re.compile(r"^test result: .*$", re.M),
    re.compile(r"^(?:ok|FAIL)\s+\S+\s+[\d.]+s$", re.M),
    re.compile(r"^Ran \d+ tests? in .*$", re.M),
    re.compile(r"^\d+ mods/funs, found no issues.*$|^.*found no issues.*$", re.M),
]
_FAILED_TESTS = [
    re.compile(r"^\s+(test/\S+?\.exs?:\d+)\s*$", re.M),  # ExUnit
    re.compile(r"^FAILED (\S+::\S+)", re.M),  # pytest
    re.compile(r"^--- FAIL: (\S+)", re.M),  # go
    re.compile(r"^test (\S+) \.\.\. FAILED", re.M),  # cargo
    re.compile(r"^\s*FAIL\s+(\S+\.(?:[jt]sx?|mjs))", re.M),  # jest/vitest
]
_ERROR_LINE = re.compile(
    r"^.*(?:\berror\b|\bError\b|ERROR|\bfatal:|\*\* \(|Traceback|FAILED|not found|No such file|[Pp]ermission denied).*$", re.M)
_FAILURE_COUNT = re.compile(r"\b([1-9]\d*) (?:failures?|failed|errors?)\b")


def normalise_command(command: str) -> str:
    """The part of a shell command that states what was run: the first line, without
    ``2>&1``, trailing ``| tail``/``| head``/``| grep`` filters and ``cd X &&``
    prefixes."""
    cmd = command.strip().splitlines()[0] if command.strip() else ""
    cmd = re.sub(r"\s*\d?>&\d\b", "", cmd)
    cmd = re.sub(r"\s*2>\s*/dev/null", "", cmd)
    cmd = re.sub(r"(?:\s*\|\s*(?:tail|head|grep|less|cat)\b[^|]*)+$", "", cmd)
    cmd = re.sub(r"^cd\s+\S+\s*&&\s*", "", cmd)
    return " ".join(cmd.split())[:200]


def _summary(text: str) -> str | None:
    for p in _SUMMARIES:
        found = p.findall(text)
        if found:
            return " ".join(found[-1].strip("= ").split())[:160].rstrip(".")
    return None


def _failed_tests(text: str) -> list[str]:
    out: list[str] = []
    for p in _FAILED_TESTS:
        for m in p.findall(text):
            if m not in out:
                out.append(m)
    return out


def _first_error(text: str) -> str | None:
    for m in _ERROR_LINE.finditer(text):
        line = " ".join(m.group(0).replace("\\n", " ").split())
        if line and not line.startswith("Error: Exit code") and not re.match(r"^\d+ (?:tests?|failures?)", line):
            return line[:200]
    return None


def command_fact(command: str, output: str, ok: bool | None) -> tuple[str, str] | None:
    """``(fact, topic)`` for one command's outcome, or None when it says nothing worth
    keeping (a successful command that is not a test/build/lint runner, an empty or
    backgrounded output)."""
    cmd = normalise_command(command)
    if not cmd:
        return None
    text = output or ""
    exit_m = _EXIT.search(text[:200])
    code = int(exit_m.group(1)) if exit_m else None
    summary = _summary(text)
    failures = _FAILURE_COUNT.search(summary or "")
    failed = ok is False or (code is not None and code != 0) or bool(failures)
    runner = bool(_RUNNER.match(cmd))
    bare = re.sub(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+", "", cmd)  # MIX_ENV=test mix ecto.migrate is a build step
    kind = "test" if re.match(r"\S*\s*(?:-m\s+)?\S*(?:test|pytest|spec|vitest|jest)", bare) else "build"
    if not failed:
        if not runner or "[running in background" in text or not text.strip():
            return None
        return f"`{cmd}` works (exit 0)" + (f": {summary}" if summary else "") + ".", f"{kind}:command"
    status = f"exit {code}" if code is not None else "failed"
    parts = [f"`{cmd}` last failed ({status})"]
    if summary:
        parts.append(summary)
    tests = _failed_tests(text)
    if tests:
        shown = ", ".join(tests[:5]) + (f" (+{len(tests) - 5} more)" if len(tests) > 5 else "")
        parts.append(f"failing: {shown}")
    elif not summary:
        err = _first_error(text)
        if err:
            parts.append(err)
    fact = "; ".join(parts)
    if len(fact) > MAX_FACT:
        fact = fact[: MAX_FACT - 1] + "…"
    return fact, f"{kind}:outcome" if runner else "error:command"


# --------------------------------------------------------------------------- findings


def _rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def _read_disk(path: str, limit: int = 2_000_000) -> str | None:
    try:
        if os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def findings(rows: list[dict], *, cwd: str | None = None, full_read=None, full_output=None) -> list[dict]:
    """Findings (``{"fact", "topic", "files"}``, the LLM answer's shape) for observation
    rows (``tool``, ``input`` JSON text, ``output``, ``ok`` 1/0/None, ``files``,
    ``tool_use_id``), oldest first.

    ``full_read(row)`` may return ``(content, first_line, complete)`` for a Read whose
    stored output was cut (``ledger replay`` passes the transcript's); otherwise the file
    on disk is read when it exists, else the stored output is used as a partial read.
    ``full_output(row)`` may return a command's uncut output (failing tests listed in
    the middle of a long log survive then); else the stored, cut output is used.
    """
    from ..plaintext import plain_text, plain_value

    # Every text parsed here is first as a terminal showed it (docs/watcher.md "Terminal
    # control sequences"): a coloured "FAILED" line or "1 failed in 0.1s" summary matches
    # the patterns above, and no escape sequence reaches a fact.
    outlines: dict[str, dict] = {}
    commands: dict[str, dict] = {}
    for r in rows:
        try:
            inp = plain_value(json.loads(r.get("input") or "{}"))
        except (TypeError, ValueError):
            inp = {}
        inp = inp if isinstance(inp, dict) else {}
        tool = (r.get("tool") or "").lower()
        ok = None if r.get("ok") is None else bool(r["ok"])
        if tool == "read" and r.get("files") and ok is not False:
            path = r["files"][0]
            got = full_read(r) if full_read else None
            if got is None:
                disk = _read_disk(path)
                partial = inp.get("offset") is not None or inp.get("limit") is not None
                got = (disk, 1, True) if disk is not None and not partial else (r.get("output") or "", int(inp.get("offset") or 1), False)
            content, first, complete = got
            # The hash is of the bytes on disk (``complete``), the outline of what they show.
            fact = outline_fact(path, content or "", _rel(path, cwd), complete=complete, first_line=first)
            if fact and plain_text(fact) != fact:
                fact = plain_text(fact)
            if fact:
                outlines[path] = {"fact": fact, "topic": f"outline:{os.path.basename(path)}", "files": [path]}
        elif tool in ("edit", "write", "multiedit") and r.get("files"):
            outlines.pop(r["files"][0], None)  # the file changed after the read: outline is stale
        elif tool == "bash" and isinstance(inp.get("command"), str):
            text = plain_text((full_output(r) if full_output else None) or r.get("output") or "")
            got = command_fact(inp["command"], text, ok)
            key = normalise_command(inp["command"])
            if got:
                commands.pop(key, None)  # keep insertion order = last outcome last
                commands[key] = {"fact": got[0], "topic": got[1], "files": list(r.get("files") or [])[:5]}
            elif ok is not False:
                commands.pop(key, None)
    out = list(outlines.values()) + list(commands.values())
    return out[-MAX_FINDINGS:]
