"""End to end with the REAL Codex CLI (``@openai/codex``, pinned, from npm), offline.

``codex exec`` runs in a temporary git project with a throwaway ``CODEX_HOME`` whose
``hooks.json`` was written by ``ledger install codex --user``; its ``config.toml`` points
a model provider at a scripted Responses API server on loopback
(``fakes/responses_sse.py``), which records every request, so the test sees what the
model saw. The test plays the user who trusts ledger's hooks in ``/hooks``: it writes
Codex's trust state with the hashes :mod:`ledger.harness.codex_install` computes, and
the hooks run only because those hashes are the ones Codex computes too (no bypass
flag). Distillation runs through the ``command`` backend with a fixed answer
(``fakes/llm_cli.py``).

1. A first run reads ``notes.txt``; the detached distiller stores the finding.
2. A second run reads the same file: the finding reaches the model with the tool result.
3. A third run is made to compact (a large token count against a small
   ``model_auto_compact_token_limit``): after the compaction, Codex's SessionStart with
   source ``compact`` hands back the Session State (the user's task) and the facts.

Codex is installed once with npm into ``tests/.cache/codex`` (git-ignored); the module
is skipped, with the reason, only when npm or the registry cannot provide it.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import store_exists
from fakes.e2e import LEDGER, ledger, ledger_env, project, query, wait_for
from fakes.npm import npm_install
from fakes.responses_sse import Call, RawItem, ResponsesServer, Turn, request_text, tool_outputs

from ledger.harness import codex_install as CI

CODEX_VERSION = "0.169.0"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "tests" / ".cache"
CX_DIR = CACHE / "codex"
LLM_CLI = str(Path(__file__).parent / "fakes" / "llm_cli.py")
FINDING = "notes.txt holds the release checklist; step 3 needs the VPN (CHECKLIST-MARKER)"
TASK = "Prepare the release from the checklist in notes.txt"


def _binary() -> Path | None:
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine().lower())
    npm_arch = {"x86_64": "x64", "aarch64": "arm64"}.get(arch or "")
    if not arch or not sys.platform.startswith("linux"):
        return None
    exe = CX_DIR / "node_modules" / "@openai" / f"codex-linux-{npm_arch}" / "vendor" / f"{arch}-unknown-linux-musl" / "bin" / "codex"
    if not exe.is_file():
        return None
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return exe if out.endswith(CODEX_VERSION) else None


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    if not sys.platform.startswith("linux"):
        pytest.skip("the pinned Codex binary is looked up for Linux only")
    return npm_install(CACHE, CX_DIR, "@openai/codex", CODEX_VERSION, _binary, timeout=900)


@pytest.fixture
def world(tmp_path, _isolated_home, store_target):
    proj = project(tmp_path / "proj", {"notes.txt": "1. tag\n2. build\n3. upload (VPN)\n"})
    codex_home = tmp_path / "codex-home"
    distiller = " ".join(shlex.quote(a) for a in (
        sys.executable, LLM_CLI, "--answer",
        json.dumps([{"fact": FINDING, "topic": "file:notes.txt", "files": [str(proj / "notes.txt")]}])))
    env = ledger_env(_isolated_home, db=store_target, drop=("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"),
                     CODEX_HOME=str(codex_home), LEDGER_DISTILL_EVERY="1", LEDGER_LLM_BACKEND="command",
                     LEDGER_LLM_COMMAND=distiller)
    p = ledger("install", "codex", "--user", "--no-distill", cwd=proj, env=env)
    assert "/hooks" in p.stdout  # the trust note
    assert CI.compact_prompt_path().is_file()
    return {"proj": proj, "codex_home": codex_home, "db": store_target, "env": env,
            "ledger_home": Path(_isolated_home)}


def configure(world: dict, url: str, *, compact_limit: int | None = None, trust: bool = True,
              compact_prompt: str | None = None, extra: str = "") -> None:
    """Codex's user config.toml: the scripted provider and, as the user would after
    reviewing ledger's hooks in /hooks, their trust state."""
    lines = ['model = "gpt-5.5"', 'model_provider = "scripted"', 'approval_policy = "never"',
             'sandbox_mode = "danger-full-access"', "check_for_update_on_startup = false"]
    if compact_prompt:
        lines.append(f'experimental_compact_prompt_file = "{compact_prompt}"')
    if compact_limit:
        lines.append(f"model_auto_compact_token_limit = {compact_limit}")
    lines += ["", "[model_providers.scripted]", 'name = "scripted"', f'base_url = "{url}"', 'wire_api = "responses"',
              "request_max_retries = 0", "stream_max_retries = 0", ""]
    if trust:
        for h in CI.our_hooks(world["codex_home"] / "hooks.json"):
            lines += [f'[hooks.state."{h["key"]}"]', f'trusted_hash = "{h["hash"]}"', ""]
    (world["codex_home"] / "config.toml").write_text("\n".join(lines) + extra)


