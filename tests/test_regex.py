"""Ledger's regular expressions built from stored matcher code (:mod:`ledger.regex`) are
the patterns ``re.compile`` builds: same object by equality (source, flags, matcher
code), same groups, same matches on many texts; the stored table is current and holds
every module that compiles through :mod:`ledger.regex`; anything it lacks falls back to
``re.compile``; the flag constants and :func:`ledger.regex.escape` are ``re``'s."""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ledger
from ledger import _regex_code, regen, regex

DATA = Path(__file__).parent / "data"
SRC = Path(ledger.__file__).resolve().parent
STORED = regex.stamp() == _regex_code.STAMP
needs_stored = pytest.mark.skipif(not STORED, reason=f"stored code is for {_regex_code.STAMP}, not {regex.stamp()}")


def _registered() -> list[tuple[str, int]]:
    """What the table holds: the patterns of regen.MODULES (imported above, through regen)."""
    return regen.patterns()


def _texts() -> list[str]:
    """Claims of the labelled pairs, their words shuffled into new sentences, and texts
    where ``re``'s IGNORECASE folding differs from ``str.lower`` (long s, Kelvin sign,
    dotted and dotless i, micro sign) or the classes meet non-ASCII digits and letters."""
    out: list[str] = []
    for name in ("conflict_pairs.jsonl", "conflict_pairs_fresh.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out += [row["a"], row["b"]]
    rng = random.Random(14)
    words = " ".join(out).split()
    out += [" ".join(rng.sample(words, rng.randint(3, 14))) for _ in range(600)]
    out += [
        "ſync mode is ON; ASYNC is oﬀ", "KELVIN: the cache is enabled at 5 K", "İs it DİSABLED? ıt is",
        "µs and μs: 3 µs timeout", "٣ seconds or ３ minutes", "moved from /var/lib/app to ~/.app/data.db",
        "Snake_Case vs CAMEL case; big-ENDIAN", "not allowed, n’t blocked, Didn’t ship", "4 P.M. or 16:00:30.5",
        "src/app.py, ./x/y.TS, .nvmrc, dist/", "MAY 3rd, in may, It may fail", "", "-", "a/b/c/", "x86_64 v2 3.11.2",
        # queries, slugs and terms (query.parser, text, terms)
        "since:3d strength:>40 cluster:code", "older:2mo  newer:1y  \t\n x", "Café au lait / c++ & node.js @scope/pkg",
        "ǅemo ＡＢＣ x_y__z ~/x k=v $HOME 50% *.py c# a&b", "データベース 설정 数据库 mixed with ASCII",
        # secret-shaped text (redact)
        "DB_PASSWORD=hunter2 api_key: 'Xy7#qq99' --token abc123XYZ mysql -u root -pS3cret",
        "Authorization: Bearer abcdef0123456789abcdef Cookie: sid=0123456789abcdef; lang=en",
        "postgresql://me:s3cr3t@db.example.com/app https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1",
        "machine api.example.com login bob password Pa55word!\npassword OnItsOwn1",
        "db.example.com:5432:app:alice:Pg!pass99 AccountKey=abc123+/==; ?sig=AbCdEf0123456789%2B",
        "The password for staging is Hunter2Staging! and the api key is `k3y-M4t3rial-99`",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- ghp_" + "a1" * 18,
        "sk-ant-" + "x9" * 12 + " AKIA" + "Z" * 16 + " eyJhbGciOi.eyJzdWIiOi.sig xoxb-1234567890-abc",
    ]
    # Lines of the redaction tests, which are full of secrets in every format.
    for name in ("test_watcher_redact.py", "test_redact_formats.py"):
        out += (Path(__file__).parent / name).read_text(encoding="utf-8").splitlines()
    return out


@needs_stored
def test_every_pattern_is_served_from_the_stored_code():
    table = regex._stored()
    missing = [p for p in _registered() if p not in table]
    assert not missing, f"run scripts/regen-patterns: {missing}"


@needs_stored
def test_stored_table_is_current():
    """The file is what scripts/regen-patterns writes now, from a fresh interpreter (so
    patterns other tests compiled in this process do not count)."""
    r = subprocess.run([sys.executable, "-c", "import sys; from ledger.regen import generate; sys.stdout.write(generate())"],
                       capture_output=True, text=True, check=True)
    assert Path(_regex_code.__file__).read_text(encoding="utf-8") == r.stdout, "run scripts/regen-patterns"


def _imports_regex(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "ledger.regex":
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "ledger":
            if any(a.name == "regex" for a in node.names):
                return True
        if isinstance(node, ast.ImportFrom) and node.level > 0 and (node.module or "").endswith("regex"):
            return True
        if isinstance(node, ast.Import) and any(a.name == "ledger.regex" for a in node.names):
            return True
    return False


def test_the_generator_imports_every_module_that_compiles_through_regex():
    """A module compiling through ledger.regex that regen does not import would never get
    its patterns into the table (they would silently fall back to re.compile)."""
    users = sorted("ledger." + ".".join(p.relative_to(SRC).with_suffix("").parts) for p in SRC.rglob("*.py")
                   if p.name not in ("regex.py", "regen.py") and _imports_regex(p))
    assert {"ledger.text", "ledger.terms", "ledger.query.parser", "ledger.redact", "ledger.conflicts.values"} <= set(users)
    r = subprocess.run([sys.executable, "-c", "import sys, ledger.regen; print(' '.join(sys.modules))"],
                       capture_output=True, text=True, check=True)
    loaded = set(r.stdout.split())
    assert [u for u in users if u not in loaded] == [], "add them to ledger.regen's imports and MODULES"


def test_flag_constants_are_re_s():
    assert (regex.IGNORECASE, regex.MULTILINE, regex.DOTALL, regex.UNICODE, regex.VERBOSE, regex.ASCII) == (
        re.IGNORECASE, re.MULTILINE, re.DOTALL, re.UNICODE, re.VERBOSE, re.ASCII)


def test_escape_is_re_escape():
    rng = random.Random(3)
    texts = ["", "".join(map(chr, range(128))), "+#@/.-_~:=&%$*\\", "a.b|c (d) [e] {f} ^g$ é ß ☃ \x00\n\t\v\f\r"]
    texts += ["".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)])) for _ in range(rng.randint(1, 30)))
              for _ in range(300)]
    for t in texts:
        assert regex.escape(t) == re.escape(t), t
        assert regex.compile(regex.escape(t)).fullmatch(t)


