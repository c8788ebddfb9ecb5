"""End to end: the real OpenCode (``opencode-ai`` from npm, pinned) with the ledger plugin,
driven by a scripted OpenAI-compatible model server on loopback.

The model reads ``notes.txt``; the plugin's child observes it and, with ``[llm] backend =
"opencode"``, asks the plugin to distill through OpenCode's own session API: a throwaway
session whose request reaches the scripted server (which answers with a finding) and is
never observed. The model then reads the file again and gets the distilled fact appended
to the tool output, a third look (``cat``) gets the escalated message, and a fourth
command that also writes a file gets nothing (it acts). When the run goes idle the
checkpoint is written, with the file that command created. A second
run makes OpenCode compact and checks that the compaction prompt carries the Session
State block and the facts.

OpenCode is installed once into ``tests/.cache/opencode`` (git-ignored); the test is
skipped, with the reason, only when npm or the registry is unavailable. Its own config
and cache folder (``tests/.cache/opencode-home``) is shared between runs so OpenCode
installs its plugin dependencies once.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LEDGER_BIN, store_exists, store_sql
from fakes.npm import npm_install
from fakes.openai_sse import OpenAIServer, ToolCall, Turn, messages_text, tool_results
from test_opencode_server import console_command_serves

from ledger.filekeys import file_key
from ledger.harness.opencode_install import install_opencode, uninstall_opencode
from ledger.service import Ledger
from ledger.watcher.llm import SYSTEM as DISTILL_SYSTEM

OPENCODE_VERSION = "1.18.33"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "tests" / ".cache"
OC_DIR = CACHE / "opencode"
SHARED_HOME = CACHE / "opencode-home"
FINDING = "notes.txt stores the answer 42 on its first line"


def _binary() -> Path | None:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "x64")
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform, sys.platform)
    for suffix in ("", "-baseline", "-musl", "-baseline-musl"):
        exe = OC_DIR / "node_modules" / f"opencode-{system}-{arch}{suffix}" / "bin" / "opencode"
        if exe.is_file():
            try:
                out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                continue
            if out == OPENCODE_VERSION:
                return exe
    return None


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    return npm_install(CACHE, OC_DIR, "opencode-ai", OPENCODE_VERSION, _binary, timeout=900)


def ledger_command(tmp_path: Path) -> str:
    """The command the plugin starts: this venv's ``ledger`` (or, until the console command
    routes ``__serve-session``, a shim running the same server module)."""
    if console_command_serves():
        return LEDGER_BIN
    shim = tmp_path / "ledger-shim"
    shim.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "__serve-session" ]; then shift; exec "{sys.executable}" -m ledger.harness.session_server "$@"; fi\n'
        f'exec "{LEDGER_BIN}" "$@"\n'
    )
    shim.chmod(0o755)
    return str(shim)


def _claims(db) -> int:
    if not store_exists(db):
        return 0
    try:
        return store_sql(db, "SELECT count(*) FROM memories WHERE writer = 'watcher'")[0][0]
    except Exception:  # not created yet, or busy: ask again
        return 0


class Run:
    """One finished ``opencode run``: the process, the model requests, paths, a diagnosis."""

    def __init__(self, proc, bodies, project, db, diag):
        self.proc, self.bodies, self.project, self.db, self.diag = proc, bodies, project, db, diag


def new_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("the answer is 42\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def run_opencode(opencode_bin: Path, tmp_path: Path, monkeypatch, project: Path, answer, prompt: str,
                 ledger_env: dict, limit: dict | None = None, *, db) -> Run:
    """Install the plugin (``--user`` scope, in the shared OpenCode config folder), run
    ``opencode run PROMPT`` in ``project`` against the scripted model, uninstall. ``db``:
    the store (the test's)."""
    config_home = SHARED_HOME / "config"
    env = dict(os.environ)
    for k in [k for k in env if k.startswith(("OPENCODE_", "LEDGER_"))]:
        env.pop(k)
    env.update({
        "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(config_home), "XDG_CACHE_HOME": str(SHARED_HOME / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state"),
        "PWD": str(project),  # `opencode run` takes its directory from $PWD, not the process cwd
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "LEDGER_HOME": str(tmp_path / "ledger"), "LEDGER_DB": str(db), **ledger_env,
    })
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))  # where `install --user` writes
    installed = install_opencode("user", command=ledger_command(tmp_path))
    assert installed["path"] == str(config_home / "opencode" / "plugins" / "ledger.js")

    with OpenAIServer(answer) as srv:
        (project / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "model": "scripted/scripted-model",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": srv.url, "apiKey": "test-key"},
                "models": {"scripted-model": {"name": "Scripted model", "tool_call": True,
                                              "limit": limit or {"context": 100000, "output": 4000}}},
            }},
        }))
        try:
            p = subprocess.run([str(opencode_bin), "run", "--print-logs", prompt], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
        finally:
            uninstall_opencode("user")
        bodies = srv.chat_requests()

    (tmp_path / "opencode.stderr").write_text(p.stderr)
    hook_log = tmp_path / "ledger" / "hook.log"
    diag = (f"full log: {tmp_path / 'opencode.stderr'}\nopencode exit {p.returncode}\nstdout: {p.stdout[-1500:]}\n"
            f"stderr: {p.stderr[-3000:]}\nhook.log: {hook_log.read_text() if hook_log.exists() else '(none)'}")
    return Run(p, bodies, project, db, diag)


def test_real_opencode_injects_distilled_facts_and_checkpoints_on_idle(opencode_bin, tmp_path, monkeypatch, store_target):
    project = new_project(tmp_path)
    db = store_target
    notes = str(project / "notes.txt")

    def answer(body: dict):
        text = messages_text(body)
        if DISTILL_SYSTEM in text:  # the throwaway distillation session
            return Turn(text=json.dumps([{"fact": FINDING, "topic": "file-format:notes.txt", "files": ["notes.txt"]}]))
        if not body.get("tools"):  # OpenCode's title request
            return Turn(text="Notes check")
        n = len(tool_results(body))
        if n == 0:
            return Turn(tool_calls=[ToolCall("read", {"filePath": notes})])
        if n == 1:
            deadline = time.time() + 90  # let the distillation land before looking again
            while time.time() < deadline and _claims(db) == 0:
                time.sleep(0.1)
            return Turn(tool_calls=[ToolCall("read", {"filePath": notes})])
        if n == 2:
            return Turn(tool_calls=[ToolCall("bash", {"command": "cat notes.txt",
                                                      "description": "Look at the notes once more"})])
        if n == 3:  # a command that writes: it acts, so it is never escalated nor denied
            return Turn(tool_calls=[ToolCall("bash", {"command": "cat notes.txt && echo checked > out.txt",
                                                      "description": "Record the check"})])
        return Turn(text="The answer is 42.")

    run = run_opencode(opencode_bin, tmp_path, monkeypatch, project, answer, "Check what notes.txt says.", {
        "LEDGER_LLM_BACKEND": "opencode", "LEDGER_LLM_MODEL": "scripted/scripted-model", "LEDGER_DISTILL_EVERY": "1",
        "LEDGER_ESCALATE_AFTER": "2", "LEDGER_LLM_TIMEOUT": "60",
    }, db=db)
    p, bodies, diag = run.proc, run.bodies, run.diag
    assert p.returncode == 0, diag
    assert "The answer is 42." in p.stdout, diag

    # The distillation ran as an OpenCode session of its own, with tools off.
    distills = [b for b in bodies if DISTILL_SYSTEM in messages_text(b)]
    assert distills, diag
    assert not distills[0].get("tools"), "the throwaway session must not offer tools"
    assert "the answer is 42" in messages_text(distills[0])

    # What the model saw: nothing on the first read, the distilled fact on the second,
    # the escalation on the third look.
    final = next(b for b in reversed(bodies) if b.get("tools") and len(tool_results(b)) == 4)
    first, second, third, fourth = tool_results(final)
    assert "FACTS" not in first, first
    assert "📋 KNOWN FACTS" in second and FINDING in second, second
    assert "LEDGER ESCALATION" in third and FINDING in third, third
    assert "LEDGER ESCALATION" not in fourth and "FACTS" not in fourth, fourth

    sessions = [dict(zip(("key", "steps"), r)) for r in store_sql(db, "SELECT key, steps FROM watch_sessions")]
    assert len(sessions) == 1, f"only the user's session is observed, not the distillation's: {sessions}"
    assert sessions[0]["key"].startswith("opencode:ses_") and sessions[0]["steps"] == 4
    [claim] = [dict(zip(("text", "writer", "provenance"), r))
               for r in store_sql(db, "SELECT text, writer, provenance FROM memories WHERE writer = 'watcher'")]
    assert claim["text"] == FINDING and claim["provenance"].startswith("distilled from opencode:ses_")
    levels = [r[0] for r in store_sql(db, "SELECT level FROM injections ORDER BY id")]
    assert levels == ["gentle", "escalated"]
    checkpoints = [dict(zip(("event", "content"), r)) for r in store_sql(db, "SELECT event, content FROM checkpoints")]

    # session.idle wrote the checkpoint, with the file the agent's command created.
    assert [c["event"] for c in checkpoints] == ["session.idle"], diag
    md = (project / ".agents" / "checkpoint.md").read_text()
    assert md == checkpoints[0]["content"]
    files = md.split("## Files Changed This Session\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert "- out.txt" in files, md


def test_real_opencode_compaction_carries_the_session_state(opencode_bin, tmp_path, monkeypatch, store_target):
    """A step that reports a nearly full context makes OpenCode compact; the compaction
    request the model receives carries ledger's Session State block and facts."""
    project = new_project(tmp_path)
    (project / ".agents").mkdir()
    (project / ".agents" / "tasks.md").write_text("- [ ] make ledger survive OpenCode compaction\n")
    db = store_target
    with Ledger.open(db) as led:
        led.remember("notes.txt keeps the answer on its first line", cluster="code", agent="tester",
                     files=[file_key(project / "notes.txt")])
    notes = str(project / "notes.txt")
    seen = {"compaction": None}

    def answer(body: dict):
        text = messages_text(body)
        if "## Session State" in text:  # the compaction request, with our context appended
            seen["compaction"] = body
            return Turn(text="Summary: the agent read notes.txt; the answer is 42.")
        if not body.get("tools"):
            return Turn(text="Compaction check")
        n = len(tool_results(body))
        if seen["compaction"] is None and n == 0:
            # Report a nearly full context window, so OpenCode compacts after this step.
            return Turn(tool_calls=[ToolCall("read", {"filePath": notes})], prompt_tokens=7900)
        return Turn(text="Done after compaction.")

    run = run_opencode(opencode_bin, tmp_path, monkeypatch, project, answer, "Read the notes.", {},
                       limit={"context": 8000, "output": 1000}, db=store_target)
    assert run.proc.returncode == 0, run.diag
    assert "Done after compaction." in run.proc.stdout, run.diag
    # experimental.session.compacting added the Session State block and the project's
    # facts to the compaction prompt OpenCode sent to the model.
    assert seen["compaction"] is not None, run.diag
    prompt = messages_text(seen["compaction"])
    assert "## Session State (auto-injected by ledger" in prompt
    assert "make ledger survive OpenCode compaction" in prompt
    assert "## Known facts about this project" in prompt and "notes.txt keeps the answer on its first line" in prompt


def test_real_opencode_compaction_carries_the_task_todos_and_edited_files(opencode_bin, tmp_path, monkeypatch,
                                                                          store_target):
    """Issue 13 with the real OpenCode and no ``.agents/`` file: the user's prompt
    (``chat.message``), the model's ``todowrite`` list and the file it writes reach the
    compaction request through the session record."""
    project = new_project(tmp_path)
    seen = {"compaction": None}
    task = "Write hello.txt with a greeting (TASK-OC-13)"
    todos = [{"content": "write hello.txt", "status": "in_progress", "priority": "high", "id": "1"},
             {"content": "check the greeting", "status": "pending", "priority": "medium", "id": "2"}]

    def answer(body: dict):
        text = messages_text(body)
        if "## Session State" in text:  # the compaction request, with our context appended
            seen["compaction"] = body
            return Turn(text="Summary: hello.txt written.")
        if not body.get("tools"):
            return Turn(text="Greeting task")
        n = len(tool_results(body))
        if seen["compaction"] is None and n == 0:
            return Turn(tool_calls=[ToolCall("todowrite", {"todos": todos})])
        if seen["compaction"] is None and n == 1:
            # Report a nearly full context window, so OpenCode compacts after this step.
            return Turn(tool_calls=[ToolCall("write", {"filePath": str(project / "hello.txt"), "content": "hello\n"})],
                        prompt_tokens=7900)
        return Turn(text="Done after compaction.")

    run = run_opencode(opencode_bin, tmp_path, monkeypatch, project, answer, task, {},
                       limit={"context": 8000, "output": 1000}, db=store_target)
    assert run.proc.returncode == 0, run.diag
    assert (project / "hello.txt").read_text() == "hello\n", run.diag
    assert seen["compaction"] is not None, run.diag
    prompt = messages_text(seen["compaction"])
    block = prompt.split("## Session State", 1)[1]
    # the user's words (`opencode run` hands the message over in quotes)
    assert "### Task (the user's words)\n> " in block and task in block.split("### Todo List")[0], block
    assert "- [~] write hello.txt (in progress)" in prompt and "- [ ] check the greeting" in prompt
    assert "- hello.txt" in prompt
    assert "_No " not in block
