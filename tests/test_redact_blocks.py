"""YAML lists and mappings under a secret-named key lose their secrets (session 10:
``api_keys:`` then ``- sk-live-...`` lines, ``passwords:`` then ``- "hunter2"`` were
stored as given). The kind: a block opened by a secret-named key, to any depth (list
items, compact lists at the key's own column, nested mappings, block scalars ``|`` and
``>``, flow lists ``[a, b]``), judged by the same rule as JSON: list items by the key
above; under a plain word (username, region...) nothing goes; under a label (``prod``,
``openai``) what looks like a credential goes. Property tests place generated secrets
in every shape redaction reads by structure (YAML, JSON, Python, JavaScript) and check
none survives while the plain neighbours do. docs/watcher.md "Redaction". The secrets
are fabricated."""

from __future__ import annotations

import json

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import payload, run_hook
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.redact import fold, redact

CASES = [
    # (text, secrets, kept)
    ("api_keys:\n  - sk-live-abc123def456ghi789jkl\n  - ghp_xxx\npasswords:\n  - \"hunter2\"\n",
     ["sk-live-abc123def456ghi789jkl", "ghp_xxx", "hunter2"], ["api_keys:", "passwords:"]),
    ("passwords:\n  - hunter2secret\n  - Tr0ub4dor\nusers:\n  - bob\n", ["hunter2secret", "Tr0ub4dor"], ["- bob"]),
    ("api_keys:\n- Zx9secret1\n- Qq8secret2\nnames:\n- bob\n", ["Zx9secret1", "Qq8secret2"], ["- bob"]),
    ("config:\n  - name: web\n    tokens:\n      - Ab9secret1\n    port: 80\n", ["Ab9secret1"], ["port: 80", "name: web"]),
    ("secrets:\n  prod:\n    db: pr0dDbSecret\n    host: db.prod\n  staging: St4gingPass\n",
     ["pr0dDbSecret", "St4gingPass"], ["host: db.prod"]),
    ("api_keys: [abc123def, 'Zz9secret', \"Qq8secret\"]\n", ["abc123def", "Zz9secret", "Qq8secret"], []),
    ("private_key: |\n  MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n  Zm9vYmFy\nother: 1\n",
     ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "Zm9vYmFy"], ["private_key: |", "other: 1"]),
    ("credentials:\n  # the prod ones\n  username: bob   # owner\n  password: \"hunter2 x\"  # rotate\n"
     "  region: us-east-1\nnext: value\n", ["hunter2 x"], ["username: bob   # owner", "region: us-east-1", "# rotate"]),
    ("- api_keys:\n  - Ab9secret1\n- other\n", ["Ab9secret1"], ["- other"]),
    ("password:\n  hunter2\n", ["hunter2"], []),
    ("services:\n  db:\n    credentials:\n      - user: admin\n        password: Adm1nPass\n      - user: ro\n"
     "        password: R0Pass99\n    image: postgres:16\n", ["Adm1nPass", "R0Pass99"], ["user: admin", "image: postgres:16"]),
]

KEPT = [
    "tokens:\n  - the\n  - cat\n",
    "max_tokens:\n  - 4096\n",
    "auth:\n  type: oauth2\n  scopes: [read, write]\n  url: https://auth.example.com/x1\n",
    "credentials:\n  region: us-east-1\n  username: bob\n  profile: default\n  account: '123456789012'\n"
    "  role_arn: arn:aws:iam::123456789012:role/deploy\n",
    "secret:\n  secretName: db-secret\n  items:\n    - key: password\n      path: db-password\n",
    "valueFrom:\n  secretKeyRef:\n    name: db-secret\n    key: password\n",
    "token:\n  expires_at: 2026-12-02T03:00:00Z\n  token_type: Bearer\n",
    "password_policy:\n  - min_length: 12\n  - require_digit: yes\n",
]


@pytest.mark.parametrize("text, secrets, kept", CASES)
def test_yaml_blocks_under_a_secret_key(text, secrets, kept):
    out = redact(text)
    for s in secrets:
        assert s not in out, (s, out)
    for k in kept:
        assert k in out, (k, out)
    assert out.count("\n") == text.count("\n")
    assert redact(out) == out


@pytest.mark.parametrize("text", KEPT)
def test_yaml_that_holds_no_secret_stays(text):
    assert redact(text) == text


def test_only_the_values_change():
    text = "api_keys:\n  - Zx9secret1   # old\n  - 'Qq8secret2'\ncredentials:\n  region: us-east-1\n  pass: Hunter2Pass\n"
    assert redact(text) == ("api_keys:\n  - [REDACTED:api-key]   # old\n  - '[REDACTED:api-key]'\n"
                            "credentials:\n  region: us-east-1\n  pass: [REDACTED:password]\n")


def test_a_block_written_with_look_alikes_loses_the_same():
    text = "ａｐｉ_ｋｅｙｓ：\n  - Zx9secret1\n  - “Qq8secret2”\nregion: us-east-1\n"
    out = redact(text)
    assert "Zx9secret1" not in out and "Qq8secret2" not in out
    assert out.startswith("ａｐｉ_ｋｅｙｓ：\n") and "“" in out and "region: us-east-1" in out
    assert fold(out) == redact(fold(text))


# ---------------------------------------------------------------- properties

#: A value that looks like a credential: 8-24 letters and digits with both.
secret_values = st.text("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=7, max_size=23).map(
    lambda s: s + "7").filter(lambda s: any(c.isalpha() for c in s))
