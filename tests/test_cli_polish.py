"""A fresh user's findings on the CLI (2026-12-01), each kept as a case of its kind and
run through the real ``ledger`` command in a subprocess on a real store (SQLite and
PostgreSQL): filters agree with what is shown, pasted help examples survive a shell,
queries and facts that start with ``-`` get a hint, and errors say what to do."""

from __future__ import annotations

import json

from test_cli import ok


def _hits(out: str) -> list[dict]:
    return json.loads(out)["hits"]


# ------------------------------------------------------ 1: strength: compares what is shown
def test_strength_filter_agrees_with_the_strength_shown(cli):
    """Claims just remembered are shown as 51 (0.17 + 0.34 x fresh, a hair under 0.51):
    ``strength:<51`` found them all and ``strength:>50`` too."""
    for text in ("Staging deploys need the VPN up", "The API rate limit is 100 per minute",
                 "Jenkins builds run on the old runner"):
        ok(*cli("remember", text, "--cluster", "proc"))
    rc, out, err = cli("search", "", "--json")
    shown = [h["strength"] for h in _hits(ok(rc, out, err))]
    assert len(shown) == 3 and all(round(s * 100) == 51 for s in shown)
    table = ok(*cli("search", "")).splitlines()[1:]
    assert len(table) == 3 and all(line.split()[2] == "51" for line in table), table
    for query, n in [("strength:<51", 0), ("strength:>50", 3), ("strength:<52", 3), ("strength:>51", 0),
                     ("runner strength:>50", 1), ("runner strength:<51", 0)]:
        assert len(_hits(ok(*cli("search", query, "--json")))) == n, query
    assert "nothing remembered" in ok(*cli("recall", "deploys strength:<51"))
    assert "VPN" in ok(*cli("recall", "deploys strength:>50"))
