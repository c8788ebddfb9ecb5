"""redact / bound / clip: secrets never leave the process; long text keeps head and tail.

The secrets below are fabricated in the documented formats (no real credentials).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.redact import bound, clip, redact

# Built by concatenation so secret scanners do not flag this file.
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH"
GHO = "gho_" + "z" * 20 + "0123456789abcdef"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
OPENAI = "sk-" + "proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0"
OPENAI_OLD = "sk-" + "T3BlbkFJ" + "abcdefghijklmnopqrstuvwx"
ANTHROPIC = "sk-ant-" + "api03-" + "AbCdEf0123456789_xyzXYZ-abcdefghij"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx4Yk9Qm1a2b3c4d5e6f7\n" * 5
       + "-----END RSA PRIVATE KEY-----")
OPENSSH = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n" * 3
           + "-----END OPENSSH PRIVATE KEY-----")


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        (f"key:\n{PEM}\nafter", "MIIEowIBAAKCAQEA", "private-key"),
        (f"{OPENSSH}\n", "b3BlbnNzaC1rZXkt", "private-key"),
        (f"aws_access_key_id = {AWS}", AWS, "aws-access-key"),
        (f"remote: {GHP}", GHP, "github-token"),
        (f"GH={GITHUB_PAT} ", GITHUB_PAT, "github-token"),
        (f"oauth {GHO}.", GHO, "github-token"),
        (f"export OPENAI_API_KEY={OPENAI}", OPENAI, "openai-key"),
        (f"key {OPENAI_OLD}", OPENAI_OLD, "openai-key"),
        (f"ANTHROPIC_API_KEY='{ANTHROPIC}'", ANTHROPIC, "anthropic-key"),
        (f"SLACK_BOT={SLACK}", SLACK, "slack-token"),
        (f"cookie: session={JWT}; path=/", JWT, "jwt"),
        ('curl -H "Authorization: Bearer abc.DEF-123_456xyz" https://api.x', "abc.DEF-123_456xyz",
         "bearer-token"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "bearer-token"),
        ('{"headers": {"authorization": "Token 9f8e7d6c5b4a39281706"}}', "9f8e7d6c5b4a39281706",
         "bearer-token"),
        ("sent bearer 0123456789abcdefABCDEF", "0123456789abcdefABCDEF", "bearer-token"),
        ("password=hunter2", "hunter2", "password"),
        ("DB_PASSWORD: 's3cr3t!'", "s3cr3t!", "password"),
        ('{"db": {"password": "correct horse battery"}}', "correct horse battery", "password"),
        ("client_secret = abcdef123456", "abcdef123456", "secret"),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "wJalrXUtnFEMI/K7MDENG", "secret"),
        ("secret_key_base: \"Zx9Yw8Vu7Ts6\"", "Zx9Yw8Vu7Ts6", "secret"),
        ("GITLAB_TOKEN=abcdefghij123", "abcdefghij123", "token"),
        ("access_token: ya29.a0AfH6SMB", "ya29.a0AfH6SMB", "token"),
        ("[auth]\napi_key = 1234abcd5678efgh", "1234abcd5678efgh", "api-key"),
        ("https://example.com/cb?api-key=QWERTY123&x=1", "QWERTY123", "api-key"),
        ("mysql --password s3cr3tPass -u root", "s3cr3tPass", "password"),
        ("gh auth --token=abcDEF123456", "abcDEF123456", "token"),
        ("postgres://admin:Pa55w0rd@db.example.com:5432/app", "Pa55w0rd", "url-password"),
        ("redis://:hunter22@cache:6379/0", "hunter22", "url-password"),
        # issue 12: passwords in client flags not spelled "password"
        ("mysql -h db -u root -pS3cretPw shop", "S3cretPw", "password"),
        ("mysqldump -uroot -p'qu0ted pass' app > a.sql", "qu0ted pass", "password"),
        ("sshpass -p hunter22x ssh deploy@host", "hunter22x", "password"),
        ("redis-cli -h cache -a Zz9secret ping", "Zz9secret", "password"),
        ("docker login -u me -p Tok3nValue registry.example.com", "Tok3nValue", "password"),
        ("curl -u bob:Pa55word https://api.example.com", "Pa55word", "password"),
        # cloud storage connection strings and SAS signatures
        ("AccountName=a;AccountKey=QUJDREVGR0g0123==;EndpointSuffix=core.windows.net", "QUJDREVGR0g0123",
         "cloud-storage-key"),
        ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey=c2VjcmV0a2V5MTIz=",
         "c2VjcmV0a2V5MTIz", "cloud-storage-key"),
        ("https://a.blob.core.windows.net/c/f?sv=2022-11-02&sig=AbCdEfGhIjKlMnOpQrSt%3D", "AbCdEfGhIjKlMnOpQrSt",
         "cloud-storage-key"),
        # .env lines whose key does not end in password/secret/token
        ("DB_PWD=abc123", "abc123", "password"),
        ("JWT_SIGNING_KEY=zzz999yyy", "zzz999yyy", "secret"),
        ("ENCRYPTION_KEY='0123abcd4567'", "0123abcd4567", "secret"),
        # more token formats (payment, chat, registries, cloud)
        ("whsec_" + "AbCdEfGhIjKlMnOpQrStUvWx12", "AbCdEfGhIjKlMnOpQrStUvWx12", "stripe-webhook-secret"),
        ("sq0atp-" + "AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv", "square-token"),
        ("https://discord.com/api/webhooks/1234567890/" + "AbCdEf_GhIjKl-MnOp", "AbCdEf_GhIjKl-MnOp",
         "discord-webhook"),
        ("SG." + "A" * 22 + "." + "b" * 43, "b" * 43, "sendgrid-key"),
        ("dop_v1_" + "a1" * 32, "a1" * 32, "digitalocean-token"),
    ],
)
def test_each_secret_kind_is_redacted(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert redact(out) == out


def test_key_names_and_context_survive() -> None:
    out = redact("export OPENAI_API_KEY=" + OPENAI + "\nDB_PASSWORD=hunter2\n")
    assert out == "export OPENAI_API_KEY=[REDACTED:openai-key]\nDB_PASSWORD=[REDACTED:password]\n"
    out = redact('{"token": "abc123xyz", "user": "bob"}')
    assert out == '{"token": "[REDACTED:token]", "user": "bob"}'
    assert redact("postgres://admin:Pa55w0rd@db:5432/x") == (
        "postgres://admin:[REDACTED:url-password]@db:5432/x")
    assert redact('-H "Authorization: Bearer abcdef123456"') == (
        '-H "Authorization: Bearer [REDACTED:bearer-token]"')


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog.",
        "def tokenize(text):\n    return text.split()\n",
        "max_tokens: 4096\nnum_tokens = 12\ntokenizer=bpe\ntoken_count: 7",
        "PASSWORD_FILE=/run/secrets/db\npassword_hash = 'abc'",
        "token = get_token()\nsecret = settings.SECRET\npassword: str\napi_key: Optional[str]",
        "password = os.environ['DB_PASSWORD']",
        'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1',
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "password=\ntoken: null\nsecret: true\npassword: <your password>\napi_key=***",
        "cli --token TEXT    API token to use\n  --password PASSWORD",
        "authorization: required for this endpoint",
        "see https://example.com/path?q=1 and git@github.com:org/repo.git",
        "ssh user@host.example.com -p 22; scp a.txt user@host:/tmp/",
        "sk-learn is not a key; risk-assessment-document-for-q3",
        "count_highs_and_lows_over_the_whole_period = laughs_per_minute_in_the_dataset",
        "commit 3f2a9c1b7e0d4a5b6c7d8e9f0a1b2c3d4e5f6a7b",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "AKIA is a prefix; AKIAshort",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC user@host",
        "",
    ],
)
def test_non_secrets_are_untouched(text: str) -> None:
    assert redact(text) == text


def test_unterminated_private_key_is_still_redacted() -> None:
    cut = PEM[: len(PEM) // 2]
    out = redact("before\n" + cut)
    assert "MIIEowIBAAKCAQEA" not in out
    assert out.startswith("before\n[REDACTED:private-key]")


def test_multiple_secrets_in_one_env_dump() -> None:
    env = "\n".join([
        "HOME=/home/u", f"GITHUB_TOKEN={GHP}", f"AWS_ACCESS_KEY_ID={AWS}",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "PATH=/usr/bin",
        f"ANTHROPIC_API_KEY={ANTHROPIC}", "EDITOR=vim",
    ])
    out = redact(env)
    for secret in (GHP, AWS, "wJalrXUtnFEMIK7MDENG", ANTHROPIC):
        assert secret not in out
    for keep in ("HOME=/home/u", "PATH=/usr/bin", "EDITOR=vim"):
        assert keep in out


# --------------------------------------------------------------------------- properties

FRAGMENTS = [
    GHP, AWS, OPENAI, ANTHROPIC, SLACK, JWT, PEM, PEM[:60], "password", "token", "secret",
    "api_key", "Authorization", "Bearer ", "://", "u:p@", "=", ": ", '"', "'", " ", "\n",
    "[REDACTED:token]", "-----BEGIN ", "PRIVATE KEY-----", "--password ", "$X", "sk-", "eyJ",
    "abc123XYZ", ".", "-", "_", "{", "}", "]", "@",
]
secretish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=25).map("".join)
SEPARATORS = [" ", "\n", "=", ": ", '"', "'", ",", "(", ")", "\t", ";", "/"]
# Secrets delimited the way they appear in real text (any separator, any neighbours).
delimited = st.lists(
    st.tuples(st.sampled_from(SEPARATORS), st.sampled_from(FRAGMENTS) | st.text(max_size=8)),
    max_size=20,
).map(lambda pairs: "".join(sep + frag for sep, frag in pairs))


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300) | secretish)
def test_redact_never_raises_and_is_idempotent(text: str) -> None:
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


@settings(max_examples=300, deadline=None)
@given(delimited)
def test_known_secrets_never_survive(text: str) -> None:
    out = redact(text)
    for secret in (GHP, AWS, OPENAI, ANTHROPIC, SLACK, JWT):
        if secret in text:
            assert secret not in out


# --------------------------------------------------------------------------- bound / clip


def test_bound_short_text_unchanged() -> None:
    assert bound("hello", 10) == "hello"
    assert bound("hello", 5) == "hello"


def test_bound_keeps_head_and_tail_with_marker() -> None:
    text = "HEAD" + "x" * 1000 + "TAIL"
    out = bound(text, 100)
    assert len(out) <= 100
    assert out.startswith("HEAD") and out.endswith("TAIL")
    n = int(out.split("[")[1].split(" chars cut]")[0])
    assert "…" in out
    assert len(out) - len(out.split("\n… [")[0]) - len(out.split("] …\n")[1]) > 0
    assert n == len(text) - (len(out.split("\n… [")[0]) + len(out.split("] …\n")[1]))


def test_bound_tiny_caps() -> None:
    assert bound("abcdef", 3) == "abc"
    assert bound("abcdef", 0) == ""


@given(st.text(max_size=500), st.integers(min_value=0, max_value=600))
def test_bound_never_exceeds_cap(text: str, cap: int) -> None:
    out = bound(text, cap)
    assert len(out) <= cap
    if len(text) <= cap:
        assert out == text


def test_clip_redacts_and_bounds_huge_text() -> None:
    text = f"token={GHP}\n" + "x" * 300_000 + f"\npassword=hunter2\n{AWS}"
    out = clip(text, 2000)
    assert len(out) <= 2000
    assert GHP not in out and "hunter2" not in out and AWS not in out
    assert "[REDACTED:github-token]" in out and "[REDACTED:aws-access-key]" in out
    n = int(out.split("\n… [")[1].split(" chars cut]")[0])
    assert 290_000 < n < len(text)


def test_clip_secret_straddling_the_cut_is_not_exposed() -> None:
    # A private key whose body straddles where the head window ends.
    text = "a" * 1000 + PEM * 3 + "b" * 50_000
    out = clip(text, 1500)
    assert "MIIEowIBAAKCAQEA" not in out
