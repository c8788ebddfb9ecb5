"""A realistic demo store for the web UI's end-to-end tests and screenshots.

Built only through the :class:`ledger.service.Ledger` facade, with a clock that walks
through the last ~120 days, so the Canvas timeline and the as-of scrubber have history:
claims by several agents, recalls (hits, corroboration), reviewed, pinned and pending
claims, three judged conflicts, unjudged candidates, linked pairs, ingested documents
with a distilled claim, and memories forgotten along the way.
"""

from __future__ import annotations

import random
import time

from ledger.clock import DAY_MS, FixedClock
from ledger.service import Ledger

HOUR_MS = 3_600_000

AGENTS = ("claude", "codex", "opencode", "watcher")

CLAIMS = [
    ("code", "CI runs the test suite on Python 3.11 and 3.12 in GitHub Actions"),
    ("code", "The store module is the only place that imports sqlite3"),
    ("code", "Migrations are append-only and applied when the store opens"),
    ("code", "Use BEGIN IMMEDIATE for every write transaction to avoid lock upgrades"),
    ("code", "The web UI is vanilla JavaScript modules with no build step"),
    ("code", "Frontend assets are served from src/ledger/web/static"),
    ("code", "Search ranking is 0.75 relevance plus 0.25 strength"),
    ("code", "The harness hooks must import nothing outside the standard library"),
    ("code", "pytest runs with filterwarnings set to error"),
    ("code", "The TUI is built with Textual and shares the review keys with the web UI"),
    ("code", "Ruff formats the code with a line length of 120"),
    ("code", "The API returns errors as JSON with an error message and a kind"),
    ("proc", "Releases are tagged from main after the changelog is updated"),
    ("proc", "Deploys go out on Tuesdays and Thursdays before 15:00"),
    ("proc", "Every pull request needs one approving review before merge"),
    ("proc", "Run the benchmarks on an idle machine and report ratios, not single times"),
    ("proc", "Hotfixes branch from the last release tag, never from main"),
    ("proc", "The on-call rotation changes every Monday at 09:00"),
    ("projects", "The ledger v0.2 milestone is the web UI and the review TUI"),
    ("projects", "The LoCoMo retrieval target is recall@10 of at least 80"),
    ("projects", "The watcher distills findings every 15 steps"),
    ("projects", "Session checkpoints are written to .agents/checkpoint.md"),
    ("prefs", "Prefers small focused commits with imperative subject lines"),
    ("prefs", "Prefers type hints on every public function"),
    ("prefs", "Likes error messages that say what to do next"),
    ("prefs", "Wants dark themes with monospace accents in every tool"),
    ("people", "Maya owns the store and the migration code"),
    ("people", "Tomas reviews every change to the conflict pipeline"),
    ("people", "Priya maintains the Claude Code harness adapter"),
    ("reading", "SQLite FTS5 bm25 returns lower scores for better matches"),
    ("reading", "WAL mode lets readers and one writer work at the same time"),
    ("health", "Takes a walk after lunch; do not schedule calls 13:00 to 14:00"),
    ("money", "The CI runner budget is 2000 minutes per month"),
    ("home", "The build server in the closet is named tortoise"),
    ("travel", "Team offsite is in Lisbon in the first week of June"),
]

# Pairs written later that contradict an earlier claim (the store proposes them; an agent
# judges them conflicts with the kind given).
CONTRADICTIONS = [
    ("proc", "Deploys go out on Wednesdays and Fridays before 11:00", "stale schedule"),
    ("money", "The CI runner budget is 3500 minutes per month", "value drift"),
    ("code", "CI runs the test suite on Python 3.12 and 3.13 in GitHub Actions", "direct contradiction"),
]
# Written later, proposed as candidates but left for the agents to judge.
UNJUDGED = [
    ("proc", "The on-call rotation changes every Friday at 17:00"),
    ("projects", "The watcher distills findings every 25 steps"),
]

