"""A secret is named by the nearest secret-named key above it, whatever the nesting
(review of 2026-12-02: ``{"password": ["hunter2secret"]}`` was stored as given, since
only a string right under its key was judged by it). The kind: lists and objects under
a secret-named key (``{"auth": {"tokens": [...]}}``, ``{"credentials": [{"value": ...}]}``),
name/value pair objects (``{"name": "API_KEY", "value": ...}``: Kubernetes, GitHub
Actions, ECS, HAR), two-item pair lists (``[["password", "x"]]``), Kubernetes' YAML
``- name:`` / ``value:``; as JSON values (``clip_value``) and as JSON text in a string
(``redact``), plain or escaped once more. docs/watcher.md "Redaction". The secrets are
fabricated."""

from __future__ import annotations

import json

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import payload, run_hook

from ledger.redact import clip_value, redact

GHP = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
SK = "sk-abc1234567890abcdefghij"

# (value, the secrets it holds, what must stay)
NESTED = [
    ({"password": ["hunter2secret"]}, ["hunter2secret"], []),
    ({"password": ["hunter2secret", ["Tr0ub4dor9"]]}, ["hunter2secret", "Tr0ub4dor9"], []),
    ({"auth": {"tokens": [GHP, "Abc123secretxyz"]}}, [GHP, "Abc123secretxyz"], []),
    ({"credentials": [{"value": "Hunter2Secret99"}]}, ["Hunter2Secret99"], []),
    ({"credentials": {"username": "bob.smith", "password": "pw9secret", "host": "db.internal:5432"}},
     ["pw9secret"], ["bob.smith", "db.internal:5432"]),
    ({"api_keys": {"openai": "zX9yW8vU7tS6", "anthropic": "Qq1Ww2Ee3Rr4"}}, ["zX9yW8vU7tS6", "Qq1Ww2Ee3Rr4"], []),
    ({"secrets": {"prod": {"db": "pr0dDbSecret"}}}, ["pr0dDbSecret"], []),
    ({"env": [{"name": "API_KEY", "value": SK}, {"name": "DB_HOST", "value": "db.local"}]}, [SK], ["db.local"]),
    ({"env": [{"name": "DB_PASSWORD", "value": "hunter2secret"}, {"name": "LOG_LEVEL", "value": "debug"}]},
     ["hunter2secret"], ["LOG_LEVEL", "debug"]),
    ({"containerDefinitions": [{"environment": [{"value": "s3cretValue9", "name": "SIGNING_KEY"}]}]},
     ["s3cretValue9"], ["SIGNING_KEY"]),
    ({"Parameters": [{"ParameterKey": "DbPassword", "ParameterValue": "Cf9Secret!"}]}, ["Cf9Secret!"], []),
    ({"headers": [{"name": "Authorization", "value": "Bearer abcDEF123456ghiJKL"}]}, ["abcDEF123456ghiJKL"],
     ["Bearer"]),
    ([["password", "x9secretvalue"], ["user", "alice"]], ["x9secretvalue"], ["alice"]),
    ({"form": [["username", "alice"], ["passwd", "Pa55word!"]]}, ["Pa55word!"], ["alice"]),
]

KEPT = [
    {"tokens": ["the", "cat", "sat"]},
    {"max_tokens": "4096xyz", "usage": {"input_tokens": 12, "cache_read_input_tokens": "123abc45"}},
    {"auth": {"type": "oauth2", "scopes": ["read", "write"], "url": "https://auth.example.com/x1"}},
    {"token": {"expires_at": "2026-12-02T03:00:00Z", "token_type": "Bearer"}},
    {"env": [{"name": "PATH", "value": "/usr/bin:/bin"}, {"name": "HOME", "value": "/home/me"}]},
    [["name", "alice"], ["password_hint", "my dog's name"]],
    {"credentials": {"user": "bob", "expires": "2027-01-01"}},
    # Session 10: what a secret block holds beside its secrets. A plain last word (who,
    # where, what kind) keeps its value; a label keeps a value that does not look like
    # a credential.
    {"credentials": {"region": "us-east-1", "username": "bob", "profile": "default", "account": "123456789012",
                     "bucket": "my-bucket", "namespace": "prod", "role_arn": "arn:aws:iam::1:role/x"}},
    {"secrets": {"prod": {"db": "mydb"}}},
    {"auth": {"provider": "github", "client_id": "Iv1.8a61f9b3a7aba766"}},
]


@pytest.mark.parametrize("value, secrets, kept", NESTED)
def test_a_value_is_judged_by_the_nearest_secret_key_above_it(value, secrets, kept):
    out = clip_value(value)
    text = json.dumps(out)
    for s in secrets:
        assert s not in text, (s, out)
    for k in kept:
        assert k in text, (k, out)
    assert clip_value(out) == out


