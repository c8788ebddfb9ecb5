"""The deterministic distiller (no LLM): file outlines with size and hash, a command's
last outcome, and the test/build commands that worked; never "x starts with: ...".
Command outputs below are shaped like the real ones (ExUnit, pytest, go, cargo, git)."""

from __future__ import annotations

import hashlib
import json

import pytest

from ledger.watcher.fallback import command_fact, definitions, findings, normalise_command, outline_fact

ELIXIR = """defmodule Spotter.Services.SessionRegistry do
  @moduledoc "Maps sessions to panes."
  use Agent

  def start_link(_opts) do
    Agent.start_link(fn -> %{} end, name: __MODULE__)
  end

  def register(pane_id, session_id), do: Agent.update(__MODULE__, &Map.put(&1, pane_id, session_id))
  def register(nil, _), do: :ok

  defp key(x), do: x
end
"""
PYTHON = '''"""Doc."""
import os

CONST = 1


class Store:
    def get(self):
        return 1


async def fetch(url):
    return url


def main():
    pass
'''
TS = """import x from "y";
export interface Options { a: number }
export default function render(o: Options) { return o }
const helper = () => 1;
export class View {}
"""


def test_outlines_list_top_level_definitions_with_lines_size_and_hash():
    fact = outline_fact("/p/lib/session_registry.ex", ELIXIR, "lib/session_registry.ex")
    sha = hashlib.sha256(ELIXIR.encode()).hexdigest()[:12]
    assert fact == (f"lib/session_registry.ex (13 lines, {len(ELIXIR.encode()):,} bytes, sha256 {sha}) top-level: "
                    "defmodule Spotter.Services.SessionRegistry (1), def start_link (5), def register (9), defp key (12)")
    assert definitions("/p/app.py", PYTHON) == [(7, "class Store"), (12, "async def fetch"), (16, "def main")]
    assert definitions("/p/view.ts", TS) == [(2, "interface Options"), (3, "function render"), (4, "const helper"),
                                              (5, "class View")]
    assert definitions("/p/README.md", "# Title\n\n```\n# not a heading\n```\n## Usage\n") == [(1, "Title"), (6, "Usage")]
    assert definitions("/p/cfg.toml", "[tool.x]\na = 1\n[project]\n") == [(1, "tool.x"), (3, "project")]
    assert definitions("/p/pkg.json", '{"name": "x", "scripts": {}}') == [(1, "key name"), (1, "key scripts")]


def test_outlines_stay_within_the_fact_budget_and_say_how_many_were_left_out():
    big = "".join(f"def function_number_{i}():\n    pass\n" for i in range(80))
    fact = outline_fact("/p/big.py", big, "big.py")
    assert len(fact) <= 400 and fact.endswith("more") and "def function_number_0 (1)" in fact


def test_a_partial_read_names_its_lines_and_claims_no_size():
    fact = outline_fact("/p/a.py", "def f():\n    pass\n", "a.py", complete=False, first_line=40)
    assert fact == "a.py lines 40-41 top-level: def f (40)"


def test_files_without_definitions_give_no_trivia():
    assert outline_fact("/p/notes.txt", "hello\nworld\n", "notes.txt") is None
    assert outline_fact("/p/empty.py", "", "empty.py") is None


EXUNIT_FAIL = """Error: Exit code 2
Running ExUnit with seed: 477810, max_cases: 32

  1) test sync deduplicates messages (Spotter.Transcripts.Jobs.SyncTranscriptsTest)
     test/spotter/transcripts/jobs/sync_transcripts_test.exs:142
     Assertion with == failed

  2) test upsert (Spotter.Transcripts.MessageTest)
     test/spotter/transcripts/message_test.exs:31

Finished in 0.5 seconds (0.00s async, 0.5s sync)
13 tests, 2 failures"""
PYTEST_FAIL = """Exit code 1
============================= test session starts ==============================
collected 12 items

tests/test_a.py ..F.........
=========================== short test summary info ============================
FAILED tests/test_a.py::test_parse_dates - AssertionError: assert 1 == 2
========================= 1 failed, 11 passed in 0.31s ========================="""
GO_FAIL = """Exit code 1
--- FAIL: TestParse (0.00s)
    parse_test.go:12: got 1 want 2
FAIL
FAIL\texample.com/p\t0.004s"""


@pytest.mark.parametrize("command, output, ok, fact, topic", [
    ("mix test test/spotter/transcripts/jobs/sync_transcripts_test.exs 2>&1", EXUNIT_FAIL, False,
     "`mix test test/spotter/transcripts/jobs/sync_transcripts_test.exs` last failed (exit 2); 13 tests, 2 failures; "
     "failing: test/spotter/transcripts/jobs/sync_transcripts_test.exs:142, test/spotter/transcripts/message_test.exs:31",
     "test:outcome"),
    ("python -m pytest -q tests/test_a.py", PYTEST_FAIL, False,
     "`python -m pytest -q tests/test_a.py` last failed (exit 1); 1 failed, 11 passed in 0.31s; "
     "failing: tests/test_a.py::test_parse_dates", "test:outcome"),
    ("go test ./...", GO_FAIL, False, "`go test ./...` last failed (exit 1); FAIL example.com/p 0.004s; failing: TestParse", "test:outcome"),
    ("mix test 2>&1 | tail -5", "Finished in 4.4 seconds\n14 doctests, 373 tests, 0 failures", True,
     "`mix test` works (exit 0): 14 doctests, 373 tests, 0 failures.", "test:command"),
    # a pipeline through tail exits 0, but the summary says it failed
    ("mix test 2>&1 | tail -3", "Finished in 1 second\n40 tests, 3 failures", True,
     "`mix test` last failed (failed); 40 tests, 3 failures", "test:outcome"),
    ("mix compile --warnings-as-errors 2>&1", "Compiling 2 files (.ex)\nGenerated spotter app", True,
     "`mix compile --warnings-as-errors` works (exit 0).", "build:command"),
    ("MIX_ENV=test mix ecto.migrate", "Migrated 3 in 0.0s", True, "`MIX_ENV=test mix ecto.migrate` works (exit 0).",
     "build:command"),
    ("git push 2>&1", "Error: Exit code 128\nfatal: The current branch spotter-a0y has no upstream branch.", False,
     "`git push` last failed (exit 128); fatal: The current branch spotter-a0y has no upstream branch.", "error:command"),
])
def test_command_outcomes(command, output, ok, fact, topic):
    assert command_fact(command, output, ok) == (fact, topic)


