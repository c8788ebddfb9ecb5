"""The proposer's regular expressions built from stored matcher code
(:mod:`ledger.conflicts.patterns`) are the patterns ``re.compile`` builds: same object
by equality (source, flags, matcher code), same groups, same matches on many texts; the
stored table is current; anything it lacks falls back to ``re.compile``."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

import ledger.conflicts.duplicates  # noqa: F401 - registers every pattern of the package
from ledger.conflicts import _pattern_code, patterns, regen

DATA = Path(__file__).parent / "data"
STORED = patterns.stamp() == _pattern_code.STAMP
needs_stored = pytest.mark.skipif(not STORED, reason=f"stored code is for {_pattern_code.STAMP}, not {patterns.stamp()}")


def _registered() -> list[tuple[str, int]]:
    return list(dict.fromkeys(patterns.REGISTERED))


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
    ]
    return out


@needs_stored
def test_every_pattern_is_served_from_the_stored_code():
    table = patterns._stored()
    missing = [p for p in _registered() if p not in table]
    assert not missing, f"run scripts/regen-patterns: {missing}"


@needs_stored
def test_stored_table_is_current():
    path = Path(_pattern_code.__file__)
    assert path.read_text(encoding="utf-8") == regen.generate(), "run scripts/regen-patterns"


@pytest.mark.parametrize("pattern,flags", _registered())
def test_built_pattern_equals_re_compile(pattern, flags):
    built, plain = patterns.compile(pattern, flags), re.compile(pattern, flags)
    assert built == plain  # Pattern equality: source, flags and matcher code
    assert (built.groups, built.groupindex, built.flags) == (plain.groups, plain.groupindex, plain.flags)


def test_built_patterns_match_the_same_spans():
    texts = _texts()
    for pattern, flags in _registered():
        built, plain = patterns.compile(pattern, flags), re.compile(pattern, flags)
        for t in texts:
            got = [(m.span(), m.groups(), m.lastgroup) for m in built.finditer(t)]
            want = [(m.span(), m.groups(), m.lastgroup) for m in plain.finditer(t)]
            assert got == want, (pattern, t)
            assert built.sub("#", t) == plain.sub("#", t)


def test_unknown_pattern_falls_back_to_re_compile(monkeypatch):
    monkeypatch.setattr(patterns, "REGISTERED", [])  # keep the generator's list to the package's
    p = patterns.compile(r"(?P<x>zz+)y", re.IGNORECASE)
    assert p == re.compile(r"(?P<x>zz+)y", re.IGNORECASE) and p.groupindex == {"x": 1}
    with pytest.raises(re.error):
        patterns.compile(r"(unclosed")


def test_other_engine_ignores_the_stored_code(monkeypatch):
    pattern, flags = _registered()[0]
    monkeypatch.setattr(patterns, "_table", None)
    monkeypatch.setattr(patterns, "REGISTERED", [])
    monkeypatch.setattr(patterns, "stamp", lambda: "cpython-9.9 sre 0/4 unicode 0")
    assert patterns._stored() == {}
    assert patterns.compile(pattern, flags) == re.compile(pattern, flags)


def test_an_engine_without_magic_gets_a_stamp_no_table_carries(monkeypatch):
    import _sre

    monkeypatch.delattr(_sre, "MAGIC")
    assert "sre None/" in patterns.stamp() and patterns.stamp() != _pattern_code.STAMP
