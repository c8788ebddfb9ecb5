"""``ledger replay``: feed a real Claude Code transcript through the same hook code.

Each ``tool_use`` block of the transcript (with its ``tool_result``) becomes a
PreToolUse payload and a PostToolUse payload in Claude Code's own shape, handled by
:func:`ledger.harness.runner.handle_payload` exactly as a live hook would be, at the
transcript's own timestamps. The user's prompts become UserPromptSubmit payloads, and a
Stop payload is made up at each turn's end (where the transcript shows a Stop hook ran,
before the next user turn, and at the end), so a replay records the session and writes
checkpoints as a live session would. Distillation runs inline when due, through the
configured LLM or the deterministic distiller of :mod:`ledger.watcher.fallback` (file
outlines with size and hash, a command's last outcome, the test and build commands that
worked) so replays run with no LLM at all. At each
compaction boundary the report shows what the PreCompact and SessionStart(compact) hooks
would have injected.

The store used is a fresh temporary file, removed afterwards, unless ``--db`` is given.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import datetime

#: Bytes looked at to tell a binary file from a transcript.
BINARY_SNIFF = 8192


class BadLines:
    """Lines of a transcript that were skipped: not UTF-8, or not JSON. ``count``, and
    ``first`` (1-based line number, None when there were none)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: int | None = None
        self.good = 0  # lines that were a JSON value

    def add(self, lineno: int) -> None:
        self.count += 1
        self.first = self.first or lineno


def check_transcript(path: str) -> None:
    """Refuse a file that is not text: raises :class:`ledger.errors.InvalidInput` when
    its first :data:`BINARY_SNIFF` bytes hold a NUL byte, or when it cannot be read."""
    from ..errors import InvalidInput

    try:
        with open(path, "rb") as fh:
            head = fh.read(BINARY_SNIFF)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc.strerror or exc}).", field="transcript", value=path) from None
    if b"\0" in head:
        raise InvalidInput(f"{path}: binary content, not a Claude Code session transcript "
                           "(~/.claude/projects/<project>/<session>.jsonl, one JSON object a line).",
                           field="transcript", value=path)


def iter_transcript(path: str, bad: BadLines | None = None):
    """Yield, in transcript order: ``("tool", {...})`` per tool call (use + result),
    ``("compact", {...})`` per compaction boundary, ``("prompt", {"text", "at", "cwd",
    "session"})`` per prompt the user typed, and ``("stop", {"at", "cwd", "session"})``
    at each turn's end.

    A turn ends where a Stop hook ran (``system`` line ``stop_hook_summary``), before the
    next user turn (a prompt, or a turn the harness starts, such as a background task's
    notification), and at the end of the transcript; never twice without activity in
    between. Transcripts carry no usable ``stop_reason`` (always null when streamed).

    A line that is not UTF-8 or not JSON is skipped and counted in ``bad`` (a transcript
    cut mid-write, a stray byte); blank lines are not counted."""
    from ..session.record import is_user_words

    bad = bad if bad is not None else BadLines()

    uses: dict[str, dict] = {}
    pending: list[str] = []
    active = False  # assistant activity since the last stop
    last: dict = {"at": None, "cwd": "/", "session": "replay"}

    def stop():
        return "stop", dict(last)

    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw.decode("utf-8"))  # UnicodeDecodeError is a ValueError
            except ValueError:
                bad.add(lineno)
                continue
            bad.good += 1
            if not isinstance(d, dict):
                continue
            t = d.get("type")
            msg = d.get("message") if isinstance(d.get("message"), dict) else {}
            content = msg.get("content")
            if t in ("user", "assistant"):
                text = _user_text(content) if t == "user" and not d.get("isMeta") and not d.get("isCompactSummary") else None
                if text is not None:
                    if active:
                        yield stop()
                        active = False
                    if is_user_words(text):
                        yield "prompt", {"text": text, "at": d.get("timestamp"), "cwd": d.get("cwd") or "/",
                                         "session": d.get("sessionId") or "replay"}
                last = {"at": d.get("timestamp") or last["at"], "cwd": d.get("cwd") or last["cwd"],
                        "session": d.get("sessionId") or last["session"]}
                if t == "assistant":
                    active = True
            if t == "system" and d.get("subtype") == "stop_hook_summary" and active:
                yield stop()
                active = False
            if t == "assistant" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id"):
                        uses[b["id"]] = {"id": b["id"], "name": b.get("name", ""), "input": b.get("input") or {},
                                         "cwd": d.get("cwd") or "/", "session": d.get("sessionId") or "replay",
                                         "at": d.get("timestamp")}
                        pending.append(b["id"])
            elif t == "user" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in uses:
                        u = uses.pop(b["tool_use_id"])
                        u["result"] = d.get("toolUseResult") if d.get("toolUseResult") is not None else _block_text(b.get("content"))
                        u["is_error"] = bool(b.get("is_error"))
                        u["result_at"] = d.get("timestamp") or u["at"]
                        yield "tool", u
            elif t == "system" and d.get("subtype") == "compact_boundary":
                yield "compact", {"at": d.get("timestamp"), "cwd": d.get("cwd") or "/", "session": d.get("sessionId") or "replay",
                                  "line": lineno, "meta": d.get("compactMetadata") or {}}
    if active:
        yield stop()