def run_codex(codex_bin: Path, world: dict, prompt: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**world["env"], "OPENAI_API_KEY": "sk-test-offline"}
    p = subprocess.run([str(codex_bin), "exec", "--skip-git-repo-check", "-C", str(world["proj"]), prompt],
                       cwd=world["proj"], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, f"codex exited {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-3000:]}"
    return p


def read_notes(body: dict) -> Turn:
    """The scripted model: read notes.txt once, then answer."""
    if not tool_outputs(body):
        return Turn(calls=[Call("exec_command", {"cmd": "cat notes.txt"})])
    return Turn(text="Checklist read.")


def test_a_learned_fact_comes_back_and_a_compaction_carries_the_session_state(codex_bin, world):
    db = world["db"]
    # Run 1: the agent reads notes.txt; the finding is distilled from what it saw.
    with ResponsesServer(read_notes) as srv:
        configure(world, srv.url)
        p = run_codex(codex_bin, world, TASK)
        assert "Checklist read." in p.stdout
        first = srv.bodies()
    assert len(first) == 2 and "3. upload (VPN)" in tool_outputs(first[1])[0]
    assert FINDING not in request_text(first[1])  # nothing known yet
    assert wait_for(lambda: query(db, "SELECT count(*) FROM memories WHERE writer = 'watcher'")[0][0] >= 1, 20), \
        "the detached distiller wrote no finding"
    sessions = query(db, "SELECT harness, session_id FROM watch_sessions")
    assert [h for h, _ in sessions] == ["codex"]
    obs = query(db, "SELECT o.tool, f.path FROM observations o JOIN observation_files f ON f.observation_id = o.id")
    assert obs == [("Bash", os.path.realpath(world["proj"] / "notes.txt"))]

    # Run 2: a new session reads the same file; the fact comes with the tool call.
    with ResponsesServer(read_notes) as srv:
        configure(world, srv.url)
        run_codex(codex_bin, world, "Check the checklist again")
        second = srv.bodies()
    assert FINDING in request_text(second[1]) and FINDING not in request_text(second[0])

    # Run 3: Codex compacts after the tool call, with the compaction prompt ledger offers;
    # SessionStart(compact) brings the state back.
    marker = CI.COMPACT_PROMPT.splitlines()[0]

    def compacting(body: dict) -> Turn:
        text = request_text(body)
        if marker in text:
            return Turn(text="Summary: the user is preparing a release.")
        if not tool_outputs(body) and "Summary: the user is preparing a release." not in text:
            return Turn(calls=[Call("exec_command", {"cmd": "cat notes.txt"})], total_tokens=50_000)
        return Turn(text="Release prepared.")

    with ResponsesServer(compacting) as srv:
        configure(world, srv.url, compact_limit=10_000, compact_prompt=str(CI.compact_prompt_path()))
        p = run_codex(codex_bin, world, TASK + " (third run)")
        third = srv.bodies()
    assert "Release prepared." in p.stdout
    compaction = [i for i, b in enumerate(third) if marker in request_text(b)]
    assert compaction, "Codex did not compact with ledger's compaction prompt"
    assert "CONTEXT CHECKPOINT COMPACTION" not in request_text(third[compaction[0]])  # it replaced Codex's own
    after = request_text(third[compaction[0] + 1])
    assert "Session State" in after and TASK + " (third run)" in after  # the task in the user's words
    assert FINDING in after  # the project's facts
    checkpoint = query(db, "SELECT content FROM checkpoints ORDER BY id DESC LIMIT 1")
    assert checkpoint and "third run" in checkpoint[0][0]
    log = world["ledger_home"] / "hook.log"
    lines = log.read_text().splitlines() if log.exists() else []
    assert all(" distill codex:" in l and "failed" not in l for l in lines), lines


def test_untrusted_hooks_do_not_run(codex_bin, world):
    """Codex skips hooks the user has not trusted: nothing reaches ledger then (what
    ``ledger install`` warns about and ``ledger doctor`` checks)."""
    with ResponsesServer(read_notes) as srv:
        configure(world, srv.url, trust=False)
        run_codex(codex_bin, world, TASK)
    assert not store_exists(world["db"]) or query(world["db"], "SELECT count(*) FROM watch_sessions")[0][0] == 0
    assert CI.trust_status(world["codex_home"] / "hooks.json")["untrusted"] == len(CI.CODEX_EVENTS)


def test_distillation_through_codex_exec_runs_no_hook(codex_bin, world, monkeypatch):
    """The ``codex`` backend: the real ``codex exec`` answers the distiller's prompt from
    stdin with the model's text on stdout, and ledger's (trusted) hooks stay off for that
    call, so distilling is never observed."""
    from ledger.watcher.llm import SYSTEM, complete

    answer = json.dumps([{"fact": FINDING, "topic": "t", "files": []}])
    # A hook of the user's own (not ledger's, so LEDGER_HOOKS_DISABLED does not silence
    # it), trusted like ledger's: it leaves a mark whenever Codex runs hooks.
    marker = world["proj"].parent / "hook-ran"
    hooks_file = world["codex_home"] / "hooks.json"
    data = json.loads(hooks_file.read_text())
    handler = {"type": "command", "command": f"touch {marker}", "timeout": 5}
    data["hooks"]["UserPromptSubmit"].append({"hooks": [handler]})
    hooks_file.write_text(json.dumps(data))
    index = len(data["hooks"]["UserPromptSubmit"]) - 1
    extra = f'[hooks.state."{hooks_file}:user_prompt_submit:{index}:0"]\ntrusted_hash = "{CI.trust_hash("UserPromptSubmit", handler)}"\n'
    with ResponsesServer(lambda body: Turn(text=answer)) as srv:
        configure(world, srv.url)
        config = world["codex_home"] / "config.toml"
        config.write_text(config.read_text() + extra)
        run_codex(codex_bin, world, "control run")  # hooks on: the mark appears
        assert marker.exists()
        marker.unlink()
        srv.requests.clear()
        for k, v in world["env"].items():
            if k.startswith(("CODEX_", "LEDGER_HOME")):
                monkeypatch.setenv(k, v)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-offline")
        c = complete("OBSERVATIONS\n1. cat notes.txt -> the checklist", {"backend": "codex", "command": str(codex_bin),
                                                                          "timeout": 120})
        bodies = srv.bodies()
    assert json.loads(c.text.strip()) == json.loads(answer)
    assert len(bodies) == 1 and SYSTEM in request_text(bodies[0]) and "cat notes.txt -> the checklist" in request_text(bodies[0])
    assert not marker.exists()  # --disable hooks: no hook ran for the distiller's call


def test_codex_reaches_ledgers_mcp_server_registered_by_install(codex_bin, world):
    """``ledger install codex`` put ``[mcp_servers.ledger]`` in the user config.toml: Codex
    starts ``ledger mcp``, its tool search finds ledger's tools, and a ``recall`` call
    returns the remembered fact. ``required = true`` (added here) makes ``codex exec``
    wait for the server before its first request; without it the first request may go
    out before ``ledger mcp`` has started."""
    installed = (world["codex_home"] / "config.toml").read_text()
    assert "[mcp_servers.ledger]" in installed and 'args = ["mcp"]' in installed
    p = subprocess.run([LEDGER, "remember", "deploys need the VPN token from the vault", "--cluster", "proc"],
                       env=world["env"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    found: dict = {}

    def model(body: dict) -> Turn:
        items = body.get("input") or []
        searched = [i for i in items if i.get("type") == "tool_search_output"]
        if not searched:
            return Turn(calls=[RawItem({"type": "tool_search_call", "call_id": "ts_1", "id": "tsc_1", "status": "completed",
                                        "execution": "client", "arguments": {"query": "ledger recall memory", "limit": 8}})])
        if not tool_outputs(body):
            found["tools"] = searched[-1].get("tools") or []
            return Turn(calls=[RawItem({"type": "function_call", "id": "fc_r", "status": "completed", "call_id": "call_r",
                                        "namespace": "mcp__ledger", "name": "recall",
                                        "arguments": json.dumps({"query": "deploy vpn"})})])
        found["output"] = tool_outputs(body)[-1]
        return Turn(text="Recalled.")

    with ResponsesServer(model) as srv:
        configure(world, srv.url, extra="\n" + installed + "required = true\nstartup_timeout_sec = 60\n")
        run_codex(codex_bin, world, "What do deploys need?")
    assert any(t.get("name") == "mcp__ledger" for t in found["tools"]), found["tools"]
    assert "deploys need the VPN token from the vault" in found["output"]
