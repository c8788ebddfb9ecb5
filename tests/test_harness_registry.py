"""The harness registry (ledger/harness/adapters/): one module per harness, found by name
by ``ledger hook``, ``ledger install`` and ``ledger uninstall``. The proof that adding a
harness is one module: a throwaway adapter dropped into the package works through the
real commands, then is removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.hooks import run_hook

from ledger.harness import adapters

FAKE = '''"""A harness for tests only."""
import json

from ledger.events import HookEvent

HARNESS = "fake-harness"
TITLE = "Fake"


def parse_payload(raw, expected_event=None):
    data = json.loads(raw)
    return HookEvent(harness=HARNESS, kind="session_start", session_id=data["id"], cwd=data["cwd"],
                     source="compact", raw_event_name=expected_event or "Start")


def render_response(event, resp):
    return "FAKE:" + (resp.additional_context or "")[:40]


def install(scope, project_dir, *, link=False):
    return {"path": str(project_dir), "scope": scope}


def uninstall(scope, project_dir):
    return {"path": str(project_dir), "removed": 1}


def install_lines(r, scope):
    return [f"fake installed in {r['path']}"]
'''


def test_the_registry_lists_and_finds_adapters():
    assert adapters.names() == ["claude-code", "codex", "gemini", "opencode"]
    for name in adapters.names():
        mod = adapters.get(name)
        assert mod.HARNESS == name and callable(mod.install) and callable(mod.uninstall)
    assert hasattr(adapters.with_hook("claude-code"), "parse_payload")
    assert hasattr(adapters.with_hook("gemini"), "expand")
    assert hasattr(adapters.get("opencode"), "serve_session")


@pytest.mark.parametrize("bad", ["cursor", "Claude-Code", "", "claude_code "])
def test_an_unknown_harness_names_the_known_ones(bad):
    with pytest.raises(adapters.UnknownHarness, match="ledger knows claude-code, codex, gemini, opencode"):
        adapters.get(bad)


def test_a_harness_without_per_event_hooks_says_how_it_works_instead(store_target, _isolated_home, tmp_path):
    with pytest.raises(ValueError, match="its plugin talks to `ledger __serve-session opencode`"):
        adapters.with_hook("opencode")
    p = run_hook("PostToolUse", b"{}", args=["opencode", "PostToolUse"], env={"LEDGER_DB": store_target})
    assert p.returncode == 0 and p.stdout == b""
    assert "does not run `ledger hook`" in (Path(_isolated_home) / "hook.log").read_text()


@pytest.fixture
def fake_adapter():
    folder = Path(adapters.__file__).parent
    path = folder / "fake_harness.py"
    path.write_text(FAKE)
    try:
        yield path
    finally:
        path.unlink()
        for cached in (folder / "__pycache__").glob("fake_harness.*"):
            cached.unlink()


def test_a_new_harness_is_one_module(store_target, fake_adapter, cli, tmp_path, _isolated_home):
    proj = tmp_path / "proj"
    (proj / ".agents").mkdir(parents=True)
    (proj / ".agents" / "tasks.md").write_text("- ship the registry\n")
    assert "fake-harness" in adapters.names()
    # ledger hook <name> <event>: parsed, handled by the same engine, rendered by the adapter
    p = run_hook("Start", json.dumps({"id": "s1", "cwd": str(proj)}).encode(), args=["fake-harness", "Start"],
                 env={"LEDGER_DB": store_target})
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode().startswith("FAKE:## Session State"), (p.stdout, (Path(_isolated_home) / "hook.log").read_text()
                                                                   if (Path(_isolated_home) / "hook.log").exists() else "")
    # ledger install / uninstall <name>
    rc, out, err = cli("install", "fake-harness", "--dir", str(proj), "--no-distill", db=None)
    assert rc == 0 and f"fake installed in {proj}" in out, err
    rc, out, err = cli("uninstall", "fake-harness", "--dir", str(proj), "--json", db=None)
    assert rc == 0 and json.loads(out)["removed"] == 1, err


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini"])
def test_each_hook_harness_probe_is_a_finished_read_in_its_own_shape(name, tmp_path):
    # ledger doctor sends the probe through `ledger hook <name> <event>`: it must parse
    # with the harness's own adapter, as a finished tool call naming the file.
    adapter = adapters.get(name)
    target = tmp_path / "notes.txt"
    event_name, payload = adapter.probe(str(tmp_path), str(target))
    events = [adapter.parse_payload(json.dumps(payload).encode(), event_name)]
    if hasattr(adapter, "expand"):
        events = adapter.expand(events[0])
    post = [e for e in events if e.kind == "post_tool"]
    assert post and str(target) in json.dumps(post[0].tool.input) and post[0].tool.output, post


def test_opencode_probe_is_a_tool_execute_after():
    event_name, event = adapters.get("opencode").probe("/p", "/p/notes.txt")
    assert event_name is None and event["hook"] == "tool.execute.after"
    assert event["input"]["args"]["filePath"] == "/p/notes.txt"
