"""End to end with the REAL Claude Code (``@anthropic-ai/claude-code``, pinned), offline.

Claude Code runs headless (``claude -p``) in a temporary git project whose hooks were
written by ``ledger install claude-code``. Its model is a scripted Anthropic Messages
server on loopback (``fakes/claude_model.py``) that makes the agent look at the same
file again and again; the server records every request, so the test sees exactly what
the model saw. Distillation runs through the ``command`` backend: a tiny Python script
(``fakes/llm_cli.py``) that asks a SECOND scripted server. Everything is real except
the two models: the harness, its hook calls, our hook processes, the detached
distiller, the store.

Claude Code is installed once with npm into ``tests/.cache/claude-code`` (git-ignored).
The module is skipped, with the reason, only when npm or the registry is unavailable.
"""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import spool_settled
from fakes.claude_model import Scenario, is_compaction, tool_results
from fakes.e2e import (
    FACT_DATA,
    FACT_NOTES,
    LEDGER,
    SCENARIO_FILES,
    ledger,
    ledger_env,
    project,
    query,
    remember_scenario_facts,
    wait_for,
)
from fakes.llm_server import ModelServer
from fakes.npm import npm_install

CLAUDE_CODE_VERSION = "2.1.332"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "tests" / ".cache"
CC_DIR = CACHE / "claude-code"
LLM_CLI = str(Path(__file__).parent / "fakes" / "llm_cli.py")

DISTILLED = "data.bin payload text begins with DATAV1 (DISTILLED-MARKER)"
HOOK_CONTEXT = "hook additional context"


def _binary() -> Path | None:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "x64")
    pkg = CC_DIR / "node_modules" / "@anthropic-ai"
    for name in (f"claude-code-linux-{arch}", f"claude-code-linux-{arch}-musl", f"claude-code-darwin-{arch}"):
        exe = pkg / name / "claude"
        meta = pkg / "claude-code" / "package.json"
        if exe.is_file() and meta.is_file() and json.loads(meta.read_text()).get("version") == CLAUDE_CODE_VERSION:
            return exe
    return None


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The native Claude Code binary, installed into the cache folder on first use."""
    return npm_install(CACHE, CC_DIR, "@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, _binary, timeout=600)


@pytest.fixture
def world(tmp_path, _isolated_home, store_target):
    """A git project with ledger's hooks installed and two remembered facts."""
    proj = project(tmp_path / "proj", SCENARIO_FILES)
    env = ledger_env(_isolated_home, db=store_target)
    ledger("install", "claude-code", "--dir", str(proj), cwd=proj, env=env)
    remember_scenario_facts(proj, env)
    home = tmp_path / "home"
    home.mkdir()
    return {"proj": proj, "home": home, "ledger_home": Path(_isolated_home), "db": store_target,
            "env": env}


