"""A sign, a currency or any other symbol is part of a claim's value: the token
characters dropped them, and the signals read none, so "the threshold is -0.5" after "the
threshold is 0.5", "costs £5" after "costs €5" and "the CI status is ❌" after "... ✅" were
counted as the stored claim again and the new value was lost; so were names that differ
only in their separators ("app.cfg" / "app_cfg"). Pure checks of ``is_near_duplicate``, then the store (both engines) and
the real CLI."""

from __future__ import annotations

import json

import pytest
from test_cli import ok, remember

from ledger.conflicts.duplicates import is_near_duplicate

# (stored, new): each a new claim, in both orders.
CHANGED = [
    ("the threshold is 0.5", "the threshold is -0.5"),
    ("the offset is -3 px", "the offset is +3 px"),
    ("the offset is 3 px", "the offset is −3 px"),  # U+2212 MINUS SIGN
    ("the learning rate decays by 1e-3 to -1", "the learning rate decays by 1e-3 to 1"),
    ("a seat costs €5", "a seat costs £5"),
    ("a seat costs $5 per month", "a seat costs ¥5 per month"),
    ("the plan is 20 USD or €18", "the plan is 20 USD or ₹18"),
    ("the regex is a+", "the regex is a*"),
    ("the operator is +", "the operator is -"),
    ("the tolerance is ±2 ms", "the tolerance is 2 ms"),
    ("the kernel is 3×3", "the kernel is 3-3"),
    # any other symbol: emoji, arrows, degrees, version operators, a '#' glued to a name
    ("the CI status is ✅", "the CI status is ❌"),
    ("✓ the lint step passes", "✗ the lint step passes"),
    ("data flows api → db", "data flows api ← db"),
    ("the angle is 90°", "the angle is 90"),
    ("rating: ★★★", "rating: ★★"),
    ("the shortcut is ⌘K", "the shortcut is ⌥K"),
    ("requires ~=3.10", "requires ==3.10"),
    ("requires ^1.2", "requires ~1.2"),
    ("the language is C#", "the language is C"),
    ("see issue #123 for the crash", "see issue 123 for the crash"),
    ("the separator is '|'", "the separator is ','"),
    # a one-letter option in capitals is another option (its case is its meaning)
    ("use ls -R for trees", "use ls -r for trees"),
    ("git log -n limits commits", "git log -N limits commits"),
    # a name with other separators is another name (the sequence reads each as a space)
    ("the settings file is app.cfg", "the settings file is app_cfg"),
    ("the env var is FOO_BAR", "the env var is FOO.BAR"),
    ("the share is mounted at a/b", "the share is mounted at a\\b"),
    ("the host is db-prod.internal", "the host is db.prod.internal"),
    # punctuation that is the value (the hostile-user pass's second round): a per cent,
    # per mille, star or ampersand inside a word, and punctuation standing alone
    ("the error rate is 50%", "the error rate is 50‰"),
    ("the error budget is 5%", "the error budget is 5"),
    ("the glob is **/*.py", "the glob is *.py"),
    ("pin numpy to 1.2.*", "pin numpy to 1.2"),
    ("the separator is ;", "the separator is ,"),
    ("chain the steps with && in ci.sh", "chain the steps with ; in ci.sh"),
    ("end the options with -- before paths", "end the options with ; before paths"),
    ("the cable is 5′ long", "the cable is 5″ long"),
]

# (stored, new): the same claim.
SAME = [
    ("The threshold is -0.5", "the threshold is -0.5."),
    ("the offset is -3 px", "the offset is −3 px"),  # hyphen or minus sign
    ("A seat costs $5 per month", "a seat costs $5 per month!"),
    ("ＰＲＩＣＥ ＄５ per seat", "price $5 per seat"),  # fullwidth
    ("pages 1-2 cover the --dry-run flag", "Pages 1-2 cover the --dry-run flag."),
    ("The CI status is ✅", "the CI status is ✅."),
    ("## Setup needs make", "Setup needs make"),  # a heading's '#' stands apart
    ("Use ls -R for trees", "use ls -R for trees."),
    ("the range A-B is closed", "the range a-b is closed"),  # no option: case folds
    ("Run docker compose up -d to start", "RUN DOCKER COMPOSE UP -D TO START!"),  # all capitals
    ("the settings file is app.cfg", "The settings file is app.cfg."),
    ("the env var is FOO_BAR", "the env var is foo_bar"),  # case alone folds
    ("the error rate is 50%", "The error rate is 50%."),
    ("the separator is ;", "The separator is ;"),
    ("R&D owns the roadmap", "R&D owns the roadmap."),
    ("we lint - then we test", "we lint — then we test"),  # dashes are prose
    ("* the build uses a cache", "the build uses a cache"),  # a bullet
]


@pytest.mark.parametrize("a, b", CHANGED)
def test_a_changed_sign_or_currency_is_no_duplicate(a, b):
    assert not is_near_duplicate(a, b) and not is_near_duplicate(b, a)


@pytest.mark.parametrize("a, b", SAME)
def test_the_same_sign_or_currency_is_a_duplicate(a, b):
    assert is_near_duplicate(a, b) and is_near_duplicate(b, a)


@pytest.mark.parametrize("a, b", CHANGED[:1] + CHANGED[4:5])
def test_the_store_keeps_the_new_value(ledger, a, b):
    first = ledger.remember(a, cluster="code", agent="alice")
    second = ledger.remember(b, cluster="code", agent="alice")
    assert not second.duplicate and second.memory.id != first.memory.id and second.memory.text == b


def test_the_cli_keeps_the_new_value(cli):
    picked = [CHANGED[0], CHANGED[4], CHANGED[7], CHANGED[11]]
    for (a, b), cluster in zip(picked, ("projects", "money", "code", "proc")):
        first = remember(cli, a, cluster)
        res = json.loads(ok(*cli("remember", b, "--cluster", cluster, "--json")))
        assert not res["duplicate"] and res["id"] != first and res["text"] == b, (a, b, res)
    first = remember(cli, "the offset is -3 px", "prefs")
    res = json.loads(ok(*cli("remember", "the offset is −3 px", "--cluster", "prefs", "--json")))
    assert res["duplicate"] and res["id"] == first
