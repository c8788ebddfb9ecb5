"""Whatever is stored is redacted first (docs/architecture.md), on every path that writes
text into the store: ``remember`` (CLI, MCP, library), ``ingest`` and its chunks, an edit
of a claim's text, the watcher's observations and prompts (finding 4 of the fresh-user
pass of 2026-12-01: remember and ingest stored secrets that hooks then handed back into
the agent's context). ``import`` restores an export as it was exported.

Real ``ledger`` subprocesses and real ``ledger hook claude-code`` processes on a real
store, SQLite and PostgreSQL (the engine fixture). The secrets are fabricated."""

from __future__ import annotations

import json
import subprocess

from conftest import is_pg, store_sql
from fakes.hooks import context_of, payload, post_bash, pre_read, run_hook, wait_drained
from test_redact_formats import FINDING_3, FINDING_3_SECRETS

FACT = "deploy of config.py uses PGPASSWORD=filesecret99 always"
STORED = "deploy of config.py uses PGPASSWORD=[REDACTED:password] always"
ENV_FILE = ("DB_PASSWORD=hunter2\nAPI_KEY=sk-ant-" + "api03-AbCdEf0123456789_xyzXYZ-abc\n"
            "DEBUG=true\n# the staging host is db.internal\n")


def ok(rc: int, out: str, err: str) -> tuple[str, str]:
    assert rc == 0, err
    return out, err


def exported(cli) -> str:
    out, _ = ok(*cli("export"))
    return out


def test_remember_stores_the_redacted_text_and_says_so(cli, tmp_path):
    (tmp_path / "config.py").write_text("PORT=8080\n")
    out, err = ok(*cli("remember", FACT, "--cluster", "code", "--file", str(tmp_path / "config.py")))
    assert out.startswith("remembered m_")
    assert "1 secret replaced by [REDACTED:<kind>] before storing" in err
    d = json.loads(ok(*cli("remember", "--text", "The db password is Hunter2Staging! on staging", "--cluster", "code",
                           "--note", "said by token=Ab12Cd34Ef56", "--json"))[0])
    assert d["redacted"] == 2 and d["text"] == "The db password is [REDACTED:password] on staging"
    dump = exported(cli)
    for secret in ("filesecret99", "Hunter2Staging", "Ab12Cd34Ef56"):
        assert secret not in dump
    assert STORED in dump
    # The other words still find it; the secret finds nothing.
    assert STORED in ok(*cli("search", "deploy", "always", "--json"))[0]
    assert json.loads(ok(*cli("search", "filesecret99", "--json"))[0])["total"] == 0
    # A claim with nothing secret says nothing about redaction.
    out, err = ok(*cli("remember", "CI runs on Python 3.11", "--cluster", "code", "--json"))
    assert json.loads(out)["redacted"] == 0 and "REDACTED" not in err


def test_remember_from_stdin_is_redacted_too(cli):
    out, err = ok(*cli("remember", "-", "--cluster", "code", input="staging SENTRY_DSN=https://abc123def456@o1.ingest.sentry.io/1\n"))
    assert "abc123def456" not in exported(cli) and "[REDACTED:url-key]" in exported(cli)
    assert "replaced by [REDACTED" in err


def test_ingest_stores_redacted_chunks_and_says_so(cli, tmp_path):
    env = tmp_path / ".env"
    env.write_text(ENV_FILE)
    d = json.loads(ok(*cli("ingest", str(env), "--cluster", "code", "--json"))[0])
    assert d["redacted"] == 2 and d["chunks"] >= 1
    dump = exported(cli)
    assert "hunter2" not in dump and "sk-ant-" not in dump
    assert "DB_PASSWORD=[REDACTED:password]" in dump and "API_KEY=[REDACTED:anthropic-key]" in dump
    assert json.loads(ok(*cli("search", "hunter2", "--json"))[0])["total"] == 0
    assert json.loads(ok(*cli("search", "staging", "host", "--json"))[0])["total"] == 1
    # Re-ingesting the same file finds nothing changed: the stored chunks are the redacted ones.
    d = json.loads(ok(*cli("ingest", str(env), "--cluster", "code", "--json"))[0])
    assert d["updated"] and d["added"] == 0 and d["retired"] == 0
    # Stdin and --text take the same path; the person is told on stderr.
    _, err = ok(*cli("ingest", "-", "--cluster", "code", "--name", "notes", input="export DB_PASS='DbPass7'\nhello\n"))
    assert "1 secret replaced by [REDACTED:<kind>]" in err
    _, err = ok(*cli("ingest", "--text", "Password for staging is Hunter2Staging!", "--cluster", "code"))
    assert "1 secret replaced" in err
    dump = exported(cli)
    assert "DbPass7" not in dump and "Hunter2Staging" not in dump


