"""LLM backends against a real HTTP server on loopback speaking the real protocols
(OpenAI chat completions, Anthropic Messages), the ``command`` backend with a real
child process, and the whole detached path: hook → lease → ``python -m
ledger __distill`` → model server → claims in the store."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from conftest import store_sql
from fakes.hooks import context_of, post_bash, pre_read, run_hook
from fakes.llm_server import ModelServer, Reply

from ledger.watcher.llm import SYSTEM, LLMError, complete

CLI = str(Path(__file__).parent / "fakes" / "llm_cli.py")


@pytest.fixture
def server():
    with ModelServer(lambda req: "the answer") as srv:
        yield srv


def openai_cfg(srv, **kw):
    return {"backend": "openai", "url": srv.url + "/v1", "model": "llama-test", "api_key_env": "", "timeout": 5, **kw}


def anthropic_cfg(srv, **kw):
    return {"backend": "anthropic", "url": srv.url, "model": "claude-test", "api_key_env": "", "timeout": 5, **kw}


# ---------------------------------------------------------------- openai


def test_openai_chat_completions(server, monkeypatch):
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-test-123")
    c = complete("PROMPT TEXT", openai_cfg(server, api_key_env="MY_OPENAI_KEY", max_tokens=777))
    assert c.text == "the answer"
    assert (c.prompt_tokens, c.completion_tokens) == (11, 7)
    assert c.model == "llama-test" and c.ms > 0
    (req,) = server.requests
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test-123"
    assert req.headers["content-type"] == "application/json"
    assert req.body["model"] == "llama-test" and req.body["max_tokens"] == 777 and req.body["temperature"] == 0
    assert req.body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "PROMPT TEXT"}]


def test_openai_without_a_key_sends_no_authorization(server):
    complete("p", openai_cfg(server))
    assert "authorization" not in server.requests[0].headers


def test_openai_usage_missing_is_estimated(server):
    server.answer = lambda req: Reply(200, {"choices": [{"message": {"role": "assistant", "content": "x" * 400}}]})
    c = complete("y" * 800, openai_cfg(server))
    assert (c.prompt_tokens, c.completion_tokens) == (200, 100)


def test_openai_null_content_is_empty_text(server):
    server.answer = lambda req: Reply(200, {"choices": [{"message": {"role": "assistant", "content": None}}],
                                            "usage": {"prompt_tokens": 3, "completion_tokens": 0}})
    assert complete("p", openai_cfg(server)).text == ""


# ---------------------------------------------------------------- anthropic


def test_anthropic_messages(server, monkeypatch):
    monkeypatch.setenv("MY_ANTHROPIC_KEY", "sk-ant-test")
    server.answer = lambda req: [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}]
    c = complete("PROMPT", anthropic_cfg(server, api_key_env="MY_ANTHROPIC_KEY"))
    assert c.text == "part one, part two"
    assert (c.prompt_tokens, c.completion_tokens) == (13, 5)
    (req,) = server.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-test"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.body["system"] == SYSTEM and req.body["model"] == "claude-test"
    assert req.body["messages"] == [{"role": "user", "content": "PROMPT"}]
    assert isinstance(req.body["max_tokens"], int) and req.body.get("stream") in (None, False)


def test_anthropic_key_falls_back_to_anthropic_api_key(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    complete("p", anthropic_cfg(server))
    assert server.requests[0].headers["x-api-key"] == "from-env"


def test_anthropic_ignores_non_text_blocks(server):
    server.answer = lambda req: [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "[]"}]
    assert complete("p", anthropic_cfg(server)).text == "[]"


# ---------------------------------------------------------------- failures


@pytest.mark.parametrize("cfg", [openai_cfg, anthropic_cfg])
def test_http_500_is_a_clear_llm_error(server, cfg):
    server.answer = lambda req: Reply(500, {"error": {"message": "model overloaded"}})
    with pytest.raises(LLMError) as e:
        complete("p", cfg(server))
    msg = str(e.value)
    assert "HTTP 500" in msg and "model overloaded" in msg and server.url in msg


@pytest.mark.parametrize("cfg", [openai_cfg, anthropic_cfg])
@pytest.mark.parametrize("body", [b"<html>502 bad gateway</html>", b'{"choices": [', b"\xff\xfe not utf-8 \x80"])
def test_invalid_json_is_a_clear_llm_error(server, cfg, body):
    server.answer = lambda req: Reply(200, body)
    with pytest.raises(LLMError) as e:
        complete("p", cfg(server))
    assert "invalid JSON" in str(e.value) and server.url in str(e.value)


@pytest.mark.parametrize("cfg,needle", [(openai_cfg, "openai backend"), (anthropic_cfg, "anthropic backend")])
def test_an_unexpected_answer_shape_is_a_clear_llm_error(server, cfg, needle):
    server.answer = lambda req: Reply(200, {"hello": "world"})
    with pytest.raises(LLMError) as e:
        complete("p", cfg(server))
    assert needle in str(e.value) and "unexpected answer shape" in str(e.value)


def test_an_unreachable_server_is_a_clear_llm_error():
    srv = ModelServer()
    url = srv.url
    srv.stop()  # the port is closed now
    with pytest.raises(LLMError) as e:
        complete("p", {"backend": "openai", "url": url, "timeout": 2})
    assert "cannot reach" in str(e.value) and url in str(e.value)


def test_a_slow_server_times_out_as_an_llm_error(server):
    server.answer = lambda req: Reply(200, {"choices": []}, delay=3)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as e:
        complete("p", openai_cfg(server, timeout=0.5))
    assert time.monotonic() - t0 < 2.5
    assert "timed out" in str(e.value)


def test_an_unknown_backend_is_a_clear_llm_error():
    for backend in ("none", "", "ollama"):
        with pytest.raises(LLMError) as e:
            complete("p", {"backend": backend})
        assert "command, openai, anthropic, codex or gemini" in str(e.value)


# ---------------------------------------------------------------- command


def cmd(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, CLI, *args))


def test_command_backend_runs_a_program_with_our_hooks_disabled(tmp_path, monkeypatch):
    monkeypatch.delenv("LEDGER_HOOKS_DISABLED", raising=False)
    env_out, prompt_out = tmp_path / "env.json", tmp_path / "prompt.txt"
    c = complete("the prompt ✓\nline 2", {"backend": "command", "timeout": 20,
                                           "command": cmd("--answer", '[{"fact": "f", "topic": "t"}]', "--env-out", str(env_out),
                                                          "--prompt-out", str(prompt_out))})
    assert c.text == '[{"fact": "f", "topic": "t"}]'
    assert json.loads(env_out.read_text())["LEDGER_HOOKS_DISABLED"] == "1"
    assert "LEDGER_HOOKS_DISABLED" not in os.environ  # only for the child
    assert prompt_out.read_text() == "the prompt ✓\nline 2"
    assert c.prompt_tokens == len("the prompt ✓\nline 2") // 4 and c.completion_tokens >= 1  # estimated


def test_command_backend_accepts_an_argv_list():
    c = complete("p", {"backend": "command", "command": [sys.executable, CLI, "--answer", "a b c"]})
    assert c.text == "a b c"


def test_command_backend_failures_are_clear_llm_errors(tmp_path):
    with pytest.raises(LLMError, match="exited 3: scripted failure"):
        complete("p", {"backend": "command", "command": cmd("--exit", "3")})
    with pytest.raises(LLMError, match="not found on PATH"):
        complete("p", {"backend": "command", "command": "no-such-llm-binary-xyz -p"})
    with pytest.raises(LLMError, match="command is empty"):
        complete("p", {"backend": "command", "command": ""})
    with pytest.raises(LLMError, match="did not answer within"):
        complete("p", {"backend": "command", "command": "sleep 5", "timeout": 0.5})


def test_command_backend_can_call_a_model_server(server):
    server.answer = lambda req: "from the server: " + req.prompt()
    c = complete("hello", {"backend": "command", "command": cmd("--url", server.url)})
    assert c.text == "from the server: hello"
    assert server.requests[0].headers["anthropic-version"] == "2023-06-01"


# ---------------------------------------------------------------- the detached path


def _wait_for(fn, timeout=10.0, step=0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


def _claims(db):
    try:
        return store_sql(db, "SELECT text, topic, provenance FROM memories WHERE writer = 'watcher'")
    except Exception:  # no tables yet (either driver's error)
        return []


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_hook_every_2_steps_starts_a_detached_distiller_that_writes_claims(tmp_path, _isolated_home, store_target, backend):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "weights.ckpt").write_bytes(b"\x93NUMPY" + b"\0" * 100)
    finding = [{"fact": "weights.ckpt is a NumPy .npy file (magic \\x93NUMPY)", "topic": "file-format:weights.ckpt",
                "files": [str(proj / "weights.ckpt")]}]
    with ModelServer(lambda req: json.dumps(finding)) as srv:
        db = store_target
        env = {"LEDGER_DB": db, "LEDGER_DISTILL_EVERY": "2", "LEDGER_LLM_BACKEND": backend,
               "LEDGER_LLM_URL": srv.url + ("/v1" if backend == "openai" else ""), "LEDGER_LLM_MODEL": "m-test",
               "LEDGER_LLM_API_KEY_ENV": "FAKE_KEY", "FAKE_KEY": "k-123"}
        p = run_hook("PostToolUse", post_bash("head -c 16 weights.ckpt | xxd", stdout="00000000: 934e 554d 5059", cwd=proj), env=env)
        assert p.returncode == 0 and p.stdout == b""
        time.sleep(0.5)
        assert srv.requests == []  # one step: not yet
        t0 = time.monotonic()
        p = run_hook("PostToolUse", post_bash("file weights.ckpt", stdout="weights.ckpt: data", cwd=proj), env=env)
        assert p.returncode == 0 and p.stdout == b""
        assert time.monotonic() - t0 < 5  # the hook does not wait for the model
        claims = _wait_for(lambda: _claims(db))
        assert claims, (_isolated_home / "hook.log").read_text() if (_isolated_home / "hook.log").exists() else "no log"
        (text, topic, prov), = claims
        assert "NumPy" in text and topic == "file-format:weights.ckpt" and "steps 1-2" in prov
        req = srv.of(backend)[0]
        assert "934e 554d 5059" in req.text() and "file weights.ckpt" in req.text()
        if backend == "openai":
            assert req.headers["authorization"] == "Bearer k-123"
        else:
            assert req.headers["x-api-key"] == "k-123"
        calls = store_sql(db, "SELECT backend, model, prompt_tokens, completion_tokens, ok FROM llm_calls")
        lease = _wait_for(lambda: store_sql(db, "SELECT lease_owner FROM watch_sessions") == [(None,)])
        assert lease and store_sql(db, "SELECT distilled_step FROM watch_sessions") == [(2,)]
        assert calls == [(backend, "m-test", 11, 7, 1)] if backend == "openai" else calls == [(backend, "m-test", 13, 5, 1)]
        # The distiller logs its result after releasing the lease and closing the store.
        log_file = _isolated_home / "hook.log"
        assert _wait_for(lambda: log_file.exists() and '"added": 1' in log_file.read_text()), "no result in hook.log"
        # the next touch of the file gets the distilled fact
        p = run_hook("PreToolUse", pre_read(proj / "weights.ckpt", cwd=proj), env=env)
        assert "NumPy .npy file" in context_of(p.stdout.decode())


def test_a_failing_model_server_is_logged_by_the_detached_distiller(tmp_path, _isolated_home, store_target):
    proj = tmp_path / "proj"
    proj.mkdir()
    with ModelServer(lambda req: Reply(500, {"error": "boom"})) as srv:
        db = store_target
        env = {"LEDGER_DB": db, "LEDGER_DISTILL_EVERY": "1", "LEDGER_LLM_BACKEND": "openai", "LEDGER_LLM_URL": srv.url}
        p = run_hook("PostToolUse", post_bash("ls", stdout="a b", cwd=proj), env=env)
        assert p.returncode == 0 and p.stdout == b""
        log = _isolated_home / "hook.log"
        assert _wait_for(lambda: log.exists() and "failed" in log.read_text())
        assert "HTTP 500" in log.read_text()
        assert _wait_for(lambda: store_sql(db, "SELECT lease_owner FROM watch_sessions") == [(None,)])
        assert store_sql(db, "SELECT ok, error FROM llm_calls")[0][0] == 0


def test_a_backend_is_one_registered_function_that_settings_accept(monkeypatch):
    from ledger.watcher import config as C
    from ledger.watcher import llm

    monkeypatch.setattr(llm, "BACKENDS", dict(llm.BACKENDS))

    @llm.backend("echo", "answers with the prompt (test)")
    def _echo(prompt, cfg):
        return f"[{prompt}]", 3, 4

    assert C.BY_KEY["llm.backend"].coerce("Echo") == "echo"
    c = complete("hi", {"backend": "echo", "model": "m"})
    assert (c.text, c.prompt_tokens, c.completion_tokens, c.model) == ("[hi]", 3, 4, "m")
    # backends that run elsewhere are valid settings but not callable from here
    for name in ("none", "fallback", "opencode"):
        assert C.BY_KEY["llm.backend"].coerce(name) == name
        with pytest.raises(LLMError, match="not usable here"):
            complete("p", {"backend": name})