def test_lazy_registers_at_once_and_compiles_once(monkeypatch):
    monkeypatch.setattr(regex, "REGISTERED", [])
    lazy = regex.Lazy(r"(?P<k>\w+)=(?P<v>\S+)", regex.ASCII | regex.IGNORECASE)
    assert regex.REGISTERED == [(r"(?P<k>\w+)=(?P<v>\S+)", regex.ASCII | regex.IGNORECASE)]
    assert lazy._compiled is None  # nothing compiled yet
    p = lazy.get()
    assert p is lazy.get() and p == re.compile(r"(?P<k>\w+)=(?P<v>\S+)", re.ASCII | re.IGNORECASE)
    assert p.match("KEY=val").group("v") == "val"
    with pytest.raises(re.error):
        regex.Lazy("(unclosed").get()


@pytest.mark.parametrize("pattern,flags", _registered())
def test_built_pattern_equals_re_compile(pattern, flags):
    built, plain = regex.compile(pattern, flags), re.compile(pattern, flags)
    assert built == plain  # Pattern equality: source, flags and matcher code
    assert (built.groups, built.groupindex, built.flags) == (plain.groups, plain.groupindex, plain.flags)


def test_built_patterns_match_the_same_spans():
    texts = _texts()
    for pattern, flags in _registered():
        built, plain = regex.compile(pattern, flags), re.compile(pattern, flags)
        for t in texts:
            got = [(m.span(), m.groups(), m.lastgroup) for m in built.finditer(t)]
            want = [(m.span(), m.groups(), m.lastgroup) for m in plain.finditer(t)]
            assert got == want, (pattern, t)
            assert built.sub("#", t) == plain.sub("#", t)


def test_unknown_pattern_falls_back_to_re_compile(monkeypatch):
    monkeypatch.setattr(regex, "REGISTERED", [])  # keep the generator's list to the package's
    p = regex.compile(r"(?P<x>zz+)y", re.IGNORECASE)
    assert p == re.compile(r"(?P<x>zz+)y", re.IGNORECASE) and p.groupindex == {"x": 1}
    with pytest.raises(re.error):
        regex.compile(r"(unclosed")


def test_other_engine_ignores_the_stored_code(monkeypatch):
    pattern, flags = _registered()[0]
    monkeypatch.setattr(regex, "_table", None)
    monkeypatch.setattr(regex, "REGISTERED", [])
    monkeypatch.setattr(regex, "stamp", lambda: "cpython-9.9 sre 0/4 unicode 0")
    assert regex._stored() == {}
    assert regex.compile(pattern, flags) == re.compile(pattern, flags)


def test_an_engine_without_magic_gets_a_stamp_no_table_carries(monkeypatch):
    import _sre

    monkeypatch.delattr(_sre, "MAGIC")
    assert "sre None/" in regex.stamp() and regex.stamp() != _regex_code.STAMP
