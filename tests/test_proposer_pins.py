"""The contradiction proposer answers exactly what it answered when the pins were taken.

tests/data/proposer_pins.json holds 7,854 text pairs (labelled pairs, small edits of
their texts, unrelated pairs; ``scripts/pin-proposer`` says how they were made) with what
``propose`` and ``suspect`` answered at d262ab9, before the proposer was made cheaper
(cheaper peer filter, values read once). The duplicate verdicts were retaken when
``is_near_duplicate`` began to require the same words in the same order (400 pairs, a
word added, dropped, changed or moved, are no longer duplicates; propose and suspect
answered the same), and again when words of meaning stopped being filler and versions
and CJK-glued numbers began to be read (session 9: 36 answers moved, each a changed
word of meaning or a glued version now proposed, or a dropped state no longer a
duplicate), and in session 10 when lists of items of several lengths began to be
read (2 answers moved: "Gym on Tue and Thu, swimming on Sat" / "..., Android on Sat", a
replaced item, is now a ``changed list`` candidate). Any change to a candidate, its signals or its score, or to a
duplicate verdict, fails here; regenerate the pins only for a change meant to alter the
answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.conflicts.duplicates import is_near_duplicate, propose
from ledger.conflicts.signals import suspect

PINS = json.loads((Path(__file__).resolve().parent / "data" / "proposer_pins.json").read_text(encoding="utf-8"))


def _answer(s) -> list | None:
    return None if s is None else [s.overlap, list(s.signals), s.score]


def test_the_pins_cover_every_kind_of_answer():
    rows = PINS["pairs"]
    assert len(rows) > 7000
    signals = {name for r in rows if r[2] for name in r[2][1]}
    assert {"divergent numbers", "negation on one side", "opposite states", "changed value", "divergent times",
            "exclusive choices", "divergent weekdays", "divergent dates", "moved location", "replaced value"} <= signals
    assert sum(r[4] for r in rows) > 1000 and sum(r[2] is None for r in rows) > 4000


@pytest.mark.parametrize("part", range(4))
def test_proposer_answers_as_pinned(part):
    texts = PINS["texts"]
    wrong = []
    for i, j, proposed, suspected, duplicate in PINS["pairs"][part::4]:
        a, b = texts[i], texts[j]
        got = (_answer(propose(a, b)), _answer(suspect(a, b)), is_near_duplicate(a, b))
        if got != (proposed, suspected, duplicate):
            wrong.append((a, b, (proposed, suspected, duplicate), got))
    assert not wrong, f"{len(wrong)} pairs answered differently, e.g. {wrong[:3]}"


def test_answers_do_not_depend_on_what_was_read_before():
    # The proposer caches what it reads; a cold cache must answer as a warm one does.
    from ledger.conflicts import duplicates, signals, values

    texts = PINS["texts"]
    rows = PINS["pairs"][::37]
    for mod in (duplicates, signals, values):
        for f in vars(mod).values():
            if hasattr(f, "cache_clear"):
                f.cache_clear()
    for i, j, proposed, _, duplicate in rows:
        assert (_answer(propose(texts[i], texts[j])), is_near_duplicate(texts[i], texts[j])) == (proposed, duplicate)
