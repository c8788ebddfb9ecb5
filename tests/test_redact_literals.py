"""Structures written as the literals of a programming language are read as JSON is
(session 10: ``{'password': 'hunter2', 'user': 'bob'}``, ``dict(token="abc")``,
``{ apiKey: "abc", secret: 'x' }``, ``Config(password='x')``, ``os.environ["DB_PASSWORD"]
= "x"`` were the examples). The kind: Python's repr and code, JavaScript object
literals, Ruby hashes, PHP arrays; strings in single or double quotes, keys quoted or
bare, ``:``, ``=`` or ``=>`` after a key; a subscript assignment; a call or tuple whose
first argument names the second. Each shape of tests/test_redact_structure.py is also
checked as Python's repr and as a JavaScript literal. docs/watcher.md "Redaction". The
secrets are fabricated."""

from __future__ import annotations

import json

import pytest
from test_redact_structure import KEPT, NESTED

from ledger.redact import redact


def js_literal(value: object) -> str:
    """``value`` as a JavaScript object literal: identifier keys bare, strings in single
    quotes."""
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = k if k.isidentifier() else json.dumps(k)
            items.append(f"{key}: {js_literal(v)}")
        return "{ " + ", ".join(items) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(js_literal(v) for v in value) + "]"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


SHAPES = [repr, js_literal, lambda v: "const config = " + js_literal(v) + ";", lambda v: f"print({v!r})"]


@pytest.mark.parametrize("value, secrets, kept", NESTED)
@pytest.mark.parametrize("shape", SHAPES)
def test_json_shapes_written_as_code_literals(value, secrets, kept, shape):
    text = shape(value)
    out = redact(text)
    for s in secrets:
        assert s not in out, (s, text, out)
    for k in kept:
        assert k in out, (k, out)
    assert redact(out) == out


@pytest.mark.parametrize("value", KEPT)
@pytest.mark.parametrize("shape", SHAPES)
def test_what_is_not_a_secret_stays_as_a_code_literal(value, shape):
    text = shape(value)
    assert redact(text) == text


@pytest.mark.parametrize("text, expected", [
    ("{'password': 'hunter2', 'user': 'bob'}", "{'password': '[REDACTED:password]', 'user': 'bob'}"),
    ('dict(token="abc")', 'dict(token="[REDACTED:token]")'),
    ("{ apiKey: \"abc\", secret: 'x' }", "{ apiKey: \"[REDACTED:api-key]\", secret: '[REDACTED:secret]' }"),
    ("Config(password='x')", "Config(password='[REDACTED:password]')"),
    ('os.environ["DB_PASSWORD"] = "x"', 'os.environ["DB_PASSWORD"] = "[REDACTED:password]"'),
    ("os.environ['API_TOKEN'] = 'abcdef'", "os.environ['API_TOKEN'] = '[REDACTED:token]'"),
    ('ENV["API_TOKEN"] = "Qx9secretvalue"', 'ENV["API_TOKEN"] = "[REDACTED:token]"'),
    ("$config['db_password'] = 'x';", "$config['db_password'] = '[REDACTED:password]';"),
    ("{:password => 'hunter2'}", "{:password => '[REDACTED:password]'}"),
    ('{ "tokens" => ["abc123def"] }', '{ "tokens" => ["[REDACTED:token]"] }'),
    ("dict(tokens=['Ab9secret1', 'Zz8secret2'])", "dict(tokens=['[REDACTED:token]', '[REDACTED:token]'])"),
    ("const config = { auth: { tokens: ['abc123XYZ'] } }", "const config = { auth: { tokens: ['[REDACTED:token]'] } }"),
    ("[('password', 'x9secretvalue'), ('user', 'alice')]", "[('password', '[REDACTED:password]'), ('user', 'alice')]"),
    ("dict(name='API_KEY', value='Qx9secretvalue')", "dict(name='API_KEY', value='[REDACTED:api-key]')"),
    # A call whose first argument names the second: the value must look like a credential.
    ('os.environ.setdefault("DB_PASSWORD", "x9secret")', 'os.environ.setdefault("DB_PASSWORD", "[REDACTED:password]")'),
    ("define('DB_PASSWORD', 'wp9Secret');", "define('DB_PASSWORD', '[REDACTED:password]');"),
    ('os.Setenv("API_TOKEN", "Qx9secretvalue")', 'os.Setenv("API_TOKEN", "[REDACTED:token]")'),
    ('props.setProperty("db.password", "Qx9secretvalue")', 'props.setProperty("db.password", "[REDACTED:password]")'),
])
def test_the_examples(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    's.replace("password", "secret")',
    "define('DB_PASSWORD', 'x');",
    'getattr(settings, "SECRET_KEY", None)',
    "password = input('Password: ')",
    "tokens = tokenizer.encode('hello world')",
    "tokens = ['the', 'cat']",
    "x = {'token_count': 5, 'tokens': [1, 2]}",
    "secret = {'name': 'db', 'region': 'us-east-1'}",
    "usage = {'input_tokens': 12, 'output_tokens': 40}",
    "if token == 'abc': pass",
    "{ passwordHint: 'my dog', tokenUrl: 'https://auth.example.com/t1' }",
    # Found by redacting this repository's own code with the new rules.
    'headers["x-api-key"] = key',
    'line["token"] = secret',
    'py_pass = [sys.executable, "-c", "pass"]',
    'propose("Password manager of choice is 1Password", "Password manager of choice is Bitwarden")',
    "auth = ['required', 'basic']",
])
def test_code_that_holds_no_secret_stays(text):
    assert redact(text) == text