MODULES = ["store", "query", "service", "ingest", "conflicts", "watcher", "harness", "cli", "tui", "web", "strength", "paths"]
FACTS = [
    "{m} has its own test module under tests/",
    "the {m} package logs through the standard logging module",
    "{m} functions take now as an argument instead of reading the clock",
    "a bug in {m} was fixed by adding a regression test first",
    "{m} keeps its public names in __all__",
    "the {m} docstring explains the invariants before the code",
    "changes to {m} need a line in the changelog",
    "{m} raises LedgerError subclasses, never bare exceptions",
    "{m} is covered by property tests written with Hypothesis",
    "the {m} module must stay free of click and rich imports",
    "{m} was profiled last sprint and the hot path is now in SQL",
    "public functions in {m} document their units, milliseconds or bytes",
    "{m} reads its settings through the paths module only",
    "the {m} tests use a fixed clock so decay is deterministic",
    "{m} has a benchmark under bench/ that reports ratios",
    "renaming anything in {m} needs a deprecation note",
    "{m} returns frozen dataclasses to its callers",
    "the {m} error messages name the command that fixes the problem",
    "{m} was reviewed by two people before it shipped",
    "type checking of {m} runs in strict mode",
]

RUNBOOK = """# Deploy runbook

## Before
Check that CI is green on main and the changelog has an entry for every merged change.
Announce the deploy in the team channel ten minutes ahead.

## Deploy
Run the release script with the new version number. It tags main, builds the wheel and
uploads it. Watch the smoke tests; they take about four minutes.

## After
Verify the version reported by ledger --version on a clean machine. Close the milestone
and open the next one.

## Rollback
Yank the release from the index, re-tag the previous version and post what happened.
"""

ARCH = """# Architecture notes

The store owns every SQL statement. The service is the one facade the CLI, the web
server, the TUI and the hooks call. Pure code takes now as an argument.

## Layers
L0 errors, paths and models. L1 store, strength and the query parser. L2 retrieval,
conflicts and ingest. L3 the service. L4 the surfaces.

## Connections
Every process opens the store through one connect function: WAL, a busy timeout and
foreign keys on. Writes take the lock up front with BEGIN IMMEDIATE.

## Strength
Strength is computed on every read from use, freshness and corroboration, and never
stored. Chunks take their document's trust.
"""

STYLE = """# Style guide

Write docstrings that open with one line. Explain why in comments, not what.
Prefer frozen dataclasses for values. Keep click command bodies short.

Errors say what went wrong and what to do next. Never print a traceback to a user.
"""


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]