def test_a_secret_cut_across_chunks_is_still_redacted(ledger):
    from ledger.ingest import source_from_text

    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx4Yk9Qm1a2b3c4d5e6f7\n" * 400 + "-----END RSA PRIVATE KEY-----\n"
    text = "# deploy notes\n\n" + "The deploy script reads the key below.\n\n" * 40 + key + "\nend of notes\n"
    res = ledger.ingest(source_from_text(text, "notes.md"), cluster="code", agent="t")
    assert res.chunks > 1 and res.redacted == 1
    texts = [m.text for m in ledger.export()]
    assert not any("MIIEowIBAAKCAQEA" in t for t in texts)


def test_ingest_chunks_redacts_each_chunk(ledger):
    res = ledger.ingest_chunks("bench.md", ["plain words here", "smtp_pass: SmtpPw6 and more words"], cluster="code",
                               agent="t")
    assert res.redacted == 1
    assert sorted(m.text for m in ledger.export()) == ["plain words here", "smtp_pass: [REDACTED:password] and more words"]


def test_already_redacted_text_is_not_marked_again(ledger):
    """The distiller hands remember facts it redacted already: stored once, counted 0."""
    res = ledger.remember(STORED, cluster="code", agent="t")
    assert res.memory.text == STORED and res.redacted == 0
    again = ledger.remember(FACT, cluster="code", agent="t")  # the raw text of the same fact
    assert again.duplicate and again.redacted == 1 and again.memory.id == res.memory.id


def test_edit_of_a_claim_is_redacted(ledger):
    m = ledger.remember("The staging login is documented in the wiki", cluster="code", agent="t").memory
    edited = ledger.update(m.id, text="The staging login is admin, auth: AuthOnly3")
    assert edited.text == "The staging login is admin, auth: [REDACTED:auth]"


def test_proposer_and_duplicates_work_on_redacted_text(ledger):
    a = ledger.remember("The server port is 8080 and DB_PASS=aaa111x", cluster="code", agent="t")
    b = ledger.remember("The server port is 9090 and DB_PASS=bbb222y", cluster="code", agent="t")
    assert not b.duplicate and b.proposed  # the changed port is still seen
    # Two values of one secret are the same stored fact: the store never knew them apart.
    c = ledger.remember("The server port is 9090 and DB_PASS=ccc333z", cluster="code", agent="t")
    assert c.duplicate and c.memory.id == b.memory.id
    assert "aaa111x" not in a.memory.text


def test_import_restores_what_was_exported(cli, new_store):
    ok(*cli("remember", FACT, "--cluster", "code"))
    dump = exported(cli)
    other = new_store("other")
    ok(*cli("import", "-", db=other, input=dump))
    out, _ = ok(*cli("export", db=other))
    texts = [json.loads(line)["text"] for line in out.splitlines() if '"record"' not in line]
    assert texts == [STORED]


def _hook(event: str, p: dict, db, home) -> subprocess.CompletedProcess:
    r = run_hook(event, p, env={"LEDGER_DB": str(db), "LEDGER_HOME": str(home)})
    assert r.returncode == 0, r.stderr
    return r


def test_hook_observation_and_prompt_are_redacted_and_handed_back_redacted(cli, store_target, tmp_path):
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "config.py").write_text("PORT=8080\n")
    # Finding 3: one Bash output holding every format; finding 3's last sentence: a prompt.
    _hook("PostToolUse", post_bash("cat x", stdout=FINDING_3, cwd=proj, session="sec"), store_target, home)
    _hook("UserPromptSubmit", payload("UserPromptSubmit", session="sec", cwd=proj,
                                      prompt="Deploy it. Password for staging is Hunter2Staging!"), store_target, home)
    if is_pg(store_target):
        wait_drained(store_target, home=home)  # the hooks' spool is under their $LEDGER_HOME
    # Finding 4: a remembered secret keyed to a file comes back on a Read of it, redacted.
    ok(*cli("remember", FACT, "--cluster", "code", "--file", str(proj / "config.py")))
    ctx = context_of(_hook("PreToolUse", pre_read(proj / "config.py", cwd=proj, session="other"), store_target,
                           home).stdout.decode())
    assert STORED in ctx and "filesecret99" not in ctx
    dump = exported(cli)
    for secret in (*FINDING_3_SECRETS, "Hunter2Staging", "filesecret99"):
        assert secret not in dump, secret
    prompts = [r[0] for r in store_sql(store_target, "SELECT text FROM session_prompts")]
    assert prompts == ["Deploy it. Password for staging is [REDACTED:password]"]
    assert "MY_SERVICE_AUTH=[REDACTED:auth]" in dump and "machine api.heroku.com login me password" in dump
    # Redacted once: no marker inside a marker.
    assert "[REDACTED:[REDACTED" not in dump and "REDACTED:password]]" not in dump