@pytest.mark.parametrize("value, secrets, kept", NESTED)
@pytest.mark.parametrize("indent", [None, 2])
def test_the_same_shapes_as_json_text(value, secrets, kept, indent):
    """A tool output that prints JSON (compact or pretty), and that text kept inside
    another JSON string (an MCP result: quotes \\" and line breaks \\n)."""
    text = "result:\n" + json.dumps(value, indent=indent) + "\ndone"
    for t in (text, json.dumps({"content": text})):
        out = redact(t)
        for s in secrets:
            assert s not in out, (s, out)
        for k in kept:
            assert k in out, (k, out)
        assert redact(out) == out
    assert json.loads(redact(json.dumps({"content": text})))["content"] == redact(text)


@pytest.mark.parametrize("value", KEPT)
def test_what_is_not_a_secret_stays(value):
    assert clip_value(value) == value
    for indent in (None, 2):
        text = json.dumps(value, indent=indent)
        assert redact(text) == text


def test_kubernetes_yaml_name_value_pairs():
    text = ("spec:\n  containers:\n  - name: app\n    env:\n    - name: API_KEY\n      value: zX9yW8vU7tS6\n"
            "    - name: DB_PASSWORD\n      value: \"hunter2 secret\"\n    - name: LOG_LEVEL\n      value: debug\n"
            "    - name: TOKEN_URL\n      value: https://auth.example.com/t1\n")
    out = redact(text)
    assert "zX9yW8vU7tS6" not in out and "hunter2 secret" not in out
    assert "value: [REDACTED:api-key]" in out and 'value: "[REDACTED:password]"' in out
    assert "value: debug" in out and "https://auth.example.com/t1" in out
    assert redact(out) == out


def test_only_the_value_changes_in_json_text():
    text = '{"env": [ {"name": "API_KEY",  "value": "Zx9Yw8Vu7Ts6"} ], "password": ["a\\"b9c", "Tr0ub4dor9"]}'
    assert redact(text) == ('{"env": [ {"name": "API_KEY",  "value": "[REDACTED:api-key]"} ], '
                            '"password": ["[REDACTED:password]", "[REDACTED:password]"]}')


def test_a_walk_stops_at_its_closing_bracket():
    text = '{"secrets": ["S3cr3tValue"], "names": ["alice", "bob"], "note": {"x": "Plain1234"}}'
    out = redact(text)
    assert "S3cr3tValue" not in out and '["alice", "bob"]' in out and "Plain1234" in out


def test_no_nested_secret_reaches_the_store_through_the_hook(tmp_path, store_target):
    """A real ``ledger hook claude-code PostToolUse`` process: secrets nested in lists
    under secret keys and in name/value pairs, in the tool's input (JSON objects) and in
    its output (JSON text inside an MCP result), are stored redacted; SQLite and
    PostgreSQL."""
    secrets = ["Hunter2Secret99", "Zx9Yw8Vu7Ts6", "Abc123tokenXyz", "S3cr3tValue42", "Pl4inPassw0rd", GHP]
    home, db = tmp_path / "home", store_target
    p = payload("PostToolUse", cwd=tmp_path, tool_name="mcp__k8s__apply", tool_use_id="toolu_s",
                tool_input={"password": [secrets[0]], "spec": {"env": [{"name": "API_KEY", "value": secrets[1]}]},
                            "pairs": [["passwd", secrets[4]]]},
                tool_response=[{"type": "text", "text": json.dumps(
                    {"auth": {"tokens": [secrets[2], secrets[5]]}, "credentials": [{"value": secrets[3]}]},
                    indent=2)}])
    r = run_hook("PostToolUse", p, env={"LEDGER_HOME": home, "LEDGER_DB": db})
    assert r.returncode == 0 and r.stdout == b"", r
    spool_settled(db, home)
    [(inp, out)] = store_sql(db, "SELECT input, output FROM observations")
    for s in secrets:
        assert s not in inp + out, (s, inp, out)
    assert "API_KEY" in inp and "[REDACTED:" in out
    log = (home / "hook.log").read_text() if (home / "hook.log").exists() else ""
    assert not any(s in log for s in secrets)


def test_remember_stores_nested_secrets_redacted(cli):
    text = ('deploy env is [{"name": "DB_PASSWORD", "value": "hunter2secret"}] and '
            '{"credentials": [{"value": "Tr0ub4dor9x"}]}')
    out = json.loads(cli("remember", text, "--cluster", "code", "--json")[1])
    assert out["redacted"] == 2 and "hunter2secret" not in out["text"] and "Tr0ub4dor9x" not in out["text"]
    assert '"name": "DB_PASSWORD"' in out["text"]


def test_judging_json_text_imports_neither_json_nor_re():
    """``remember`` redacts every claim and keeps ``re`` (and ``json``, which imports it)
    off its start-up: a claim holding JSON under secret keys is judged without them."""
    import subprocess
    import sys

    code = ("import sys; from ledger.redact import redact; "
            "out = redact('[{\"name\": \"DB_PASSWORD\", \"value\": \"hunter2secret\"}] {\"password\": [\"x9secret\"]} "
            "[[\"passwd\", \"Pa55word!\"]]'); "
            "assert 'hunter2secret' not in out and 'x9secret' not in out and 'Pa55word' not in out, out; "
            "print(sorted(m for m in ('re', 'json') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r
