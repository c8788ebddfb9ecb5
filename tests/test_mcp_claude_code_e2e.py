"""End to end: the REAL Claude Code (pinned, from npm) uses `ledger mcp` as an MCP server.

Two headless sessions (``claude -p --mcp-config``) against a scripted Anthropic Messages
server (``fakes/claude_model.py``, ``fakes/llm_server.py``). In the first the model calls
``mcp__ledger__remember``; in the second, a new session with nothing carried over but
the store, it calls ``mcp__ledger__recall`` and answers from what the tool returned, so
the final answer carries the fact only if it went model -> Claude Code -> our server ->
the store -> our server -> Claude Code -> model. The MCP configuration is the one
``ledger install mcp --client claude-code --print`` gives.

Skipped, with the reason, when npm or the registry is unavailable (as the other Claude
Code end-to-end tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.claude_model import is_main_loop, tool_results
from fakes.llm_server import ModelServer
from test_claude_code_e2e import claude_bin  # noqa: F401  (the session fixture: installs Claude Code once)

LEDGER = str(Path(sys.executable).with_name("ledger"))
FACT = "The billing service's integration tests need STRIPE_KEY=sk_test_dummy set (MCP-E2E-7)"


class Script:
    """One session's model: issue ``tool`` with ``args`` first, then answer with
    ``final(result_text)`` where ``result_text`` is the text of the tool result Claude
    Code sent back."""

    def __init__(self, tool: str, args: dict, final):
        self.tool, self.args, self.final = tool, args, final
        self.results: list[str] = []

    def __call__(self, req):
        if not is_main_loop(req):
            return "OK"
        if tool_results(req) == 0:
            return [{"type": "text", "text": f"Using {self.tool}."},
                    {"type": "tool_use", "id": "toolu_01_scripted", "name": self.tool, "input": self.args}]
        text = _tool_result_text(req)
        self.results.append(text)
        return self.final(text)


def _tool_result_text(req) -> str:
    for m in (req.body or {}).get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else ():
            if isinstance(b, dict) and b.get("type") == "tool_result":
                c = b.get("content")
                if isinstance(c, list):
                    return "".join(x.get("text", "") for x in c if isinstance(x, dict))
                return str(c or "")
    return ""


@pytest.fixture
def world(store_target, tmp_path, _isolated_home):
    proj = tmp_path / "proj"
    proj.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    db = store_target
    env = {**os.environ, "LEDGER_HOME": str(_isolated_home), "LEDGER_DB": str(db), "HOME": str(home)}
    env.pop("LEDGER_AGENT", None)
    # The configuration `ledger install mcp --client claude-code` writes, as a file for --mcp-config.
    p = subprocess.run([LEDGER, "install", "mcp", "--client", "claude-code", "--print"], cwd=proj, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    cfg = tmp_path / "mcp.json"
    cfg.write_text(p.stdout)
    assert json.loads(p.stdout)["mcpServers"]["ledger"]["env"]["LEDGER_DB"] == str(db)
    # Claude Code's environment has no LEDGER_DB: the entry's env must carry the store.
    env.pop("LEDGER_DB")
    return {"proj": proj, "home": home, "db": db, "env": env, "cfg": cfg}


def run_claude(exe: Path, world: dict, model_url: str, prompt: str, tool: str) -> dict:
    full = {**world["env"], "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-test-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
            "MCP_TIMEOUT": "60000"}
    for var in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDECODE"):
        full.pop(var, None)
    p = subprocess.run([str(exe), "-p", prompt, "--mcp-config", str(world["cfg"]), "--strict-mcp-config",
                        "--allowedTools", f"mcp__ledger__{tool}", "--output-format", "json"],
                       cwd=world["proj"], env=full, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"claude exited {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}"
    return json.loads(p.stdout)


def test_remember_in_one_session_and_recall_in_the_next(claude_bin, world):  # noqa: F811
    first = Script("mcp__ledger__remember", {"claim": FACT, "cluster": "code", "note": "from the billing README"},
                   lambda text: "Remembered." if '"id"' in text else f"FAILED: {text}")
    with ModelServer(first) as model:
        r1 = run_claude(claude_bin, world, model.url, "Remember how the billing tests are run.", "remember")
    assert model.errors == []
    assert r1["result"] == "Remembered.", (r1, first.results)
    written = json.loads(first.results[0])
    assert written["text"] == FACT and written["cluster"] == "code" and written["duplicate"] is False

    def answer(text: str) -> str:
        hits = json.loads(text)["hits"] if text.startswith("{") else []
        return "From memory: " + (hits[0]["text"] if hits else f"nothing ({text})")

    second = Script("mcp__ledger__recall", {"query": "billing integration tests STRIPE_KEY"}, answer)
    with ModelServer(second) as model:
        r2 = run_claude(claude_bin, world, model.url, "How do I run the billing integration tests?", "recall")
    assert model.errors == []
    assert r2["session_id"] != r1["session_id"]
    assert r2["result"] == f"From memory: {FACT}", (r2, second.results)

    # The store: written and read by Claude Code under its own MCP client name.
    p = subprocess.run([LEDGER, "show", written["id"], "--json", "--db", str(world["db"])], capture_output=True,
                       text=True, timeout=60, env=world["env"])
    m = json.loads(p.stdout)
    assert m["hits"] == 1 and m["readers"] == [m["writer"]]
    assert m["writer"] == "claude-code"  # Claude Code's clientInfo.name (2.1.332)