@pytest.mark.parametrize("command, output", [
    ("git status", "On branch main\nnothing to commit"),  # not a runner: the agent sees it anyway
    ("ls -la", "total 0"),
    ("mix test", ""),  # started in the background, no output yet
    ("mix test", "[running in background as b7b23b2]"),
])
def test_successful_non_runner_or_empty_commands_give_nothing(command, output):
    assert command_fact(command, output, True) is None


def test_normalise_command():
    assert normalise_command("cd /x && mix test 2>&1 | tail -5") == "mix test"
    assert normalise_command("bd ready 2>/dev/null") == "bd ready"
    assert normalise_command("mix test\nmix credo") == "mix test"


def _row(step, tool, inp, output="", ok=1, files=(), tid=None):
    return {"step": step, "tool": tool, "input": json.dumps(inp), "output": output, "ok": ok, "files": list(files),
            "tool_use_id": tid or f"t{step}"}


def test_findings_keep_only_the_last_outcome_and_drop_outlines_of_files_edited_after(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("def f():\n    pass\n")
    b = tmp_path / "b.py"
    b.write_text("class B:\n    pass\n")
    rows = [
        _row(1, "Read", {"file_path": str(a)}, "def f():", files=[a.as_posix()]),
        _row(2, "Read", {"file_path": str(b)}, "class B:", files=[b.as_posix()]),
        _row(3, "Edit", {"file_path": str(b)}, "Updated", files=[b.as_posix()]),
        _row(4, "Bash", {"command": "mix test 2>&1"}, EXUNIT_FAIL, ok=0),
        _row(5, "Bash", {"command": "mix test 2>&1 | tail -2"}, "13 tests, 0 failures", ok=1),
        _row(6, "Bash", {"command": "git status"}, "clean", ok=1),
    ]
    out = findings(rows, cwd=str(tmp_path))
    facts = [f["fact"] for f in out]
    assert facts == [f"a.py (2 lines, 18 bytes, sha256 {hashlib.sha256(a.read_bytes()).hexdigest()[:12]}) top-level: def f (1)",
                     "`mix test` works (exit 0): 13 tests, 0 failures."]
    assert out[0]["files"] == [a.as_posix()] and out[0]["topic"] == "outline:a.py"
    assert not any("starts with" in f for f in facts)


def test_findings_use_the_uncut_content_when_the_caller_has_it():
    text = "".join(f"def f{i}():\n    pass\n" for i in range(300))  # longer than the stored cut
    rows = [_row(1, "Read", {"file_path": "/gone/m.py"}, text[:2000], files=["/gone/m.py"])]
    without = findings(rows, cwd="/gone")[0]["fact"]
    assert without.startswith("m.py lines 1-")  # only the stored part: partial, no hash
    full = findings(rows, cwd="/gone", full_read=lambda r: (text, 1, True))[0]["fact"]
    assert full.startswith("m.py (600 lines, ")


def test_backend_fallback_distills_live_through_the_detached_distiller(tmp_path, store_target):
    import time

    from conftest import spool_settled, store_sql
    from fakes.hooks import post_bash, post_read, run_hook

    proj = tmp_path / "proj"
    proj.mkdir()
    src = proj / "tool.py"
    src.write_text("import sys\n\n\ndef main():\n    return 0\n\n\nclass Runner:\n    pass\n")
    db = store_target
    env = {"LEDGER_DB": db, "LEDGER_LLM_BACKEND": "fallback", "LEDGER_DISTILL_EVERY": "2"}
    assert run_hook("PostToolUse", post_read(src, src.read_text(), cwd=proj), env=env).returncode == 0
    assert run_hook("PostToolUse", post_bash("python -m pytest -q", stdout="3 passed in 0.01s", cwd=proj),
                    env=env).returncode == 0
    spool_settled(db)  # on PostgreSQL the calls reach the store through the drain process, which creates its tables
    deadline = time.monotonic() + 20
    rows = []
    while time.monotonic() < deadline and len(rows) < 2:
        rows = store_sql(db, "SELECT topic, text FROM memories WHERE writer = 'watcher' ORDER BY seq")
        [(calls,)] = store_sql(db, "SELECT count(*) FROM llm_calls")
        time.sleep(0.2)
    assert [t for t, _ in rows] == ["outline:tool.py", "test:command"], rows
    assert rows[0][1].startswith("tool.py (9 lines, ") and rows[0][1].endswith("top-level: def main (4), class Runner (8)")
    assert rows[1][1] == "`python -m pytest -q` works (exit 0): 3 passed in 0.01s."
    assert calls == 0  # no LLM was called, so none is accounted
