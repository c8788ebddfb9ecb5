"""The watcher engine and the distiller on real SQLite files: observation, per-file
injection, escalation (docs/originals.md §2.8 with our per-session/per-file fixes), budgets, stale
facts, retrieval accounting, the distillation lease, findings as claims, corroboration,
the token budget and LLM accounting.

Hook events go through :func:`ledger.harness.runner.handle_payload` (the exact code a
hook process runs) with a chosen ``now``; the persistence test runs real hook
processes."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from conftest import BOTH_ENGINES, T0
from fakes.hooks import (
    cfg_with,
    context_of,
    handle,
    payload,
    post_bash,
    post_read,
    pre_bash,
    pre_read,
    run_hook,
    wait_drained,
)

from ledger.filekeys import file_key
from ledger.store import watch as W
from ledger.watcher.distill import distill_session
from ledger.watcher.engine import Engine

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)

MIN = 60_000
GENTLE = "📋 KNOWN FACTS"
ESCALATED = "LEDGER ESCALATION"


@pytest.fixture
def proj(tmp_path):
    p = tmp_path / "proj"
    (p / "x").mkdir(parents=True)
    (p / "x" / "model.ckpt").write_bytes(b"\x89CKPT" + bytes(range(200)))
    (p / "x" / "model.ckpt.bak").write_bytes(b"old")
    (p / "data.csv").write_text("a,b\n1,2\n")
    (p / "other.py").write_text("print(1)\n")
    return p


def fact(led, text: str, *paths, agent: str = "alice") -> str:
    return led.remember(text, cluster="code", agent=agent, files=[file_key(p) for p in paths]).memory.id


class Hook:
    """Deliver payloads to one store at an advancing clock."""

    def __init__(self, db, cfg=None, spawn=None):
        self.db, self.cfg, self.spawn = db, cfg, spawn
        self.now = T0 + MIN

    def __call__(self, p: dict) -> str:
        self.now += 1000
        return handle(p, db=self.db, now=self.now, cfg=self.cfg, spawn=self.spawn)

    def ctx(self, p: dict) -> str:
        return context_of(self(p))

    def step(self, p: dict) -> str:
        """One whole tool call (its own step): PreToolUse, then PostToolUse; returns what
        PreToolUse injected."""
        out = self(p)
        self({**p, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "stderr": ""}})
        return context_of(out)


def level(ctx: str) -> str:
    return "escalated" if ESCALATED in ctx else "gentle" if GENTLE in ctx else "quiet" if ctx == "" else "?"


# ---------------------------------------------------------------- observation


def test_every_tool_call_is_an_observation_bounded_redacted_with_resolved_files(ledger, store_target, proj):
    hook = Hook(store_target)
    secret = "ghp_" + "A1b2C3d4" * 5
    big = "\n".join(f"row {i}" for i in range(20_000)) + f"\nGITHUB_TOKEN={secret}\nthe end"
    assert hook(post_bash("cat data.csv && head x/model.ckpt", stdout=big, cwd=proj)) == ""
    assert hook(post_read(proj / "other.py", "print(1)", cwd=proj)) == ""
    hook(post_bash(f"curl -H 'Authorization: Bearer {secret}' https://x.test", stdout="ok", cwd=proj))

    rows = W.observations(ledger.store._conn, "claude-code:s1")
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["tool"] for r in rows] == ["Bash", "Read", "Bash"]
    first = rows[0]
    assert len(first["output"]) <= 2000 and "chars cut" in first["output"]
    assert first["output"].startswith("row 0") and first["output"].rstrip().endswith("the end")
    assert secret not in first["output"] and "[REDACTED" in first["output"]
    assert sorted(first["files"]) == sorted([str(proj / "data.csv"), str(proj / "x" / "model.ckpt")])
    assert rows[1]["files"] == [str(proj / "other.py")]
    assert secret not in rows[2]["input"] and "REDACTED" in rows[2]["input"]
    assert first["ok"] == 1 and first["duration_ms"] == 12
    assert W.session(ledger.store._conn, "claude-code:s1")["steps"] == 3


def test_observation_of_a_huge_output_stays_fast(ledger, store_target, proj):
    hook = Hook(store_target)
    # 12 MB of tool output full of words that trigger the secret patterns
    huge = "password=abc token: sk-123456789012345678901234 ghp_ eyJ AKIA\n" * 200_000
    t0 = time.perf_counter()
    hook(post_bash("cat big.log", stdout=huge, cwd=proj))
    assert time.perf_counter() - t0 < 1.5
    assert len(W.observations(ledger.store._conn, "claude-code:s1")[0]["output"]) <= 2000


# ---------------------------------------------------------------- injection


def test_injection_only_for_facts_keyed_to_the_exact_file(ledger, store_target, proj):
    ckpt = proj / "x" / "model.ckpt"
    fid = fact(ledger, "model.ckpt is a safetensors file with 124M parameters", ckpt)
    hook = Hook(store_target)
    assert hook(pre_read(proj / "x" / "model.ckpt.bak", cwd=proj)) == ""
    assert hook(pre_bash("cat x/model.ckpt.bak | head", cwd=proj)) == ""
    assert hook(pre_bash("ls x", cwd=proj)) == ""
    assert hook(pre_read(proj / "other.py", cwd=proj)) == ""
    out = hook(pre_bash("xxd x/model.ckpt | head -5", cwd=proj))
    ctx = context_of(out)
    assert level(ctx) == "gentle" and fid in ctx and "safetensors" in ctx
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in json.loads(out)["hookSpecificOutput"]  # user's permission flow untouched


def test_injection_for_a_file_named_inside_a_one_line_program(ledger, store_target, proj):
    # README: facts about a binary file reach the agent through shell commands on it,
    # `python -c ...` included: the file is a string literal of the program.
    fid = fact(ledger, "model.ckpt is a safetensors file with 124M parameters", proj / "x" / "model.ckpt")
    ctx = Hook(store_target).ctx(pre_bash("""python3 -c "import torch; torch.load('x/model.ckpt')" """, cwd=proj))
    assert fid in ctx and "safetensors" in ctx
    assert Hook(store_target).ctx({**pre_bash("python3 -c \"print('x/model.ckpt.bak')\"", cwd=proj),
                                   "session_id": "s-other"}) == ""


def test_injection_works_for_read_grep_glob_edit_and_relative_paths(ledger, store_target, proj):
    fact(ledger, "data.csv has two columns a and b", proj / "data.csv")
    for i, p in enumerate([
        pre_read(proj / "data.csv", cwd=proj),
        payload("PreToolUse", tool_name="Grep", tool_input={"pattern": "a", "path": "data.csv"}, cwd=proj),
        payload("PreToolUse", tool_name="Edit", tool_input={"file_path": str(proj / "data.csv"), "old_string": "a",
                                                             "new_string": "c"}, cwd=proj),
        pre_bash("wc -l ./data.csv", cwd=proj),
    ]):
        ctx = Hook(store_target).ctx({**p, "session_id": f"s-{i}"})
        assert "two columns" in ctx, p["tool_name"]


def test_non_file_tools_are_neither_injected_nor_counted(ledger, store_target, proj):
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    hook = Hook(store_target)
    assert hook(payload("PreToolUse", tool_name="WebFetch", tool_input={"url": str(proj / "data.csv")}, cwd=proj)) == ""
    assert hook(payload("PreToolUse", tool_name="TodoWrite", tool_input={"file_path": str(proj / "data.csv")}, cwd=proj)) == ""
    assert level(hook.ctx(pre_read(proj / "data.csv", cwd=proj))) == "gentle"


# ---------------------------------------------------------------- escalation


@pytest.mark.parametrize("threshold,expected", [
    (4, ["gentle", "quiet", "quiet", "escalated", "escalated", "escalated"]),
    (1, ["gentle", "escalated", "escalated"]),  # never on the first showing
    (2, ["gentle", "escalated", "escalated"]),
    (3, ["gentle", "quiet", "escalated", "escalated"]),
])
def test_escalation_ladder(ledger, store_target, proj, threshold, expected):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    hook = Hook(store_target, cfg=cfg_with(escalate_after=threshold))
    got = []
    for _ in expected:
        got.append(level(hook.ctx(pre_read(proj / "x" / "model.ckpt", cwd=proj))))
        hook(post_read(proj / "x" / "model.ckpt", "…", cwd=proj))
    assert got == expected


def test_escalated_message_counts_times_and_steps(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    hook = Hook(store_target)
    ctxs = []
    for _ in range(5):
        ctxs.append(hook.ctx(pre_bash("xxd x/model.ckpt", cwd=proj)))
        hook(post_bash("xxd x/model.ckpt", stdout="00000000: 89", cwd=proj))
    # Times shown, not times asked: step 0 showed them (gentle), 1 and 2 were quiet.
    assert "shown these facts 2 times across 3 steps" in ctxs[3]
    assert "shown these facts 3 times across 4 steps" in ctxs[4]
    assert "ESTABLISHED FACTS" in ctxs[4] and "fp16" in ctxs[4]


def test_counters_are_per_session_and_per_file(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    hook = Hook(store_target, cfg=cfg_with(escalate_after=2))

    def shown(p: dict) -> str:
        # one tool call = one step: PreToolUse, then the tool ran (PostToolUse)
        lvl = level(hook.ctx(p))
        hook({**p, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "stderr": ""}})
        return lvl

    ckpt = lambda s: pre_read(proj / "x" / "model.ckpt", cwd=proj, session=s)  # noqa: E731
    csv = lambda s: pre_read(proj / "data.csv", cwd=proj, session=s)  # noqa: E731
    assert shown(ckpt("A")) == "gentle"
    assert shown(ckpt("A")) == "escalated"
    # another file in the same session starts its own ladder
    assert shown(csv("A")) == "gentle"
    # another session starts from scratch for the same file
    assert shown(ckpt("B")) == "gentle"
    assert shown(csv("A")) == "escalated"
    assert shown(ckpt("B")) == "escalated"
    rows = {(r["session"], r["path"]): r["injections"] for r in ledger.store._conn.execute("SELECT * FROM watch_escalation")}
    assert rows == {("claude-code:A", str(proj / "x" / "model.ckpt")): 2, ("claude-code:A", str(proj / "data.csv")): 2,
                    ("claude-code:B", str(proj / "x" / "model.ckpt")): 2}


def test_a_call_touching_two_files_shows_the_highest_level(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    hook = Hook(store_target, cfg=cfg_with(escalate_after=2))
    hook(pre_read(proj / "x" / "model.ckpt", cwd=proj))
    hook(post_read(proj / "x" / "model.ckpt", "…", cwd=proj))
    ctx = hook.ctx(pre_bash("cat data.csv x/model.ckpt", cwd=proj))
    assert level(ctx) == "escalated" and "fp16" in ctx and "two columns" in ctx


def test_counters_persist_across_separate_hook_processes(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    ledger.close()
    env = {"LEDGER_DB": str(store_target)}
    got = []
    for i in range(5):
        p = run_hook("PreToolUse", pre_read(proj / "x" / "model.ckpt", cwd=proj), env=env)
        assert p.returncode == 0 and p.stderr == b""
        got.append(level(context_of(p.stdout.decode())))
        p = run_hook("PostToolUse", post_read(proj / "x" / "model.ckpt", "x", cwd=proj), env=env)
        assert p.returncode == 0 and p.stdout == b""
    assert got == ["gentle", "quiet", "quiet", "escalated", "escalated"]


def test_a_newer_fact_for_the_file_resets_its_counter(ledger, store_target, proj, clock):
    ckpt = proj / "x" / "model.ckpt"
    fact(ledger, "model.ckpt stores weights in fp16", ckpt)
    hook = Hook(store_target, cfg=cfg_with(escalate_after=2))
    assert level(hook.step(pre_read(ckpt, cwd=proj))) == "gentle"
    assert level(hook.step(pre_read(ckpt, cwd=proj))) == "escalated"
    fact(ledger, "model.ckpt header is 8 bytes of little-endian length", ckpt)
    ctx = hook.step(pre_read(ckpt, cwd=proj))
    assert level(ctx) == "gentle" and "little-endian" in ctx and "fp16" in ctx
    assert level(hook.step(pre_read(ckpt, cwd=proj))) == "escalated"
    # a new fact about ANOTHER file does not reset this one
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    assert level(hook.step(pre_read(ckpt, cwd=proj))) == "escalated"


def test_a_distillation_that_adds_findings_resets_the_sessions_counters(ledger, store_target, proj):
    ckpt = proj / "x" / "model.ckpt"
    fact(ledger, "model.ckpt stores weights in fp16", ckpt)
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    hook = Hook(store_target, cfg=cfg_with(escalate_after=2))
    for s in ("A", "B"):
        hook.step(pre_read(ckpt, cwd=proj, session=s))
        assert level(hook.step(pre_read(ckpt, cwd=proj, session=s))) == "escalated"
    hook(post_bash("python -c 'import this'", stdout="Beautiful is better than ugly.", cwd=proj, session="A"))
    key = "claude-code:A"
    assert W.try_lease(ledger.store._conn, key, "o1", T0)
    answer = json.dumps([{"fact": "The Zen of Python starts with 'Beautiful is better than ugly'", "topic": "python:zen",
                          "files": []}])
    r = distill_session(ledger, key, "o1", cfg_with(), answer_fn=lambda prompt: (answer, 50, 10), log=lambda m: None)
    assert r["added"] == 1
    assert level(hook.step(pre_read(ckpt, cwd=proj, session="A"))) == "gentle"
    assert level(hook.step(pre_read(ckpt, cwd=proj, session="B"))) == "escalated"  # other sessions untouched
    # a distillation that only corroborates does not reset
    hook(post_bash("python -c 'import this'", stdout="Beautiful is better than ugly.", cwd=proj, session="A"))
    hook.step(pre_read(ckpt, cwd=proj, session="A"))
    assert W.try_lease(ledger.store._conn, key, "o2", T0 + 2)
    r = distill_session(ledger, key, "o2", cfg_with(), answer_fn=lambda prompt: (answer, 50, 10), log=lambda m: None)
    assert r == {**r, "added": 0, "corroborated": 1}
    assert level(hook.step(pre_read(ckpt, cwd=proj, session="A"))) == "escalated"


def test_deny_on_escalation_denies_the_pre_tool_call(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    hook = Hook(store_target, cfg=cfg_with(escalate_after=2, deny_on_escalation=True))
    first = json.loads(hook(pre_read(proj / "x" / "model.ckpt", cwd=proj)))
    assert "permissionDecision" not in first["hookSpecificOutput"]
    # a parallel call of the same step is the same showing: nothing new, never denied
    assert hook(pre_read(proj / "x" / "model.ckpt", cwd=proj)) == ""
    hook(post_read(proj / "x" / "model.ckpt", "…", cwd=proj))
    second = json.loads(hook(pre_read(proj / "x" / "model.ckpt", cwd=proj)))["hookSpecificOutput"]
    assert second["permissionDecision"] == "deny"
    assert ESCALATED in second["permissionDecisionReason"] and "fp16" in second["permissionDecisionReason"]
    # and without the option the escalated call is not denied
    hook2 = Hook(store_target, cfg=cfg_with(escalate_after=2))
    hook2.step(pre_read(proj / "x" / "model.ckpt", cwd=proj, session="other"))
    out = json.loads(hook2(pre_read(proj / "x" / "model.ckpt", cwd=proj, session="other")))["hookSpecificOutput"]
    assert ESCALATED in out["additionalContext"] and "permissionDecision" not in out


def test_deny_on_escalation_from_the_environment(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    ledger.close()
    env = {"LEDGER_DB": str(store_target), "LEDGER_ESCALATE_AFTER": "1", "LEDGER_DENY_ON_ESCALATION": "1"}
    p = run_hook("PreToolUse", pre_read(proj / "x" / "model.ckpt", cwd=proj), env=env)
    # never on the first showing: the agent has not had a chance to act yet
    assert "permissionDecision" not in json.loads(p.stdout)["hookSpecificOutput"]
    run_hook("PostToolUse", post_read(proj / "x" / "model.ckpt", "x", cwd=proj), env=env)
    p = run_hook("PreToolUse", pre_read(proj / "x" / "model.ckpt", cwd=proj), env=env)
    assert json.loads(p.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# ---------------------------------------------------------------- budget, staleness, accounting


def test_injection_budget_at_most_8_facts_and_about_1200_chars(ledger, store_target, proj):
    ckpt = proj / "x" / "model.ckpt"
    # Twelve facts that do not disagree (numbered variants would be conflict candidates,
    # marked "disputed": test_watcher_settled.py covers those).
    for w in ("embedding", "attention", "feedforward", "layernorm", "rotary", "vocabulary", "optimizer",
              "scheduler", "dropout", "residual", "projection", "tokenizer"):
        fact(ledger, f"model.ckpt keeps the {w} tensors in a block of their own", ckpt)
    ctx = Hook(store_target).ctx(pre_read(ckpt, cwd=proj))
    facts = [l for l in ctx.splitlines() if l.startswith("  - [")]
    assert len(facts) == 8
    assert "(+4 more facts left out" in ctx
    # long facts: the char budget binds before the count does
    for i in range(6):
        fact(ledger, f"data.csv long note {i}: " + "lorem ipsum dolor sit amet " * 12, proj / "data.csv")
    ctx = Hook(store_target).ctx(pre_read(proj / "data.csv", cwd=proj))
    facts = [l for l in ctx.splitlines() if l.startswith("  - [")]
    assert 1 <= len(facts) < 6
    assert len(ctx) <= 1200 + 120  # the budget plus the "+N more" note
    assert f"(+{6 - len(facts)} more fact" in ctx
    # one fact longer than the whole budget is cut, not dropped
    fact(ledger, "other.py: " + "very long explanation " * 100, proj / "other.py")
    ctx = Hook(store_target).ctx(pre_read(proj / "other.py", cwd=proj))
    assert len(ctx) <= 1200 + 120 and ctx.rstrip().endswith("…")


def test_a_file_changed_since_the_fact_was_learned_is_marked_may_be_stale(ledger, store_target, proj):
    ckpt = proj / "x" / "model.ckpt"
    fact(ledger, "model.ckpt stores weights in fp16", ckpt)
    fact(ledger, "data.csv has two columns", proj / "data.csv")
    fact(ledger, "other.py prints one", proj / "other.py")
    fact(ledger, "gone.txt is empty", proj / "gone.txt")  # no file state recorded: never stale
    hook = Hook(store_target)
    assert "may be stale" not in hook.ctx(pre_read(ckpt, cwd=proj, session="a"))
    # same content, new mtime: the hash says it did not change
    os.utime(ckpt, ns=(time.time_ns() + 5 * 10**9, time.time_ns() + 5 * 10**9))
    assert "may be stale" not in hook.ctx(pre_read(ckpt, cwd=proj, session="b"))
    # same size, different content
    data = bytearray(ckpt.read_bytes())
    data[10] ^= 0xFF
    ckpt.write_bytes(bytes(data))
    assert "may be stale" in hook.ctx(pre_read(ckpt, cwd=proj, session="c"))
    # different size
    (proj / "data.csv").write_text("a,b,c\n1,2,3\n")
    assert "may be stale" in hook.ctx(pre_read(proj / "data.csv", cwd=proj, session="d"))
    # deleted
    (proj / "other.py").unlink()
    assert "may be stale" in hook.ctx(pre_bash("cat other.py", cwd=proj, session="e"))
    assert "may be stale" not in hook.ctx(pre_read(proj / "gone.txt", cwd=proj, session="f"))


@pytest.mark.parametrize("agent", [None, "claude-main"])
def test_an_injection_counts_as_a_use_but_the_agent_is_no_reader(ledger, store_target, proj, monkeypatch, agent):
    # docs/store.md "Strength": being handed a fact is a use (hits, last read), not a
    # confirmation (readers feed the corroboration factor).
    if agent:
        monkeypatch.setenv("LEDGER_AGENT", agent)
    fid = fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    before = ledger.get(fid)
    hook = Hook(store_target)
    hook(pre_read(proj / "x" / "model.ckpt", cwd=proj))
    after = ledger.get(fid)
    assert after.hits == before.hits + 1
    assert list(after.readers) == ["alice"] and after.factors.corroborated == 0
    assert after.last_read_at == hook.now
    # a quiet call (nothing injected) is not a retrieval
    hook(pre_read(proj / "x" / "model.ckpt", cwd=proj))
    assert ledger.get(fid).hits == after.hits
    inj = ledger.store._conn.execute("SELECT level, memory_ids, paths FROM injections").fetchall()
    assert [(r[0], json.loads(r[1]), json.loads(r[2])) for r in inj] == [("gentle", [fid], [str(proj / "x" / "model.ckpt")])]


def test_watcher_disabled_injects_nothing_but_still_observes(ledger, store_target, proj):
    fact(ledger, "model.ckpt stores weights in fp16", proj / "x" / "model.ckpt")
    hook = Hook(store_target, cfg=cfg_with(enabled=False))
    assert hook(pre_read(proj / "x" / "model.ckpt", cwd=proj)) == ""
    hook(post_read(proj / "x" / "model.ckpt", "x", cwd=proj))
    assert W.session(ledger.store._conn, "claude-code:s1")["steps"] == 1


# ---------------------------------------------------------------- distillation


def _observe(hook, proj, n, session="s1"):
    for i in range(n):
        hook(post_bash(f"xxd -l 16 x/model.ckpt # {i}", stdout="00000000: 8943 4b50 5400 0102", cwd=proj, session=session))


def test_maybe_distill_spawns_every_n_steps_with_one_lease(ledger, store_target, proj):
    spawned = []
    hook = Hook(store_target, cfg=cfg_with(every=3, llm_backend="command"), spawn=lambda k, o: spawned.append((k, o)))
    _observe(hook, proj, 2)
    assert spawned == []
    _observe(hook, proj, 1)
    assert len(spawned) == 1 and spawned[0][0] == "claude-code:s1"
    _observe(hook, proj, 3)  # lease still held: no second spawn
    assert len(spawned) == 1
    W.release_lease(ledger.store._conn, "claude-code:s1", spawned[0][1], 3)
    _observe(hook, proj, 1)  # 4 pending >= 3 and the lease is free
    assert len(spawned) == 2


def test_no_llm_configured_means_no_distillation(ledger, store_target, proj):
    spawned = []
    hook = Hook(store_target, cfg=cfg_with(every=1), spawn=lambda k, o: spawned.append(k))
    _observe(hook, proj, 3)
    assert spawned == []


def test_two_concurrent_maybe_distill_spawn_once(store_target, proj, ledger):
    hook = Hook(store_target)  # no LLM configured: observing takes no lease
    _observe(hook, proj, 2)
    from ledger.store.watch import open_store

    spawned, barrier = [], threading.Barrier(8)

    def worker():
        conn = open_store(str(store_target))
        try:
            eng = Engine(conn, cfg_with(every=1, llm_backend="command"), T0 + 10 * MIN, spawn_distill=lambda k, o: spawned.append(o))
            barrier.wait()
            eng.maybe_distill("claude-code:s1")
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spawned) == 1


def test_concurrent_hook_processes_start_one_distiller(ledger, store_target, proj, tmp_path):
    """Six real PostToolUse hook processes at once, each due for distillation: the lease
    lets exactly one of them start a (slow) distiller."""
    import shlex
    import sys
    from pathlib import Path

    ledger.close()
    calls = tmp_path / "calls.txt"
    cli = Path(__file__).parent / "fakes" / "llm_cli.py"
    cmd = " ".join(shlex.quote(x) for x in (sys.executable, str(cli), "--append-to", str(calls), "--sleep", "3"))
    env = {"LEDGER_DB": str(store_target), "LEDGER_DISTILL_EVERY": "1", "LEDGER_LLM_BACKEND": "command", "LEDGER_LLM_COMMAND": cmd}
    run_hook("PostToolUse", post_bash("ls", stdout="warm", cwd=proj, session="other"), env={**env, "LEDGER_LLM_BACKEND": "none"})
    wait_drained(store_target)  # PostgreSQL: the warm-up's drain process (its settings: no LLM) is gone
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(
        run_hook("PostToolUse", post_bash(f"cat data.csv # {i}", stdout="a,b", cwd=proj), env=env))) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.returncode for p in results] == [0] * 6 and all(p.stdout == b"" for p in results)
    wait_drained(store_target)
    deadline = time.monotonic() + 30
    while not calls.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # any second distiller would have started by now
    assert calls.read_text().count("\n") == 1
    from ledger.store.watch import open_store

    conn = open_store(str(store_target))
    try:
        assert W.session(conn, "claude-code:s1")["steps"] == 6  # and no observation was lost
        deadline = time.monotonic() + 15
        while W.session(conn, "claude-code:s1")["lease_owner"] is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert W.session(conn, "claude-code:s1")["lease_owner"] is None
    finally:
        conn.close()


def test_an_expired_lease_can_be_taken_again(ledger):
    conn = ledger.store._conn
    W.touch_session(conn, "k", harness="h", session_id="k", project="/p", cwd="/p", agent="a", transcript_path=None, now=T0)
    assert W.try_lease(conn, "k", "one", T0)
    assert not W.try_lease(conn, "k", "two", T0 + 1000)
    assert W.try_lease(conn, "k", "three", T0 + W.LEASE_MS + 1)


def _distill(ledger, key, answer, cfg=None, tokens=(120, 30), logs=None):
    owner = f"o{time.monotonic_ns()}"
    assert W.try_lease(ledger.store._conn, key, owner, ledger.clock())
    return distill_session(ledger, key, owner, cfg or cfg_with(),
                           answer_fn=lambda prompt: (answer if isinstance(answer, str) else json.dumps(answer), *tokens),
                           log=(logs.append if logs is not None else (lambda m: None)))


def test_findings_become_watcher_claims_with_provenance_topic_and_file_keys(ledger, store_target, proj):
    hook = Hook(store_target)
    _observe(hook, proj, 3)
    ckpt = proj / "x" / "model.ckpt"
    prompts = []
    answer = [{"fact": "model.ckpt starts with the magic bytes 89 43 4b 50", "topic": "file-format:model.ckpt",
               "files": [str(ckpt)]},
              {"fact": "The relative path x/model.ckpt resolves against the session cwd", "topic": "paths",
               "files": ["x/model.ckpt"]}]
    owner = "own"
    assert W.try_lease(ledger.store._conn, "claude-code:s1", owner, T0)

    def answer_fn(prompt):
        prompts.append(prompt)
        return json.dumps(answer), 321, 45

    r = distill_session(ledger, "claude-code:s1", owner, cfg_with(), answer_fn=answer_fn, log=lambda m: None)
    assert r == {"observations": 3, "findings": 2, "added": 2, "corroborated": 0, "rejected": 0, "skipped": None}
    assert "xxd -l 16 x/model.ckpt" in prompts[0] and "8943 4b50" in prompts[0]
    rows = ledger.store._conn.execute("SELECT id FROM memories WHERE writer = 'watcher' ORDER BY seq").fetchall()
    mems = [ledger.get(r[0]) for r in rows]
    assert len(mems) == 2
    m = mems[0]
    assert m.writer == "watcher" and m.cluster_id == "code" and m.topic == "file-format:model.ckpt"
    assert "claude-code:s1" in m.provenance and "steps 1-3" in m.provenance
    (fk,) = m.files
    st = ckpt.stat()
    import hashlib

    assert (fk.path, fk.size, fk.mtime_ms, fk.sha256) == (str(ckpt), st.st_size, st.st_mtime_ns // 1_000_000,
                                                         hashlib.sha256(ckpt.read_bytes()).hexdigest())
    assert mems[1].files[0].path == str(ckpt)
    s = W.session(ledger.store._conn, "claude-code:s1")
    assert s["distilled_step"] == 3 and s["lease_owner"] is None and s["lease_until"] == 0
    calls = [dict(r) for r in ledger.store._conn.execute("SELECT * FROM llm_calls")]
    assert len(calls) == 1 and calls[0]["prompt_tokens"] == 321 and calls[0]["completion_tokens"] == 45
    assert calls[0]["ok"] == 1 and calls[0]["session"] == "claude-code:s1"
    # and the next distillation sees only newer observations
    _observe(hook, proj, 2)
    r = _distill(ledger, "claude-code:s1", [])
    assert r["observations"] == 2 and r["findings"] == 0
    assert W.session(ledger.store._conn, "claude-code:s1")["distilled_step"] == 5


def test_distilled_facts_are_injected_on_the_next_touch(ledger, store_target, proj):
    hook = Hook(store_target)
    _observe(hook, proj, 2)
    _distill(ledger, "claude-code:s1", [{"fact": "model.ckpt has a 5-byte magic 89 CKPT", "topic": "file-format:model.ckpt",
                                          "files": ["x/model.ckpt"]}])
    ctx = hook.ctx(pre_bash("xxd x/model.ckpt", cwd=proj))
    assert "5-byte magic" in ctx


def test_a_near_duplicate_finding_corroborates_instead_of_adding(ledger, store_target, proj):
    # docs/store.md "Corroboration": the confirming agent becomes a reader, once.
    ckpt = proj / "x" / "model.ckpt"
    fid = fact(ledger, "model.ckpt stores its weights in fp16 precision", ckpt)
    hook = Hook(store_target)
    _observe(hook, proj, 2)
    before = ledger.get(fid)
    r = _distill(ledger, "claude-code:s1", [{"fact": "model.ckpt stores its weights in FP16 precision.", "topic": "dtype",
                                              "files": [str(ckpt)]}])
    assert (r["added"], r["corroborated"]) == (0, 1)
    after = ledger.get(fid)
    assert set(after.readers) == {"alice", "watcher"} and after.strength > before.strength
    assert after.hits == before.hits and after.source_count == before.source_count
    assert ledger.events(1)[0].op == "memory.corroborate" and "claude-code:s1" in ledger.events(1)[0].detail
    assert ledger.store._conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    # the same agent saying it again adds nothing more
    _observe(hook, proj, 1)
    r = _distill(ledger, "claude-code:s1", [{"fact": "model.ckpt stores its weights in fp16 precision", "topic": "dtype",
                                              "files": [str(ckpt)]}])
    assert r["corroborated"] == 1 and ledger.get(fid).strength == after.strength
    # a fact keyed to no file is compared with the cluster's claims keyed to no file
    fid2 = fact(ledger, "The integration tests need a running redis on port 6379")
    _observe(hook, proj, 1)
    r = _distill(ledger, "claude-code:s1", [{"fact": "the integration tests need a running Redis on port 6379", "topic": "t"}])
    assert r["corroborated"] == 1 and set(ledger.get(fid2).readers) == {"alice", "watcher"}
    # a genuinely different fact is added
    _observe(hook, proj, 1)
    r = _distill(ledger, "claude-code:s1", [{"fact": "model.ckpt is 205 bytes long", "topic": "size", "files": [str(ckpt)]}])
    assert r["added"] == 1


def _read_file(hook, proj, path, session="s1"):
    hook(post_read(path, path.read_text(), cwd=proj, session=session))


def _claims(ledger):
    return [(m.text, [f.path for f in m.files]) for m in ledger.search("", kind="claim", sort="created", direction="asc", limit=100).hits]


@pytest.mark.parametrize("old,new", [
    ("app.cfg sets PORT to 8080", "app.cfg sets PORT to 9090"),  # the example: a number
    ("app.cfg pins the linter to ruff 0.4.1", "app.cfg pins the linter to ruff 0.5.0"),  # a version
    ("app.cfg points the entry point at src/app/main.py", "app.cfg points the entry point at lib/app/main.py"),  # a path
    ("app.cfg names the on-call owner of the nightly backup job in the staging cluster as Alice",
     "app.cfg names the on-call owner of the nightly backup job in the staging cluster as Bob"),  # a name
    ("app.cfg schedules the release freeze for 2026-03-01", "app.cfg schedules the release freeze for 2026-03-15"),  # a date
])
def test_a_finding_that_changes_a_value_is_a_new_claim_proposed_against_the_old(ledger, store_target, proj, old, new):
    cfg_file = proj / "app.cfg"
    cfg_file.write_text("PORT=8080\n")
    hook = Hook(store_target)
    _read_file(hook, proj, cfg_file)
    r = _distill(ledger, "claude-code:s1", [{"fact": old, "topic": "config:app.cfg", "files": ["app.cfg"]}])
    assert r["added"] == 1
    cfg_file.write_text("PORT=9090\n")  # the file changes; the next finding says so
    _read_file(hook, proj, cfg_file)
    r = _distill(ledger, "claude-code:s1", [{"fact": new, "topic": "config:app.cfg", "files": ["app.cfg"]}])
    assert (r["added"], r["corroborated"]) == (1, 0)
    assert [t for t, _ in _claims(ledger)] == [old, new]  # nothing lost
    (cand,) = ledger.candidates(10)
    assert {cand.a.text, cand.b.text} == {old, new}


def test_many_findings_differing_only_in_numbers_stay_separate_claims(ledger, store_target, proj):
    hook = Hook(store_target)
    _observe(hook, proj, 1)
    ckpt = str(proj / "x" / "model.ckpt")
    findings = [{"fact": f"service {i} listens on port {8000 + i}", "topic": "ports", "files": [ckpt]} for i in range(25)]
    r = _distill(ledger, "claude-code:s1", findings[:13])  # a distillation keeps at most 20 findings
    _observe(hook, proj, 1)
    r2 = _distill(ledger, "claude-code:s1", findings[13:])
    assert (r["added"] + r2["added"], r["corroborated"] + r2["corroborated"]) == (25, 0)
    # and the same 25 without file keys, in a second session: still 25 more, none merged
    plain = [{"fact": f["fact"].replace("service", "worker"), "topic": "ports"} for f in findings]
    _observe(hook, proj, 1, session="s2")
    r = _distill(ledger, "claude-code:s2", plain[:13])
    _observe(hook, proj, 1, session="s2")
    r2 = _distill(ledger, "claude-code:s2", plain[13:])
    assert (r["added"] + r2["added"], r["corroborated"] + r2["corroborated"]) == (25, 0)
    assert len(_claims(ledger)) == 50


def test_near_duplicates_are_looked_for_only_under_the_same_file_keys(ledger, store_target, proj):
    hook = Hook(store_target)
    _observe(hook, proj, 1)
    other = proj / "other.py"
    fact(ledger, "The module reads its settings from the environment", other)  # another file
    fact(ledger, "The module reads its settings from the environment.")  # no file at all
    r = _distill(ledger, "claude-code:s1", [{"fact": "The module reads its settings from the environment",
                                              "topic": "settings", "files": ["x/model.ckpt"]}])
    assert (r["added"], r["corroborated"]) == (1, 0)
    assert len(_claims(ledger)) == 3


def test_malformed_findings_are_rejected_and_the_rest_kept(ledger, store_target, proj):
    hook = Hook(store_target)
    _observe(hook, proj, 2)
    answer = "Here you go:\n```json\n" + json.dumps([
        {"fact": "model.ckpt is little-endian", "topic": "endianness", "files": ["x/model.ckpt"]},
        {"fact": "", "topic": "empty"},
        {"topic": "no fact"},
        {"fact": 42, "topic": "number"},
        {"fact": "files is not a list", "topic": "t", "files": "x/model.ckpt"},
        {"fact": "no topic at all"},
        "just a string",
        None,
    ]) + "\n```\n"
    r = _distill(ledger, "claude-code:s1", answer)
    assert r["findings"] == 1 and r["added"] == 1
    texts = [t for (t,) in ledger.store._conn.execute("SELECT text FROM memories WHERE writer = 'watcher'")]
    assert texts == ["model.ckpt is little-endian"]
    for junk in ("I could not find anything", "", "{not json", "[1, 2, 3]"):
        _observe(hook, proj, 1)
        r = _distill(ledger, "claude-code:s1", junk)
        assert r["findings"] == 0 and r["added"] == 0
    assert ledger.store._conn.execute("SELECT count(*) FROM memories WHERE writer = 'watcher'").fetchone()[0] == 1


def test_a_finding_the_store_refuses_does_not_lose_the_others(ledger, store_target, proj, monkeypatch):
    hook = Hook(store_target)
    _observe(hook, proj, 1)
    import ledger.watcher.distill as D

    monkeypatch.setattr(D, "DISTILL_CLUSTER", "no-such-cluster")
    logs = []
    r = _distill(ledger, "claude-code:s1", [{"fact": "a", "topic": "t"}, {"fact": "b b b", "topic": "t"}], logs=logs)
    assert r["rejected"] == 2 and r["added"] == 0
    assert any("rejected" in m for m in logs)
    assert W.session(ledger.store._conn, "claude-code:s1")["lease_owner"] is None


def test_the_daily_token_budget_stops_distillation_and_logs_it(ledger, store_target, proj, tmp_path):
    hook = Hook(store_target)
    _observe(hook, proj, 3)
    conn = ledger.store._conn
    W.record_llm_call(conn, session="earlier", backend="openai", model="m", prompt_tokens=900, completion_tokens=150,
                      ms=10, ok=True, error=None, now=T0 - 1000)
    marker = tmp_path / "called"
    cfg = cfg_with(llm_backend="command", llm_command=f"touch {marker}", llm_daily_token_budget=1000)
    owner = "o"
    assert W.try_lease(conn, "claude-code:s1", owner, T0)
    logs = []
    r = distill_session(ledger, "claude-code:s1", owner, cfg, log=logs.append)
    assert r["skipped"] == "daily token budget of 1000 spent"
    assert any("budget" in m for m in logs)
    assert not marker.exists()
    s = W.session(conn, "claude-code:s1")
    assert s["lease_owner"] is None and s["distilled_step"] == 0  # the steps wait for tomorrow
    # yesterday's tokens do not count
    conn.execute("UPDATE llm_calls SET at = ?", (T0 - 2 * 86_400_000,))
    assert W.try_lease(conn, "claude-code:s1", owner, T0)
    r = distill_session(ledger, "claude-code:s1", owner, cfg, log=logs.append)
    assert r["skipped"] is None and marker.exists()


def test_a_failed_llm_call_is_recorded_and_the_lease_released(ledger, store_target, proj, tmp_path):
    hook = Hook(store_target)
    _observe(hook, proj, 2)
    from ledger.watcher.llm import LLMError

    cfg = cfg_with(llm_backend="command", llm_command="false")
    assert W.try_lease(ledger.store._conn, "claude-code:s1", "o", T0)
    with pytest.raises(LLMError):
        distill_session(ledger, "claude-code:s1", "o", cfg, log=lambda m: None)
    (call,) = [dict(r) for r in ledger.store._conn.execute("SELECT * FROM llm_calls")]
    assert call["ok"] == 0 and "exited 1" in call["error"] and call["backend"] == "command"
    s = W.session(ledger.store._conn, "claude-code:s1")
    assert s["lease_owner"] is None and s["distilled_step"] == 0  # retried next time


def test_llm_calls_and_tokens_are_in_stats(ledger, store_target, proj, cli):
    hook = Hook(store_target)
    _observe(hook, proj, 1)
    _distill(ledger, "claude-code:s1", [], tokens=(1000, 234))
    W.record_llm_call(ledger.store._conn, session=None, backend="openai", model=None, prompt_tokens=0, completion_tokens=0,
                      ms=5, ok=False, error="HTTP 500", now=int(time.time() * 1000))
    ledger.store._conn.execute("UPDATE llm_calls SET at = ?", (int(time.time() * 1000),))
    rc, out, err = cli("stats", "--json")
    assert rc == 0, err
    st = json.loads(out)
    assert st["llmToday"] == {"calls": 2, "promptTokens": 1000, "completionTokens": 234, "failed": 1}
    assert st["watcher"]["observations"] == 1 and st["watcher"]["sessions"] == 1


def test_stats_text_shows_llm_calls_and_tokens(ledger, store_target, proj, cli):
    W.record_llm_call(ledger.store._conn, session=None, backend="openai", model=None, prompt_tokens=1000,
                      completion_tokens=234, ms=5, ok=True, error=None, now=int(time.time() * 1000))
    rc, out, _ = cli("stats")
    assert rc == 0
    line = next(l for l in out.splitlines() if "LLM call" in l)
    assert line.split()[0] == "1" and "1234 tokens" in line