secret_keys = st.sampled_from(["password", "api_key", "secret", "token", "DB_PASSWORD", "client_secret", "apiKey",
                               "credentials", "auth_token", "passwd"])
plural_keys = st.sampled_from(["passwords", "api_keys", "tokens", "secrets", "apiKeys"])
labels = st.sampled_from(["prod", "staging", "openai", "github", "default_one"])


def _shapes(key: str, plural: str, label: str, v: str) -> list[str]:
    """The same secret ``v`` in every shape redaction reads by structure, each with the
    neighbours ``username: bob`` / ``region: us-east-1`` that must stay."""
    return [
        f"{plural}:\n  - {v}\nregion: us-east-1\n",
        f"{plural}:\n- \"{v}\"\n- '{v}'\nusername: bob\n",
        f"credentials:\n  username: bob\n  region: us-east-1\n  {label}: {v}\n",
        f"credentials:\n  {key}: {v}\n  username: bob\n",
        f"{plural}:\n  {label}:\n    - {v}\n  region: us-east-1\n",
        f"{key}: |\n  {v}\nusername: bob\n",
        f"{plural}: [{v}, '{v}']\nregion: us-east-1\n",
        json.dumps({plural: [v], "username": "bob"}),
        json.dumps({"credentials": {label: v, "region": "us-east-1", "username": "bob"}}),
        repr({key: v, "username": "bob"}),
        repr({plural: [v], "region": "us-east-1"}),
        repr([(key, v), ("username", "bob")]),
        f"{{ {key.replace('_', '')}: '{v}', username: 'bob' }}",
        f"const c = {{ {plural}: ['{v}'], region: 'us-east-1' }};",
        f"dict({key}='{v}', username='bob')",
        f"Config({key}=\"{v}\", username=\"bob\")",
        f"os.environ[\"{key.upper()}\"] = \"{v}\"  # username: bob",
        f"os.environ.setdefault('{key.upper()}', '{v}')  # username: bob",
    ]


@settings(max_examples=150, deadline=None)
@given(secret_keys, plural_keys, labels, secret_values)
def test_a_secret_in_any_structured_shape_never_survives(key, plural, label, v):
    for text in _shapes(key, plural, label, v):
        out = redact(text)
        assert v not in out, (text, out)
        assert "bob" in out or "us-east-1" in out, (text, out)
        assert redact(out) == out


# ---------------------------------------------------------------- through the store


def test_no_block_literal_or_sentence_secret_reaches_the_store_through_the_hook(tmp_path, store_target):
    """A real ``ledger hook claude-code PostToolUse`` process: a YAML file read, a Python
    command and its repr output, a JavaScript literal and sentences in other languages
    are stored without their secrets and with their plain neighbours; SQLite and
    PostgreSQL."""
    secrets = ["Zx9secret1", "Qq8secret2", "Hunter2Sec", "Ab9token77", "Js9Secret5", "Geh31mPw9", "Mi9Ma4Pw"]
    home, db = tmp_path / "home", store_target
    p = payload("PostToolUse", cwd=tmp_path, tool_name="Bash", tool_use_id="toolu_b",
                tool_input={"command": f"python -c \"import os; os.environ['DB_PASSWORD'] = '{secrets[2]}'\""},
                tool_response={"stdout": f"api_keys:\n  - {secrets[0]}\n  - '{secrets[1]}'\ncredentials:\n"
                                         f"  region: us-east-1\n  username: bob\n"
                                         f"{{'tokens': ['{secrets[3]}'], 'user': 'alice'}}\n"
                                         f"const c = {{ apiKey: '{secrets[4]}' }};\n"
                                         f"das Passwort ist {secrets[5]}\n密码是{secrets[6]}\n",
                               "stderr": "", "interrupted": False})
    r = run_hook("PostToolUse", p, env={"LEDGER_HOME": home, "LEDGER_DB": db})
    assert r.returncode == 0 and r.stdout == b"", r
    spool_settled(db, home)
    [(inp, out)] = store_sql(db, "SELECT input, output FROM observations")
    for s in secrets:
        assert s not in inp + out, (s, inp, out)
    for kept in ("region: us-east-1", "username: bob", "'user': 'alice'", "api_keys:", "DB_PASSWORD"):
        assert kept in inp + out, (kept, inp, out)


def test_remember_stores_block_and_literal_secrets_redacted(cli):
    text = "deploy uses {'password': 'hunter2x', 'user': 'bob'} and das Passwort ist Geh31m!x"
    out = json.loads(cli("remember", text, "--cluster", "code", "--json")[1])
    assert out["redacted"] == 2, out
    assert out["text"] == ("deploy uses {'password': '[REDACTED:password]', 'user': 'bob'} and "
                           "das Passwort ist [REDACTED:password]")


def test_walking_blocks_and_literals_imports_neither_json_nor_re():
    """``remember`` redacts every claim and keeps ``re`` and ``json`` off its start-up."""
    import subprocess
    import sys

    code = ("import sys; from ledger.redact import redact; "
            "out = redact(\"api_keys:\\n  - Zx9secret1\\n  - [Qq8secret2, 'x']\\nprivate_key: |\\n  Ab9\\n"
            "{'tokens': ['Ab9token77']} dict(name='API_KEY', value='Vv9secret') "
            "os.environ.setdefault('DB_PASSWORD', 'Pp9secret') das Passwort ist Geh31m!x\"); "
            "assert not any(s in out for s in ('Zx9secret1', 'Qq8secret2', 'Ab9token77', 'Vv9secret', 'Pp9secret', "
            "'Geh31m')), out; "
            "print(sorted(m for m in ('re', 'json') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r