def run_claude(claude_bin: Path, world: dict, model_url: str, prompt: str, *extra: str, env: dict | None = None,
               timeout: float = 90) -> dict:
    full = {**world["env"], "HOME": str(world["home"]), "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-test-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
            **(env or {})}
    for var in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDECODE"):
        full.pop(var, None)
    p = subprocess.run([str(claude_bin), "-p", prompt, "--allowedTools", "Bash Read Write", "--output-format", "json", *extra],
                       cwd=world["proj"], env=full, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"claude exited {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}"
    return json.loads(p.stdout)


def test_facts_reach_the_model_and_escalate_and_distillation_closes_the_loop(claude_bin, world):
    proj, db = world["proj"], world["db"]
    finding = json.dumps([{"fact": DISTILLED, "topic": "file-format:data.bin", "files": [str(proj / "data.bin")]}])

    def distilled() -> bool:
        rows = query(db, "SELECT count(*) FROM memories WHERE writer = 'watcher'")[0][0]
        done = query(db, "SELECT count(*) FROM watch_sessions WHERE distilled_step >= 2 AND lease_owner IS NULL")[0][0]
        return rows >= 1 and done >= 1

    def before(n: int) -> None:
        if n == 2:  # the distiller started after step 2 runs detached: let it land first
            assert wait_for(distilled, 15), "the detached distiller wrote no claim"

    steps = [
        ("Bash", {"command": "cat data.bin", "description": "Show data.bin"}),                   # 1 gentle (data.bin)
        ("Read", {"file_path": str(proj / "notes.txt")}),                                        # 2 gentle (notes.txt)
        ("Bash", {"command": "xxd data.bin | head -5", "description": "Hex dump"}),              # 3 gentle again: new finding
        ("Bash", {"command": "head -c 6 data.bin", "description": "Header"}),                    # 4 quiet
        ("Bash", {"command": "cat ./data.bin", "description": "Show again"}),                    # 5 quiet
        ("Bash", {"command": "od -c data.bin | head -3", "description": "Octal dump"}),          # 6 escalated
        ("Write", {"file_path": str(proj / "summary.md"), "content": "# data.bin\nFORMAT-ZETA\n"}),  # 7 (edit: checkpoint)
        ("Bash", {"command": "cat missing.txt", "description": "Fails"}),                       # 8 PostToolUseFailure
    ]
    scenario = Scenario(steps, final="All done: data.bin is FORMAT-ZETA.", before=before)
    with ModelServer(lambda req: finding) as distill_srv, ModelServer(scenario) as model:
        llm_cmd = " ".join(shlex.quote(a) for a in (sys.executable, LLM_CLI, "--url", distill_srv.url))
        t0 = time.monotonic()
        result = run_claude(claude_bin, world, model.url, "Work out the format of data.bin.", env={
            "LEDGER_DISTILL_EVERY": "2", "LEDGER_LLM_BACKEND": "command", "LEDGER_LLM_COMMAND": llm_cmd})
        elapsed = time.monotonic() - t0
        assert result["result"] == "All done: data.bin is FORMAT-ZETA." and result["is_error"] is False
        assert scenario.issued == list(range(len(steps))), "the agent did not run every scripted step"
        assert model.errors == []

        after = {n: Scenario.after_tool(model, n) for n in range(len(steps) + 1)}
        assert all(after.values()), sorted(n for n, r in after.items() if r is None)
        text = {n: r.text() for n, r in after.items()}
        contexts = {n: text[n].count(HOOK_CONTEXT) for n in text}

        # nothing is injected before the first touch
        assert FACT_DATA not in text[0] and contexts[0] == 0
        # 1: the fact remembered with `ledger remember --file data.bin` reaches the model right after the tool
        assert FACT_DATA in text[1] and "KNOWN FACTS" in text[1] and contexts[1] == 1
        assert FACT_NOTES not in text[1]
        # 2: a Read of another file gets that file's fact (its own counter: gentle)
        assert FACT_NOTES in text[2] and contexts[2] == 2
        # 3: the distilled finding is injected; the new finding reset the ladder (gentle again)
        assert DISTILLED not in text[2] and DISTILLED in text[3] and contexts[3] == 3
        assert "ESCALATION" not in text[3]
        # 4, 5: quiet period, nothing new attached
        assert contexts[4] == 3 and contexts[5] == 3
        # 6: the 4th injection opportunity for data.bin escalates
        assert "LEDGER ESCALATION" not in text[5]
        assert "LEDGER ESCALATION" in text[6] and contexts[6] == 4
        # shown at 3 (the ladder restarted there) and now; 4 and 5 were quiet
        assert "You have been shown these facts 2 times" in text[6]
        assert contexts[7] == 4 and contexts[8] == 4  # files with no facts: nothing
        # let the detached distillers still running (steps 3-4, 5-6) finish while their model is up
        assert wait_for(lambda: query(db, "SELECT count(*) FROM watch_sessions WHERE lease_owner IS NULL")[0][0] == 1, 20)

    # the store saw it all
    (session_id,) = {r[0] for r in query(db, "SELECT session_id FROM watch_sessions")}
    assert session_id == result["session_id"]
    obs = query(db, "SELECT step, tool, ok, output FROM observations ORDER BY step")
    assert [o[1] for o in obs] == ["Bash", "Read", "Bash", "Bash", "Bash", "Bash", "Write", "Bash"]
    # the failed command arrived through PostToolUseFailure, with its error
    assert obs[-1][2] == 0 and "missing.txt" in obs[-1][3] and all(o[2] == 1 for o in obs[:-1])
    inj = query(db, "SELECT step, level FROM injections ORDER BY id")
    assert [lvl for _, lvl in inj] == ["gentle", "gentle", "gentle", "escalated"]
    (prov,) = query(db, "SELECT provenance FROM memories WHERE writer = 'watcher'")[0]
    assert prov == f"distilled from claude-code:{session_id} steps 1-2"
    keys = query(db, "SELECT f.path, f.size, f.sha256 FROM memory_files f JOIN memories m ON m.id = f.memory_id "
                     "WHERE m.writer = 'watcher'")
    assert keys == [(str(proj / "data.bin"), (proj / "data.bin").stat().st_size, keys[0][2])] and len(keys[0][2]) == 64
    # the distiller's LLM saw the redacted, bounded trajectory through the command backend
    prompts = [r.prompt() for r in distill_srv.requests]
    assert prompts and "cat data.bin" in prompts[0] and "DATAV1 payload" in prompts[0]
    calls = query(db, "SELECT backend, ok FROM llm_calls")
    assert calls and all(c == ("command", 1) for c in calls)
    # later distillations repeated the same finding: corroborated, not copied
    assert len(calls) >= 2
    assert query(db, "SELECT count(*) FROM memories WHERE writer = 'watcher'")[0][0] == 1

    # Stop wrote the checkpoint, with the file the Write created
    md = (proj / ".agents" / "checkpoint.md").read_text()
    assert "## Branch\nmain\n" in md and "- summary.md" in md and "?? summary.md" in md
    p = subprocess.run([LEDGER, "checkpoints", "--json"], env=world["env"], capture_output=True, text=True)
    rows = json.loads(p.stdout)
    assert rows and rows[0]["session"] == f"claude-code:{session_id}" and rows[0]["project"] == str(proj)

    # every hook call succeeded: the log has only the distiller's reports
    log = (world["ledger_home"] / "hook.log").read_text().splitlines()
    assert log and all(" distill claude-code:" in l and "failed" not in l for l in log), log
    assert elapsed < 90


def test_escalation_can_deny_the_tool_call(claude_bin, world):
    """With deny_on_escalation the escalated call is refused and the model is told why."""
    steps = [("Bash", {"command": "cat data.bin", "description": "Show"}),
             ("Bash", {"command": "cat data.bin", "description": "Show again"})]
    scenario = Scenario(steps, final="Stopped.")
    with ModelServer(scenario) as model:
        run_claude(claude_bin, world, model.url, "Look at data.bin twice.",
                   env={"LEDGER_ESCALATE_AFTER": "2", "LEDGER_DENY_ON_ESCALATION": "1"})
        first, second = Scenario.after_tool(model, 1), Scenario.after_tool(model, 2)
    assert "DATAV1 payload" in Scenario.tool_result_text(first, 1)
    denied = Scenario.tool_result_text(second, 2)
    assert "LEDGER ESCALATION" in denied and FACT_DATA in denied
    assert "DATAV1 payload" not in denied  # the command did not run
    assert tool_results(second) == 2
    spool_settled(world["db"])  # on PostgreSQL finished calls go to the spool first
    obs = query(world["db"], "SELECT tool FROM observations")
    assert len(obs) == 1  # a denied call never ran: no PostToolUse


def test_session_state_survives_compaction(claude_bin, world):
    """PreCompact's plain stdout becomes part of the compaction instructions (the [obs]
    claim of docs/harness-contracts.md §A6, checked here on the pinned version), and after the
    compaction the next turn starts with the Session State block and the project's
    facts (SessionStart additionalContext)."""
    proj = world["proj"]
    agents = proj / ".agents"
    agents.mkdir()
    (agents / "tasks.md").write_text("- [ ] TASK-MARKER-77: decode data.bin\n")
    (agents / "decisions.md").write_text("- DECISION-MARKER-5: keep the store in SQLite\n")
    scenario = Scenario([("Bash", {"command": "cat data.bin", "description": "Show"})], final="Looked at it.",
                        summary="SUMMARY-MARKER: the agent read data.bin once.")
    with ModelServer(scenario) as model:
        first = run_claude(claude_bin, world, model.url, "Look at data.bin.")
        sid = first["session_id"]
        assert (agents / "checkpoint.md").exists()  # Stop of the first turn
        n = len(model.requests)
        run_claude(claude_bin, world, model.url, "/compact", "--resume", sid)
        compactions = [r for r in model.requests[n:] if is_compaction(r)]
        assert compactions, "no compaction request reached the model"
        instructions = compactions[0].prompt()
        block = instructions.split("Additional Instructions:", 1)[1]
        assert block.lstrip().startswith("## Session State (auto-injected by ledger")
        assert "TASK-MARKER-77" in block and "DECISION-MARKER-5" in block
        # the session record: the user's prompt and the command that ran (ledger's own
        # checkpoint.md is not repeated while the record has the same)
        assert "> Look at data.bin." in block and "- last passing: `cat data.bin`" in block
        n = len(model.requests)
        run_claude(claude_bin, world, model.url, "Continue.", "--resume", sid)
        later = [r for r in model.requests[n:] if not is_compaction(r) and r.body and r.body.get("tools")]
        assert later
        seen = later[0].text()
        assert "SUMMARY-MARKER" in seen  # the compacted conversation
        ctx = seen.split("SessionStart hook additional context:", 1)[1]
        assert "## Session State" in ctx and "TASK-MARKER-77" in ctx and "DECISION-MARKER-5" in ctx
        assert "## Known facts about this project (from ledger)" in ctx and "FORMAT-ZETA" in ctx


def test_the_task_todo_list_and_edited_files_survive_compaction_without_agents_files(claude_bin, world):
    """Issue 13, end to end: no ``.agents/`` file exists; the model makes a todo list with
    Claude Code's task tools, writes a file, the user compacts, and the compaction
    request and the next model request carry the task in the user's words, the todo
    list with its statuses and the edited file, all from what the hooks recorded."""
    proj = world["proj"]
    assert not (proj / ".agents").exists()
    task = "Add a greet() helper in greet.py that says hello (TASK-E2E-13)"
    steps = [
        ("TaskCreate", {"subject": "Write greet.py", "description": "the helper", "activeForm": "Writing greet.py"}),
        ("TaskCreate", {"subject": "Test greet()", "description": "a quick check", "activeForm": "Testing"}),
        ("TaskUpdate", {"taskId": "1", "status": "in_progress"}),
        ("Write", {"file_path": str(proj / "greet.py"), "content": "def greet():\n    return 'hello'\n"}),
        ("TaskUpdate", {"taskId": "1", "status": "completed"}),
        ("Bash", {"command": "python3 -c 'import greet; print(greet.greet())'", "description": "Check"}),
    ]
    scenario = Scenario(steps, final="greet.py is written; testing is next.", summary="SUMMARY-13: work in progress.")
    tasks_on = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1", "CLAUDE_CODE_ENABLE_TASKS": "1"}
    with ModelServer(scenario) as model:
        first = run_claude(claude_bin, world, model.url, task, env=tasks_on)
        assert scenario.issued == list(range(len(steps))) and model.errors == []
        results = [Scenario.tool_result_text(Scenario.after_tool(model, n), n) for n in range(1, len(steps) + 1)]
        assert "Task #1 created successfully" in results[0] and "hello" in results[5], results
        sid = first["session_id"]
        # the Stop checkpoint carries the record; ledger's .agents/ stays out of git status
        md = (proj / ".agents" / "checkpoint.md").read_text()
        assert f"> {task}" in md and "- [x] Write greet.py\n- [ ] Test greet()" in md and "- greet.py" in md
        status = subprocess.run(["git", "-C", str(proj), "status", "--short"], capture_output=True, text=True).stdout
        assert "?? greet.py" in status and ".agents" not in status

        n = len(model.requests)
        run_claude(claude_bin, world, model.url, "/compact", "--resume", sid, env=tasks_on)
        compactions = [r for r in model.requests[n:] if is_compaction(r)]
        assert compactions, "no compaction request reached the model"
        instructions = compactions[0].prompt().split("Additional Instructions:", 1)[1]
        assert instructions.lstrip().startswith("## Session State (auto-injected by ledger")
        assert f"> {task}" in instructions
        assert "- [x] Write greet.py" in instructions and "- [ ] Test greet()" in instructions
        assert "- greet.py" in instructions and "- last passing: `python3 -c" in instructions
        assert "_No " not in instructions

        n = len(model.requests)
        run_claude(claude_bin, world, model.url, "Continue.", "--resume", sid, env=tasks_on)
        later = [r for r in model.requests[n:] if not is_compaction(r) and r.body and r.body.get("tools")]
        assert later
        seen = later[0].text()
        assert "SUMMARY-13" in seen  # the compacted conversation
        ctx = seen.split("SessionStart hook additional context:", 1)[1]
        assert f"> {task}" in ctx
        assert "- [x] Write greet.py" in ctx and "- [ ] Test greet()" in ctx
        assert "- greet.py" in ctx
    # the prompts of every run were recorded
    prompts = [t for (t,) in query(world["db"], "SELECT text FROM session_prompts ORDER BY id")]
    assert prompts == [task, "Continue."], prompts  # /compact fires no UserPromptSubmit
    log = world["ledger_home"] / "hook.log"
    assert not log.exists() or "Error" not in log.read_text()
