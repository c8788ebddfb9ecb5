"""End to end with the REAL Gemini CLI (``@google/gemini-cli``, pinned), offline.

Gemini runs headless (``gemini -p``) in a temporary git project, in a throwaway HOME
where ``ledger install gemini`` wrote ledger's extension. Its model is replaced by canned
answers through Gemini's own ``--fake-responses`` mode (the one its hook integration
tests use; docs/harness-contracts.md §D8): the scripted model reads the same file again
and again, and later a long session gets compressed. Everything else is real: Gemini's
extension loading, its hook calls and their environment, our hook processes, the store.
What the model saw is read back from Gemini's own transcript, whose path the hooks
recorded in the store.

Gemini CLI is installed once with npm into ``tests/.cache/gemini`` (git-ignored); the
module is skipped, with the reason, when node, npm or the registry is unavailable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes.e2e import FACT_DATA, FACT_NOTES, SCENARIO_FILES, ledger, ledger_env, project, query, remember_scenario_facts
from fakes.npm import npm_install

GEMINI_VERSION = "0.61.0"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "tests" / ".cache"
GEMINI_DIR = CACHE / "gemini"
MODEL = "gemini-2.5-flash"  # a fixed model: the default "auto" first asks a routing classifier



def _script() -> Path | None:
    pkg = GEMINI_DIR / "node_modules" / "@google" / "gemini-cli"
    exe = pkg / "bundle" / "gemini.js"
    meta = pkg / "package.json"
    if exe.is_file() and meta.is_file() and json.loads(meta.read_text()).get("version") == GEMINI_VERSION:
        return exe
    return None


@pytest.fixture(scope="session")
def gemini_js() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: cannot run @google/gemini-cli for the end-to-end test")
    return npm_install(CACHE, GEMINI_DIR, "@google/gemini-cli", GEMINI_VERSION, _script, timeout=900)


@pytest.fixture
def world(tmp_path, _isolated_home, store_target):
    """A git project, a throwaway HOME holding ledger's Gemini extension and Gemini
    settings that need no login, and two remembered facts."""
    proj, home = project(tmp_path / "proj", SCENARIO_FILES), tmp_path / "home"
    home.mkdir()
    env = ledger_env(_isolated_home, db=store_target, drop=("GEMINI_CLI_HOME",), HOME=str(home))
    ledger("install", "gemini", "--user", "--no-distill", cwd=proj, env=env)
    remember_scenario_facts(proj, env)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True}, "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False}}))
    return {"proj": proj, "home": home, "ledger_home": Path(_isolated_home), "db": store_target}


# ------------------------------------------------------------------ canned model answers


def _usage(prompt_tokens: int) -> dict:
    return {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 5, "totalTokenCount": prompt_tokens + 5}


def call(name: str, args: dict, prompt_tokens: int = 100) -> dict:
    """One streamed model turn asking for one tool call."""
    return {"method": "generateContentStream", "response": [{"candidates": [{"content": {
        "parts": [{"functionCall": {"name": name, "args": args}}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(prompt_tokens)}]}


def answer(text: str) -> dict:
    return {"method": "generateContentStream", "response": [{"candidates": [{"content": {
        "parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}], "usageMetadata": _usage(100)}]}


def summary(text: str) -> dict:
    """A non-streamed answer: what the compression's summary and verification calls get."""
    return {"method": "generateContent", "response": {"candidates": [{"content": {
        "parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}], "usageMetadata": _usage(50)}}


def run_gemini(gemini_js: Path, world: dict, prompt: str, responses: list[dict], *extra: str, env: dict | None = None,
               timeout: float = 120) -> dict:
    canned = world["home"] / f"responses-{len(list(world['home'].glob('responses-*')))}.jsonl"
    canned.write_text("".join(json.dumps(r) + "\n" for r in responses))
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(world["home"]), "GEMINI_API_KEY": "offline-test",
            "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    # No LEDGER_HOME here: the extension's settings must carry it to the hooks.
    p = subprocess.run(["node", str(gemini_js), "-m", MODEL, "-y", "-o", "json", "-p", prompt, "--fake-responses",
                        str(canned), *extra], cwd=world["proj"], env=full, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"gemini exited {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-3000:]}"
    return json.loads(p.stdout[p.stdout.index("{"):])


def transcript(world: dict) -> list[dict]:
    """Gemini's transcript of the session, found through the path our hooks stored."""
    (path,) = {r[0] for r in query(world["db"], "SELECT transcript_path FROM watch_sessions WHERE transcript_path != ''")}
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def tool_results(records: list[dict]) -> list[tuple[str, str]]:
    """``(tool name, output the model got)`` for every tool result, in order."""
    out = []
    for r in records:
        if r.get("type") == "user":
            for part in r.get("content") or []:
                fr = part.get("functionResponse") if isinstance(part, dict) else None
                if fr:
                    out.append((fr["name"], fr["response"].get("output", "")))
    return out


def prompts(records: list[dict]) -> list[str]:
    return [part["text"] for r in records if r.get("type") == "user"
            for part in r.get("content") or [] if isinstance(part, dict) and "text" in part]


# ------------------------------------------------------------------ tests


def test_a_fact_is_handed_back_on_a_repeated_read_and_escalates(gemini_js, world):
    proj, db = world["proj"], world["db"]
    steps = [
        call("read_file", {"file_path": "data.bin"}),                                   # 1 gentle (data.bin)
        call("run_shell_command", {"command": "cat notes.txt", "description": "Show"}),  # 2 gentle (notes.txt)
        call("read_file", {"file_path": "data.bin"}),                                   # 3 quiet
        call("run_shell_command", {"command": "head -c 6 data.bin", "description": "Header"}),  # 4 escalated
        call("write_file", {"file_path": "summary.md", "content": "# data.bin\nFORMAT-ZETA\n"}),
        call("run_shell_command", {"command": "cat missing.txt", "description": "Fails"}),
        call("mcp_ledger_recall", {"query": "FORMAT-ZETA"}),  # the extension's MCP server
        answer("All done: data.bin is FORMAT-ZETA."),
    ]
    result = run_gemini(gemini_js, world, "Work out the format of data.bin.", steps, env={"LEDGER_ESCALATE_AFTER": "3"})
    assert result["response"] == "All done: data.bin is FORMAT-ZETA."

    results = tool_results(transcript(world))
    assert [name for name, _ in results] == ["read_file", "run_shell_command", "read_file", "run_shell_command",
                                             "write_file", "run_shell_command", "mcp_ledger_recall"]
    out = [o for _, o in results]
    # 1: the remembered fact comes back with the read, inside Gemini's own hook-context wrapper
    assert FACT_DATA in out[0] and "KNOWN FACTS" in out[0] and "<hook_context>" in out[0]
    assert FACT_NOTES not in out[0]
    # 2: a shell command naming another file gets that file's fact
    assert FACT_NOTES in out[1] and "1. schema?" in out[1]
    # 3: quiet; 4: the third showing of data.bin's facts escalates
    assert FACT_DATA not in out[2]
    assert "LEDGER ESCALATION" in out[3] and FACT_DATA in out[3] and "DATAV1" in out[3]
    assert all("&lt;" not in o and "&gt;" not in o for o in out), "nothing we inject is mangled by Gemini's escaping"
    assert "<hook_context>" not in out[4] + out[5] + out[6]
    # the MCP server the extension declares runs `ledger mcp` on the same store (its
    # LEDGER_HOME comes from the extension's settings too)
    assert FACT_DATA in out[6], out[6]

    # the store saw every call, normalised, with the failure as a failure
    (session_id,) = {r[0] for r in query(db, "SELECT session_id FROM watch_sessions")}
    assert session_id == result["session_id"]
    obs = query(db, "SELECT tool, ok FROM observations ORDER BY step")
    assert obs == [("Read", 1), ("Bash", 1), ("Read", 1), ("Bash", 1), ("Write", 1), ("Bash", 0), ("mcp_ledger_recall", 1)]
    assert [lvl for (lvl,) in query(db, "SELECT level FROM injections ORDER BY id")] == ["gentle", "gentle", "escalated"]
    # AfterAgent wrote the checkpoint, with the file the agent wrote and the failing command
    md = (proj / ".agents" / "checkpoint.md").read_text()
    assert "Work out the format of data.bin." in md and "- summary.md" in md and "cat missing.txt" in md
    # every hook call succeeded (LEDGER_HOME reached the hooks through the extension's settings)
    log = world["ledger_home"] / "hook.log"
    assert not log.exists() or "Error" not in log.read_text(), log.read_text()


def test_session_state_survives_a_compression(gemini_js, world):
    """A session writes a todo list, a file and runs a command; resumed later, its long
    history gets compressed (Gemini's automatic compression, triggered by the canned
    token count). The Session State comes back at the resume (SessionStart) and again
    right after the compression, on the next tool result; not on the tool result of a
    turn where Gemini only checked (PreCompress fires before every request)."""
    task = "Port the report parser to Rust (TASK-GEM-9)"
    first = [
        call("write_todos", {"todos": [{"description": "Write parser.rs", "status": "in_progress"},
                                       {"description": "Test the parser", "status": "pending"}]}),
        call("write_file", {"file_path": "parser.rs", "content": "fn parse() {}\n"}),
        call("run_shell_command", {"command": "ls parser.rs", "description": "Check"}),
        answer("parser.rs is started."),
    ]
    r1 = run_gemini(gemini_js, world, task, first)
    second = [
        call("read_file", {"file_path": "notes.txt"}, prompt_tokens=900_000),  # the next request must compress
        summary("SUMMARY-GEM: the agent started parser.rs."),
        summary("SUMMARY-GEM: the agent started parser.rs (verified)."),
        call("read_file", {"file_path": "parser.rs"}),
        answer("Continuing."),
    ]
    r2 = run_gemini(gemini_js, world, "Continue.", second, "--resume", "latest")
    assert r2["session_id"] == r1["session_id"]
    assert r2["stats"]["models"][MODEL]["api"]["totalRequests"] == 5, "the compression did not run"

    records = transcript(world)
    # The compression replaced the history with Gemini's summary.
    replaced = [r for r in records if "$set" in r and "messages" in r["$set"]]
    assert any("SUMMARY-GEM" in json.dumps(r) for r in replaced)
    # Resume: SessionStart's context is put in front of the prompt.
    resumed = [p for p in prompts(records) if "Session State" in p]
    assert resumed and task in resumed[0] and "- [~] Write parser.rs (in progress)" in resumed[0]
    results = [o for name, o in tool_results(records) if name == "read_file"]
    before, after = results[-2], results[-1]
    assert "Session State" not in before  # Gemini only checked before that request
    block = after.split("<hook_context>", 1)[1]
    assert "## Session State" in block and f"│ {task}" in block
    assert "- [~] Write parser.rs (in progress)" in block and "- [ ] Test the parser" in block
    assert "- parser.rs" in block and "- last passing: `ls parser.rs`" in block
    assert "## Known facts about this project (from ledger)" in block and "FORMAT-ZETA" in block
    assert "&gt;" not in block and "&lt;" not in block
    log = world["ledger_home"] / "hook.log"
    assert not log.exists() or "Error" not in log.read_text(), log.read_text()