def _user_text(content) -> str | None:
    """The text of a user line that starts a turn (a string, or text blocks without any
    tool result), else None."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and not any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        texts = [x for x in texts if isinstance(x, str)]
        return "\n\n".join(texts) if texts else None
    return None


def _block_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _ms(ts: str | None, fallback: int) -> int:
    if not ts:
        return fallback
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return fallback


def _full_read(results: dict):
    """``full_read(row)`` for the fallback distiller: the uncut content of a Read from
    the transcript's ``toolUseResult`` (``file.content``, ``startLine``, ``numLines``,
    ``totalLines``), so outlines, sizes and hashes are those of the whole file."""

    def read(row: dict):
        res = results.get(row.get("tool_use_id"))
        f = res.get("file") if isinstance(res, dict) else None
        if not isinstance(f, dict) or not isinstance(f.get("content"), str):
            return None
        start = f.get("startLine") if isinstance(f.get("startLine"), int) else 1
        num, total = f.get("numLines"), f.get("totalLines")
        complete = start == 1 and (not isinstance(total, int) or not isinstance(num, int) or num >= total)
        return f["content"], start, complete

    return read


def _full_output(results: dict):
    """``full_output(row)``: a command's uncut output text from the transcript."""
    from .claude_code import tool_output

    def output(row: dict):
        res = results.get(row.get("tool_use_id"))
        if res is None:
            return None
        text, _ = tool_output(row.get("tool") or "", res)
        return text

    return output


class _Sandbox:
    """The replayed project's files, materialised under a temporary folder.

    A transcript names files of a machine that is not this one; without them every file
    key would have no state and no fact could ever be marked "may be stale". So, when the
    transcript's working directory does not exist here, every string of its tool inputs
    and results that starts with the working directory's top two folders (``/home/USER``)
    is moved under a temporary root, and the files are written there as the transcript
    shows them: a full Read's content, a Write's content, an Edit applied to the known
    content; an edit to unknown content writes a unique placeholder (its state changes,
    as the real file's did). Shell commands that rewrite files are not followed."""

    def __init__(self, cwd: str, root: str):
        parts = [x for x in cwd.split("/") if x]
        self.prefix = "/" + "/".join(parts[:2]) + "/" if len(parts) >= 2 else "/" + "/".join(parts) + "/"
        self.root = root.rstrip("/")

    def map(self, value):
        if isinstance(value, str):
            if value == self.prefix[:-1]:  # a working directory two folders deep
                return self.root + value
            return value.replace(self.prefix, self.root + self.prefix) if self.prefix in value else value
        if isinstance(value, dict):
            return {k: self.map(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.map(v) for v in value]
        return value

    def write(self, path: str, content: str | None, version: str | None) -> None:
        if not path.startswith(self.root + "/"):
            return
        if content is None:
            if version is None or (version.startswith("unseen") and os.path.exists(path)):
                return
            content = f"(content unknown to the replay: {version})\n"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="replace") as fh:
                fh.write(content)
        except OSError:
            pass


