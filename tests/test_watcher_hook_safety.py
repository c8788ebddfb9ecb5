"""Issue 12, "secrets and size at every depth" and "text the hook must survive", through
the real ``ledger hook claude-code PostToolUse`` subprocess with a private LEDGER_HOME:
afterwards the SQLite files (database and WAL) and the hook log hold no secret, and
every stored field is bounded.

Secrets are fabricated in their documented formats and built by concatenation so secret
scanners do not flag this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import is_pg, spool_settled, store_sql
from fakes.hooks import payload, run_hook

SECRETS = {
    # kind: (text as a tool would carry it, the secret part)
    "aws-access-key": ("aws_access_key_id=" + "AKIA" + "Q3EXAMPLE7KEYID12", "AKIA" + "Q3EXAMPLE7KEYID12"),
    "github-token": ('GITHUB_TOKEN = "ghp_' + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + '"',
                     "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    "gitlab-token": ("git push https://oauth2@gitlab.com -o token=" + "glpat-" + "x9Y8w7V6u5T4s3R2q1P0",
                     "glpat-" + "x9Y8w7V6u5T4s3R2q1P0"),
    "slack-token": ("SLACK=" + "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKl",
                    "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKl"),
    "discord-token": ("client.run('" + "MTA5ODc2NTQzMjEwOTg3NjU0" + ".GaBcDe." + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456" + "')",
                      "AbCdEfGhIjKlMnOpQrStUvWxYz0123456"),
    "stripe-key": ("stripe.api_key = '" + "sk_live_" + "51HxYzAbCdEfGh0123456789" + "'",
                   "sk_live_" + "51HxYzAbCdEfGh0123456789"),
    "jwt": ("cookie: id=" + "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiJhbGljZSJ9" + ".c2lnbmF0dXJlX3ZhbHVl",
            "eyJzdWIiOiJhbGljZSJ9"),
    "private-key": ("-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAq7Zz0Secret\nQmVlZg==\n-----END "
                    + "RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAq7Zz0Secret"),
    "password-line": ("[database]\npassword=Tr0ub4dor&3xyz\nhost=db", "Tr0ub4dor"),
    "authorization-header": ('curl -H "Authorization: Bearer ' + "abc123DEF456ghi789JKL" + '" https://api.example.com',
                             "abc123DEF456ghi789JKL"),
    "url-credentials": ("DATABASE_URL=postgres://app:" + "Sup3rS3cretPw" + "@db.internal:5432/app", "Sup3rS3cretPw"),
    "env-line": ("SECRET_KEY_BASE=" + "f00dfeed1234abcd5678" + "\nJWT_SIGNING_KEY=" + "k3yM4t3rial99" + "\n",
                 "k3yM4t3rial99"),
    "mysql-flag": ("mysql -u root -p" + "Hunter2Hunter2" + " shop < dump.sql", "Hunter2Hunter2"),
    "sshpass-flag": ("sshpass -p " + "Pl4inPassw0rd" + " ssh deploy@host", "Pl4inPassw0rd"),
    "azure-connection": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "QUJDREVGR0hJSktMTU5PUA0123"
                         + "==;EndpointSuffix=core.windows.net", "QUJDREVGR0hJSktMTU5PUA0123"),
    "telegram-bot-token": ("BOT=" + "1234567890:AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "HdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"),
}


def _payloads(text: str, cwd: Path) -> dict[str, dict]:
    """The same secret text at several depths in four tools, built-in and MCP."""
    f = str(cwd / "settings.py")
    return {
        "MultiEdit edits[0].new_string": payload(
            "PostToolUse", cwd=cwd, tool_name="MultiEdit", tool_use_id="toolu_me",
            tool_input={"file_path": f, "edits": [{"old_string": "x = 1", "new_string": text}]},
            tool_response={"filePath": f, "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1,
                                                               "newLines": 1, "lines": ["-x = 1", "+" + text]}]}),
        "Write content": payload(
            "PostToolUse", cwd=cwd, tool_name="Write", tool_use_id="toolu_w",
            tool_input={"file_path": f, "content": text},
            tool_response={"type": "create", "filePath": f, "content": text}),
        "Bash command and stdout": payload(
            "PostToolUse", cwd=cwd, tool_name="Bash", tool_use_id="toolu_b",
            tool_input={"command": text.splitlines()[0] if "mysql" in text or "ssh" in text else "cat .env"},
            tool_response={"stdout": "loaded:\n" + text, "stderr": "", "interrupted": False, "isImage": False}),
        "MCP mcp__x__y nested": payload(
            "PostToolUse", cwd=cwd, tool_name="mcp__x__y", tool_use_id="toolu_m",
            tool_input={"request": {"options": [{"env": {"VALUE": text}}]}},
            tool_response=[{"type": "text", "text": json.dumps({"result": {"config": [text]}})}]),
    }


def _stored_bytes(home: Path, db) -> bytes:
    """All the store holds, with the hook log: the SQLite file and its WAL byte for byte;
    on PostgreSQL the text of every row the hook writes (observations, memories, the log)."""
    if is_pg(db):
        stored = "\n".join(str(v) for table in ("observations", "memories", "events", "watch_sessions")
                           for row in store_sql(db, f"SELECT * FROM {table}") for v in row).encode()
    else:
        stored = b"".join(p.read_bytes() for p in sorted(Path(db).parent.glob("ledger.db*")))
    return stored + ((home / "hook.log").read_bytes() if (home / "hook.log").exists() else b"")


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_no_secret_reaches_the_store_at_any_depth_in_any_tool(kind, tmp_path, store_target):
    text, secret = SECRETS[kind]
    home, db = tmp_path / "home", store_target
    for where, p in _payloads(text, tmp_path).items():
        r = run_hook("PostToolUse", p, env={"LEDGER_HOME": home, "LEDGER_DB": db})
        assert r.returncode == 0 and r.stdout == b"", (where, r)
    spool_settled(db, home)
    [(n,)] = store_sql(db, "SELECT count(*) FROM observations")
    rows = store_sql(db, "SELECT input || output FROM observations")
    assert n == 4, "every observation is kept"
    assert all("[REDACTED:" in r[0] for r in rows), rows
    raw = _stored_bytes(home, db)
    assert secret.encode() not in raw
    # The secret is not hiding in escaped form either (JSON \\uXXXX or escaped newlines).
    assert json.dumps(secret).strip('"').encode() not in raw


def test_huge_inputs_are_stored_bounded(tmp_path, store_target):
    home, db = tmp_path / "home", store_target
    f = str(tmp_path / "big.py")
    big = "x = 1  # filler\n" * 150_000  # 2.4 MB
    assert len(big) >= 2_400_000
    tail_secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    sends = [
        payload("PostToolUse", cwd=tmp_path, tool_name="MultiEdit", tool_use_id="toolu_1",
                tool_input={"file_path": f, "edits": [{"old_string": "a", "new_string": big + tail_secret}]},
                tool_response={"filePath": f, "structuredPatch": []}),
        payload("PostToolUse", cwd=tmp_path, tool_name="mcp__db__bulk_insert", tool_use_id="toolu_2",
                tool_input={"rows": [{"id": i, "payload": "y" * 500} for i in range(5_000)]},
                tool_response={"content": [{"type": "text", "text": "z" * 3_000_000}]}),
        payload("PostToolUse", cwd=tmp_path, tool_name="mcp__fs__write", tool_use_id="toolu_3",
                tool_input={"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": {"k": {"l": {"m": {"n": big}}}}}}}}}}}}}},
                tool_response="ok"),
    ]
    for p in sends:
        assert run_hook("PostToolUse", p, env={"LEDGER_HOME": home, "LEDGER_DB": db}).returncode == 0
    spool_settled(db, home)
    rows = store_sql(db, "SELECT tool, length(input), length(output) FROM observations ORDER BY step")
    assert [r[0] for r in rows] == ["MultiEdit", "mcp__db__bulk_insert", "mcp__fs__write"]
    for tool, n_in, n_out in rows:
        assert n_in <= 20_000 and n_out <= 4_000, (tool, n_in, n_out)
    assert tail_secret.encode() not in _stored_bytes(home, db)


def _obs(db) -> list[tuple]:
    return store_sql(db, "SELECT tool, input, output FROM observations ORDER BY step")


@pytest.mark.parametrize("raw_json, stored", [
    # the issue's example: stdout ends in a lone high surrogate
    ('"tool_response": {"stdout": "build ok \\ud83d", "stderr": ""}', "build ok \ufffd"),
    # a lone low surrogate in stderr, and one inside the input
    ('"tool_response": {"stdout": "", "stderr": "warn \\udc80 end"}', "warn \ufffd end"),
    ('"tool_response": {"stdout": "pair \\ud83d\\ude00 ok, lone \\udfff"}', "pair \U0001f600 ok, lone \ufffd"),
])
def test_lone_surrogates_are_stored_replaced(raw_json, stored, tmp_path, store_target):
    home = tmp_path / "home"
    body = ('{"session_id": "s", "cwd": "%s", "hook_event_name": "PostToolUse", "tool_name": "Bash", '
            '"tool_use_id": "t1", "tool_input": {"command": "make \\udc00"}, %s}' % (tmp_path, raw_json))
    r = run_hook("PostToolUse", body.encode(), env={"LEDGER_HOME": home, "LEDGER_DB": store_target})
    assert r.returncode == 0 and r.stdout == b""
    assert not (home / "hook.log").exists(), (home / "hook.log").read_text()
    spool_settled(store_target, home)
    [(tool, inp, out)] = _obs(store_target)
    assert stored in out
    assert json.loads(inp)["command"] == "make \ufffd"


@pytest.mark.parametrize("env", [
    {"PYTHONIOENCODING": "ascii"},
    {"PYTHONIOENCODING": "latin-1", "LC_ALL": "C"},
    {"PYTHONIOENCODING": "ascii:strict", "LANG": "C", "PYTHONUTF8": "0"},
])
def test_answers_are_utf8_bytes_whatever_the_encoding_variables(env, tmp_path, store_target):
    home = tmp_path / "home"
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "tasks.md").write_text("- réécrire le parseur — ✓ étape 1\n", encoding="utf-8")
    full = {"LEDGER_HOME": home, "LEDGER_DB": store_target, **env}
    r = run_hook("PreCompact", payload("PreCompact", cwd=tmp_path, trigger="auto"), env=full)
    assert r.returncode == 0, r
    text = r.stdout.decode("utf-8")
    assert text.startswith("## Session State (auto-injected by ledger — read this to resume)")
    assert "réécrire le parseur — ✓ étape 1" in text
    # SessionStart after compaction answers JSON: parseable and carries the same text.
    r = run_hook("SessionStart", payload("SessionStart", cwd=tmp_path, source="compact"), env=full)
    ctx = json.loads(r.stdout.decode("utf-8"))["hookSpecificOutput"]["additionalContext"]
    assert "réécrire le parseur — ✓ étape 1" in ctx
    assert not (home / "hook.log").exists()
