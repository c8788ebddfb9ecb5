"""One age formatter: ``ledger.termfmt.age``/``ago`` in Python and ``age``/``ago`` in the
web UI's ``dom.js`` give the same text at every boundary (seconds, minutes, hours, days,
months, years, and future instants from a skewed clock), and the CLI says it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ledger.termfmt import age, ago

S, M, H, D = 1000, 60_000, 3_600_000, 86_400_000
JS = Path(__file__).resolve().parent.parent / "src" / "ledger" / "web" / "static" / "js"

# (ms ago, compact, phrase). Negative = the instant is in the future.
CASES = [
    (0, "now", "just now"),
    (9_999, "now", "just now"),
    (-9_999, "now", "just now"),
    (10 * S, "10s", "10s ago"),
    (59_999, "59s", "59s ago"),
    (M, "1m", "1m ago"),
    (59 * M + 59 * S, "59m", "59m ago"),
    (H, "1h", "1h ago"),
    (H - 1, "59m", "59m ago"),
    (23 * H + 59 * M, "23h", "23h ago"),
    (D, "1d", "1d ago"),
    (59 * D + 23 * H, "59d", "59d ago"),
    (60 * D, "2mo", "2mo ago"),
    (200 * D, "7mo", "7mo ago"),
    (364 * D, "11mo", "11mo ago"),
    (365 * D, "1y", "1y ago"),
    (int(1.5 * 365 * D), "1.5y", "1.5y ago"),
    (10 * 365 * D, "10y", "10y ago"),
    (-5 * M, "in 5m", "in 5m"),
    (-12 * S, "in 12s", "in 12s"),
    (-2 * D, "in 2d", "in 2d"),
]


@pytest.mark.parametrize("delta, compact, phrase", CASES)
def test_python_age_boundaries(delta, compact, phrase):
    assert age(delta) == compact
    assert ago(delta) == phrase
    assert "now ago" not in phrase and not phrase.startswith("in -")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_web_ui_formats_ages_exactly_like_python():
    now = 1_800_000_000_000
    code = (f"import {{ age, ago }} from '{JS.as_uri()}/dom.js';"
            f"const now = {now}; const ds = {json.dumps([c[0] for c in CASES])};"
            "console.log(JSON.stringify(ds.map((d) => [age(now - d, now), ago(now - d, now)])));")
    out = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == [[c[1], c[2]] for c in CASES]


def test_cli_says_just_now_seconds_after_a_read(cli):
    rc, out, err = cli("remember", "The build cache lives in /var/cache/build", "--cluster", "code")
    assert rc == 0, err
    mid = out.split()[1]
    cli("recall", "build cache")
    rc, out, err = cli("show", mid)
    assert rc == 0, err
    assert "last read just now" in out, out
    rc, out, err = cli("search", "build cache")
    assert rc == 0 and out.splitlines()[1].rstrip().endswith("now"), out
    assert " 1h" not in out