def replay(transcript: str, *, db: str | None = None, distiller: str = "heuristic", every: int | None = None,
           escalate_after: int | None = None) -> dict:
    """Replay one transcript; returns the report dict (see :func:`format_report`)."""
    import tempfile

    from ..service import Ledger
    from ..watcher import config as config_mod
    from ..watcher.distill import distill_session
    from .runner import handle_payload

    check_transcript(transcript)  # before any store or folder is made
    bad = BadLines()
    tmpdir = None
    sandbox_dir = tempfile.mkdtemp(prefix="ledger-replay-files-")
    sandbox: _Sandbox | None = None
    sandbox_decided = False
    if db is None:
        tmpdir = tempfile.mkdtemp(prefix="ledger-replay-")
        db = os.path.join(tmpdir, "replay.db")
    cfg = config_mod.load_logged()
    if every:
        cfg["watcher"]["every"] = every
    if escalate_after:
        cfg["watcher"]["escalate_after"] = escalate_after
    if distiller == "heuristic":
        cfg["llm"]["backend"] = "fallback"
    led = Ledger.open(db)
    clock_now = [int(time.time() * 1000)]
    led.clock = lambda: clock_now[0]
    distills = {"runs": 0, "added": 0, "corroborated": 0}

    results: dict = {}  # tool_use_id -> the transcript's uncut toolUseResult
    from .replay_measure import RepeatReadMeter

    meter = RepeatReadMeter()

    def spawn(key: str, owner: str) -> None:
        r = distill_session(led, key, owner, cfg, log=lambda m: None, full_read=_full_read(results),
                           full_output=_full_output(results), on_added=meter.learned)
        distills["runs"] += 1
        distills["added"] += r["added"]
        distills["corroborated"] += r["corroborated"]

    timings, injections, levels, chars = [], 0, {"gentle": 0, "escalated": 0}, 0
    seen_files: dict[str, int] = {}
    seen_cmds: dict[str, int] = {}
    tool_calls = 0
    compactions = []
    session_id = None
    prompts = stops = 0
    for kind, item in iter_transcript(transcript, bad):
        session_id = session_id or item["session"]
        if not sandbox_decided:  # the first event of any kind decides (a prompt comes first)
            sandbox_decided = True
            sandbox = None if os.path.isdir(item["cwd"]) else _Sandbox(item["cwd"], sandbox_dir)
        if kind in ("prompt", "stop"):
            clock_now[0] = _ms(item["at"], clock_now[0])
            cwd = sandbox.map(item["cwd"]) if sandbox is not None else item["cwd"]
            if sandbox is not None:
                os.makedirs(cwd, exist_ok=True)
            base = {"session_id": item["session"], "transcript_path": transcript, "cwd": cwd}
            if kind == "prompt":
                prompts += 1
                extra = {"hook_event_name": "UserPromptSubmit", "prompt": item["text"]}
            else:
                stops += 1
                extra = {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": ""}
            handle_payload("claude-code", json.dumps({**base, **extra}), None, db=db, now=clock_now[0], spawn=spawn, cfg=cfg)
            continue
        if kind == "compact":
            at = _ms(item["at"], clock_now[0])
            cwd = sandbox.map(item["cwd"]) if sandbox is not None else item["cwd"]
            base = {"session_id": item["session"], "transcript_path": transcript, "cwd": cwd}
            pre = handle_payload("claude-code", json.dumps({**base, "hook_event_name": "PreCompact", "trigger": "auto"}), None,
                                 db=db, now=at, spawn=spawn, cfg=cfg)
            post = handle_payload("claude-code", json.dumps({**base, "hook_event_name": "SessionStart", "source": "compact"}), None,
                                  db=db, now=at, spawn=spawn, cfg=cfg)
            from ..session.state import block_sections

            compactions.append({"line": item["line"], "at": item["at"], "preCompact": pre, "sessionStart": post,
                                "chars": len(pre), "sections": block_sections(pre)})
            continue
        tool_calls += 1
        u = item
        if sandbox is not None:
            u = {**u, "cwd": sandbox.map(u["cwd"]), "input": sandbox.map(u["input"]), "result": sandbox.map(u["result"])}
            os.makedirs(u["cwd"], exist_ok=True)
        base = {"session_id": u["session"], "transcript_path": transcript, "cwd": u["cwd"], "tool_name": u["name"],
                "tool_input": u["input"], "tool_use_id": u["id"]}
        from ..events import ToolCall
        from ..watcher.paths import files_touched

        touched = files_touched(ToolCall(u["name"], u["input"] if isinstance(u["input"], dict) else {}), u["cwd"])
        for p in touched:
            seen_files[p] = seen_files.get(p, 0) + 1 if u["name"] in ("Read", "Grep", "Glob", "Bash") else seen_files.get(p, 0)
        if u["name"] == "Bash" and isinstance(u["input"], dict):
            c = str(u["input"].get("command", ""))
            seen_cmds[c] = seen_cmds.get(c, 0) + 1
        clock_now[0] = _ms(u["at"], clock_now[0])
        t0 = time.perf_counter()
        out = handle_payload("claude-code", json.dumps({**base, "hook_event_name": "PreToolUse"}), None, db=db, now=clock_now[0],
                             spawn=spawn, cfg=cfg)
        timings.append((time.perf_counter() - t0) * 1000)
        ctx = ""
        if out:
            injections += 1
            ctx = json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", "")
            chars += len(ctx)
            levels["escalated" if "ESCALATION" in ctx else "gentle"] += 1
        meter.before(u["name"], touched, ctx)
        result = u["result"]
        results[u["id"]] = result
        meter.after(u["name"], u["input"] if isinstance(u["input"], dict) else {}, touched, result)
        if sandbox is not None and touched and u["name"] in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit"):
            sandbox.write(touched[0], meter.content.get(touched[0]), meter.version.get(touched[0]))
        resp = result if isinstance(result, dict) else {"stdout": str(result), "stderr": "", "interrupted": False}
        if u["is_error"] and isinstance(resp, dict):
            resp = {**resp, "is_error": True}
        clock_now[0] = _ms(u.get("result_at"), clock_now[0])
        t0 = time.perf_counter()
        handle_payload("claude-code", json.dumps({**base, "hook_event_name": "PostToolUse", "tool_response": resp}), None,
                       db=db, now=clock_now[0], spawn=spawn, cfg=cfg)
        timings.append((time.perf_counter() - t0) * 1000)
    from ..session.state import checkpoint_sections

    checkpoints = [{"id": c["id"], "at": c["at"], "event": c["event"], "chars": len(c["content"]),
                    "sections": checkpoint_sections(c["content"])}
                   for c in reversed(led.store.watch.checkpoints(session=session_id or "", limit=100_000))]
    led.close()
    import shutil

    shutil.rmtree(sandbox_dir, ignore_errors=True)
    if tmpdir is not None:  # a throwaway store: nothing to keep (pass --db to inspect it afterwards)
        import shutil

        shutil.rmtree(tmpdir, ignore_errors=True)
    if tool_calls == 0 and not compactions:
        from ..errors import InvalidInput

        if bad.count and not bad.good:
            raise InvalidInput(f"{transcript}: none of its {bad.count:,} lines is JSON (first bad line: {bad.first}; "
                               "not UTF-8 or not JSON). A Claude Code session transcript "
                               "(~/.claude/projects/<project>/<session>.jsonl) has one JSON object a line.",
                               field="transcript", value=transcript)
        raise InvalidInput(f"{transcript}: no Claude Code tool calls found. Is it a session transcript "
                           "(~/.claude/projects/<project>/<session>.jsonl)?")
    timings.sort()
    return {
        "transcript": transcript,
        "session": session_id,
        "toolCalls": tool_calls,
        "repeatedReads": sum(n - 1 for n in seen_files.values() if n > 1),
        "repeatedCommands": sum(n - 1 for n in seen_cmds.values() if n > 1),
        "injections": injections,
        "gentle": levels["gentle"],
        "escalations": levels["escalated"],
        "charsInjected": chars,
        "distillations": distills,
        "repeatReads": meter.report(),
        "hookP50Ms": round(statistics.median(timings), 2) if timings else None,
        "hookP95Ms": round(timings[int(0.95 * (len(timings) - 1))], 2) if timings else None,
        "prompts": prompts,
        "stops": stops,
        "skippedLines": {"count": bad.count, "first": bad.first},
        "checkpoints": checkpoints,
        "compactions": compactions,
        "db": db if tmpdir is None else None,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.0f} %"


def _repeat_line(m: dict) -> str:
    return (f"  repeated reads met    {m['metWithFact']}/{m['repeatedReads']} ({_pct(m['metShare'])}) with a fact about "
            f"the file; facts true then {m['factsTrue']}/{m['factsShown']} ({_pct(m['trueShare'])}: "
            f"{m['factsUnchanged']} unchanged, {m['factsMarkedStale']} marked stale); "
            f"{m['charsPerRepeatedRead']} chars per repeated read")


def format_report(r: dict) -> str:
    lines = [
        f"▍ replay {os.path.basename(r['transcript'])}  session {r['session']}",
        f"  tool calls            {r['toolCalls']}",
        f"  repeated reads        {r['repeatedReads']}   (same file read/searched again)",
        f"  repeated commands     {r['repeatedCommands']}",
        f"  distillations         {r['distillations']['runs']}  ({r['distillations']['added']} fact{'' if r['distillations']['added'] == 1 else 's'} added, {r['distillations']['corroborated']} corroborated)",
        f"  injections            {r['injections']}  ({r['gentle']} gentle, {r['escalations']} escalated)",
        f"  characters injected   {r['charsInjected']}",
        _repeat_line(r["repeatReads"]),
        f"  hook time (in-process) p50 {r['hookP50Ms']} ms · p95 {r['hookP95Ms']} ms",
        f"  user prompts          {r['prompts']}",
        f"  turn ends (Stop)      {r['stops']}  ({len(r['checkpoints'])} checkpoints written)",
    ]
    skipped = r.get("skippedLines") or {}
    if skipped.get("count"):
        n = skipped["count"]
        lines.append(f"  skipped lines         {n}  (not UTF-8 or not JSON; first at line {skipped['first']})")
    if r["checkpoints"]:
        last = r["checkpoints"][-1]
        lines.append(f"  last checkpoint       {last['event']}, {last['chars']} chars: {', '.join(last['sections'])}")
    for c in r["compactions"]:
        lines += ["", f"  compaction at line {c['line']} ({c['at']}):"]
        for label, out in (("PreCompact", c["preCompact"]), ("SessionStart(compact)", c["sessionStart"])):
            text = out
            try:
                text = json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", out)
            except (ValueError, AttributeError):
                pass
            lines.append(f"    {label}: {len(text)} chars" + (f" · sections: {', '.join(c['sections'])}"
                                                                if label == "PreCompact" and c.get("sections") else ""))
            lines += ["      " + l for l in text.splitlines()[:12]]
            if len(text.splitlines()) > 12:
                lines.append(f"      … ({len(text.splitlines()) - 12} more lines)")
    return "\n".join(lines)