def build(path: str, *, days: int = 120, extra: int = 260, seed: int = 7) -> dict:
    """Create the demo store at ``path``; returns ids the tests use."""
    rng = random.Random(seed)
    now_real = int(time.time() * 1000)
    clock = FixedClock(now_real - days * DAY_MS)
    out: dict = {"claims": [], "dropped": [], "conflicts": [], "sources": []}
    with Ledger.open(path, clock=clock) as led:
        step = (days - 12) * DAY_MS // (len(CLAIMS) + extra + 10)
        # Hand-written claims first, then many templated ones, spread over time.
        written = []
        for cluster, text in CLAIMS:
            clock.advance(ms=rng.randint(step // 2, step * 2))
            m = led.remember(text, cluster=cluster, agent=rng.choice(AGENTS[:3])).memory
            written.append(m.id)
        facts = [(_sentence(f.format(m=mod)), mod) for mod in MODULES for f in FACTS]
        rng.shuffle(facts)
        for text, mod in facts[:extra]:
            clock.advance(ms=rng.randint(step // 3, step))
            cluster = "code" if rng.random() < 0.55 else rng.choice(["proc", "projects", "reading", "prefs"])
            m = led.remember(text, cluster=cluster, agent=rng.choice(AGENTS)).memory
            written.append(m.id)
        # Documents, one with a claim distilled from it.
        for name, text, cluster, trust, agent in (
            ("deploy-runbook.md", RUNBOOK, "proc", 0.86, "claude"),
            ("architecture.md", ARCH, "code", 0.72, "codex"),
            ("style-guide.md", STYLE, "prefs", 0.55, "opencode"),
        ):
            clock.advance(days=rng.uniform(1, 3))
            res = led.ingest_chunks(name, [c for c in text.split("\n\n") if c.strip()], cluster=cluster, agent=agent, trust=trust)
            out["sources"].append(res.source_id)
        clock.advance(days=1)
        d = led.remember("Rollback means yanking the release and re-tagging the previous version", cluster="proc",
                         agent="claude", source_id=out["sources"][0]).memory
        written.append(d.id)
        # Agents recall: hits, freshness and corroboration.
        words = ["python", "deploy", "store", "migrations", "tests", "changelog", "review", "search", "web", "sqlite",
                 "strength", "watcher", "ci", "budget", "release", "hooks", "query", "harness", "docstring", "rollback"]
        for _ in range(420):
            clock.advance(ms=rng.randint(1, 6) * HOUR_MS // 3)
            led.recall(rng.choice(words) + (" " + rng.choice(words) if rng.random() < 0.3 else ""), agent=rng.choice(AGENTS), limit=rng.choice([3, 5, 10]))
        # Review most of the older claims, pin a few.
        for i, mid in enumerate(written[: int(len(written) * 0.8)]):
            if rng.random() < 0.08:
                led.review(mid, "pin")
            elif rng.random() < 0.92:
                led.review(mid, "keep")
        # Link a few related pairs.
        for _ in range(40):
            a, b = rng.sample(written, 2)
            led.link(a, b, agent=rng.choice(AGENTS))
        # Contradictions: candidates judged as conflicts by an agent.
        clock.now = max(clock.now, now_real - 16 * DAY_MS)
        for cluster, text, kind in CONTRADICTIONS:
            clock.advance(days=rng.uniform(0.5, 2))
            w = led.remember(text, cluster=cluster, agent=rng.choice(AGENTS[:3]))
            for cid in w.proposed:
                cand = next((c for c in led.candidates(200) if c.id == cid), None)
                if cand is None:
                    continue
                other = cand.a if cand.b.id == w.memory.id else cand.b
                if other.text.split()[0] == text.split()[0]:
                    cf = led.judge(cid, "conflict", agent="claude", kind=kind, detector=round(rng.uniform(0.7, 0.95), 2),
                                   note="both cannot hold at once; the newer one is probably right")
                    out["conflicts"].append(cf)
                else:
                    led.judge(cid, "unrelated", agent="claude")
        for cluster, text in UNJUDGED:
            clock.advance(days=rng.uniform(0.5, 2))
            led.remember(text, cluster=cluster, agent=rng.choice(AGENTS[:3]))
        # Forget some along the way (they come back in asof: views before their drop).
        clock.now = max(clock.now + 2 * DAY_MS, now_real - 9 * DAY_MS)
        for mid in rng.sample(written[40:200], 14):
            clock.advance(ms=rng.randint(2, 20) * HOUR_MS)
            led.forget([mid], agent=rng.choice(AGENTS))
            out["dropped"].append(mid)
        # Fresh pending claims from the last days.
        clock.now = max(clock.now, now_real - 2 * DAY_MS)
        for cluster, text in (
            ("code", "The graph endpoint returns nodes, links and the cluster list"),
            ("proc", "Screenshots of every screen live under docs/screenshots"),
            ("prefs", "Prefers keyboard shortcuts that match the terminal review"),
            ("projects", "The canvas must draw 5000 nodes at 30 frames per second or better"),
        ):
            clock.advance(ms=rng.randint(3, 12) * HOUR_MS)
            out["claims"].append(led.remember(text, cluster=cluster, agent=rng.choice(AGENTS[:3])).memory.id)
        # Recent activity, inside the last day, so Connections shows calls and hit rates.
        clock.now = max(clock.now, now_real - 20 * HOUR_MS)
        for _ in range(60):
            clock.advance(ms=rng.randint(5, 15) * 60_000)
            if clock.now > now_real - 60_000:
                break
            led.recall(rng.choice(words + ["kubernetes", "terraform"]), agent=rng.choice(AGENTS), limit=5)
    return out
