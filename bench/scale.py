"""Speed at scale: recall, remember, ingest and concurrent writers on large stores.

Usage::

    python bench/scale.py [--sizes 10000 100000 1000000] [--queries 200] [--json]
                          [--cli-runs 20] [--remembers 200] [--claims-store 100000]
                          [--ingest-mb 8] [--writers 8] [--writes 200] [--verify 5]
                          [--only recall,cli,remember,ingest,writers]
                          [--baseline-store OLD_store.py] [--out result.json]
                          [--shared ../shared]

Stores of N memories of synthetic but realistic text are built once and cached under
``bench/out/`` (git-ignored), keyed by N and a hash of the generator, the first
migration and the indexing code, so reruns start at once (later migrations are applied
to a cached store when it is reused, as to any user's store). Text: sentences of 60-200
characters drawn from a ~40k-word vocabulary with a Zipf-like distribution (real words
of ``--shared``'s ``reference/*.md``, LoCoMo turns and transcripts for the head,
pronounceable made-up words for the tail), about
40 % function words, numbers, versions and paths here and there, with a topical bias per
cluster. Ten clusters and five agents. 70 % of the memories are chunks bulk-loaded
through :meth:`Ledger.ingest_chunks` (sources of 40-300 chunks, neighbours indexed as
context); 30 % are claims, of which up to 2,000 are written through
:meth:`Ledger.remember` (the real path, proposer included) and the rest through
``Store.insert_claim`` in batches (the same rows without the proposer, to keep the build
fast). 5 % of the memories get counted reads so strength varies.

Measured, on a private working copy of each cached store:

* ``recall`` in-process (counted; ``search`` uncounted side by side), p50/p95 ms, and the
  number of matches per query (ranking is exact over all of them).
* ``ledger recall ... --db`` as a separate process, p50/p95 ms, beside ``python -c pass``
  in the same venv.
* ``remember`` (with the contradiction proposer) on a store of ``--claims-store`` claims.
* ``ingest`` throughput of markdown (``reference/*.md`` repeated), MB/s.
* ``--writers`` processes each writing ``--writes`` claims at once: errors and lost rows.
* ``--verify N``: for N queries per store, the page and total are checked against an
  independent computation in Python (BM25 from FTS5 per match, trigram containment by
  scanning every row, strength from :mod:`ledger.strength`).
* ``--baseline-store FILE``: another version of ``store.py`` (``git show
  <rev>:src/ledger/store/store.py > FILE``) is timed on the same queries in the same run,
  and its page and total compared with the current code's.
* Where search time goes: BM25 over the matches scored, the fuzzy neighbours, and the rest
  (count, top-k, page), timed by wrapping the store's fill steps from the bench.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT, ROOT, Progress, dist, import_ledger, machine, table  # noqa: E402

import_ledger()
from ledger import ingest as ingest_mod  # noqa: E402
from ledger.service import Ledger  # noqa: E402
from ledger.store import migrations as migrations_mod  # noqa: E402
from ledger.store import store as store_mod  # noqa: E402

GENERATOR_VERSION = "5"
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference"  # markdown for ingest and words (--shared overrides SHARED)
DATA = SHARED / "data"  # LoCoMo turns and transcripts for words
CLUSTERS = ("prefs", "people", "code", "travel", "health", "money", "home", "reading", "proc", "projects")
AGENTS = ("claude", "codex", "opencode", "gemini", "watcher")
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z: the build's clock starts here ...
SPAN_MS = 365 * 86_400_000  # ... and ends a year later
FUNCTION_WORDS = ("the", "a", "to", "of", "and", "in", "is", "for", "on", "with", "it", "that", "we", "by", "as",
                  "at", "from", "be", "this", "are", "not", "or", "when", "after", "before", "uses", "runs", "has")


class Clock:
    def __init__(self, now: int):
        self.now = now

    def __call__(self) -> int:
        return self.now


# ------------------------------------------------------------------------------ text
_CORPUS_WORDS: list[str] | None = None


def corpus_words(min_count: int = 2) -> list[str]:
    """Real words (3-15 letters, function words excluded) of the shared reference docs,
    LoCoMo turns and agent transcripts, most frequent first: the vocabulary's head."""
    global _CORPUS_WORDS
    if _CORPUS_WORDS is not None:
        return list(_CORPUS_WORDS)
    texts: list[str] = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(REFERENCE.glob("*.md"))]
    for p in sorted(DATA.glob("locomo/*.json")):
        for conv in json.loads(p.read_text(encoding="utf-8")):
            for key, turns in conv["conversation"].items():
                if key.startswith("session_") and isinstance(turns, list):
                    texts += [t.get("text", "") for t in turns]
    for p in sorted(DATA.glob("transcripts/*.jsonl")):
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                texts += list(_strings(json.loads(line)))
            except ValueError:
                continue
    counts: dict[str, int] = {}
    for t in texts:
        for w in re.findall(r"(?<![\w])[a-z]{3,15}(?![\w])", t.lower()):
            counts[w] = counts.get(w, 0) + 1
    if not texts:
        # Without them every word is made up: stores, and above all the queries drawn
        # from a cached store, then differ from those docs/benchmarks.md reports (half
        # the matches per query at 100k), and the figures cannot be compared.
        print(f"bench: no words under {SHARED} (reference/*.md, data/locomo, data/transcripts): texts and queries "
              "use made-up words only and are not comparable with docs/benchmarks.md; run from a checkout "
              "beside the shared folder (bench/scale.py: or pass --shared DIR)", file=sys.stderr)
    stop = set(FUNCTION_WORDS) | {"the", "and", "for", "with", "that", "this", "are", "not", "from", "you", "was", "have"}
    _CORPUS_WORDS = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count and w not in stop]
    return list(_CORPUS_WORDS)


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


class TextGen:
    """Deterministic generator of claim-like sentences (see the module docstring)."""

    def __init__(self, seed: int = 7, vocab_size: int = 40_000, zipf_s: float = 1.07, rank_offset: int = 60):
        self.rng = random.Random(seed)
        words = corpus_words()
        seen = set(words)
        # The tail: pronounceable made-up words (names, identifiers, jargon) from
        # consonant-vowel syllables, so their trigrams spread like real words' do.
        r = random.Random(seed + 1)
        cons, vows = "bcdfghjklmnprstvwz", "aeiou"
        while len(words) < vocab_size:
            w = "".join(r.choice(cons) + r.choice(vows) + (r.choice(cons) if r.random() < 0.4 else "")
                        for _ in range(r.choice((2, 2, 3, 3, 4))))
            if w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words[:vocab_size]
        # Zipf over English as a whole: function words hold the first ~60 ranks (drawn
        # separately), so content word i has rank i + 1 + rank_offset.
        weights = [1.0 / (i + 1 + rank_offset) ** zipf_s for i in range(len(self.words))]
        self.cum = []
        acc = 0.0
        for w in weights:
            acc += w
            self.cum.append(acc)
        # Topic words per cluster: mid-frequency words a cluster favours.
        mid = self.words[200:8000]
        self.topics = {c: r.sample(mid, 300) for c in CLUSTERS}

    def word(self) -> str:
        return self.words[bisect.bisect_left(self.cum, self.rng.random() * self.cum[-1])]

    def sentence(self, cluster: str) -> str:
        rng = self.rng
        target = int(rng.triangular(60, 200, 110))
        out: list[str] = []
        n = 0
        topic = self.topics[cluster]
        while n < target:
            x = rng.random()
            if x < 0.38:
                w = rng.choice(FUNCTION_WORDS)
            elif x < 0.52:
                w = rng.choice(topic)
            elif x < 0.545:
                w = rng.choice((str(rng.randint(2, 9000)), f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}",
                                f"{rng.randint(1, 28)} {rng.choice(('March', 'May', 'June', 'October'))}",
                                f"src/{self.word()}/{self.word()}.py", f"port {rng.randint(1024, 9999)}"))
            else:
                w = self.word()
            out.append(w)
            n += len(w) + 1
        s = " ".join(out)
        return s[0].upper() + s[1:] + "."

    def query(self, sample_texts: list[str]) -> str:
        """A recall query: mostly 2-4 words of an existing memory, sometimes a question
        or a few free words."""
        rng = self.rng
        x = rng.random()
        if x < 0.6 and sample_texts:
            words = [w.strip(".,;:?!").lower() for w in rng.choice(sample_texts).split()]
            content = [w for w in words if len(w) > 2 and w not in FUNCTION_WORDS]
            k = min(len(content), rng.choice((2, 2, 3, 3, 4)))
            return " ".join(rng.sample(content, k)) if k else self.word()
        if x < 0.85:
            a, b = self.word(), self.word()
            return rng.choice((f"how do we {a} the {b}", f"where is the {a} {b}", f"what {a} does {b} need",
                               f"why did {a} fail", f"which {a} has {b}"))
        return " ".join(self.word() for _ in range(rng.choice((1, 2, 3))))


# ------------------------------------------------------------------------------ stores
def code_hash() -> str:
    """What a cached store's rows depend on: the generator, the first migration (the
    tables the rows are written into) and the indexing code. Later migrations are not
    part of the key: they are applied when a cached store is reused, as they would be
    on any user's store."""
    import inspect

    h = hashlib.sha256(GENERATOR_VERSION.encode())
    from ledger.store import textindex

    for fn in (migrations_mod.m001_initial, store_mod.Store._index, textindex.index, store_mod.Store.insert_source,
               store_mod.Store.insert_claim):
        h.update(inspect.getsource(fn).encode())
    return h.hexdigest()[:10]


# Computed once, at import: inspect reads the file as it is *now*, so a later edit of
# store.py in a long run would otherwise hash garbage and orphan the cache.
CODE_HASH = code_hash()


def store_path(kind: str, n: int) -> Path:
    return OUT / f"{kind}-{n}-{CODE_HASH}.db"


def build_store(kind: str, n: int, gen_seed: int = 7) -> Path:
    """Build (or reuse) a cached store of ``n`` memories. ``kind`` is ``mixed`` (70 %
    chunks, 30 % claims) or ``claims`` (all claims)."""
    path = store_path(kind, n)
    if path.exists():
        Ledger.open(path).close()  # apply migrations added since the store was built
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    if "LEDGER_BENCH_OUT" not in os.environ:  # a shared folder may hold other checkouts' stores
        for old in OUT.glob(f"{kind}-{n}-*.db*"):
            old.unlink()
    tmp = path.with_suffix(".building")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        if p.exists():
            p.unlink()
    print(f"building {kind} store of {n:,} memories -> {path.name}", file=sys.stderr, flush=True)
    gen = TextGen(seed=gen_seed + n)
    rng = random.Random(gen_seed * 31 + n)
    clock = Clock(T0)
    chunk_share = 0.0 if kind == "claims" else 0.7
    n_chunks = int(n * chunk_share)
    n_claims = n - n_chunks
    n_remember = min(2000, n_claims // 50)
    t_start = time.perf_counter()
    prog = Progress(f"{kind}-{n}", n)
    done = 0
    with Ledger.open(tmp, clock=clock) as led:
        st = led.store
        # Interleave sources and claim batches along the year, so ages are spread out.
        plan: list[tuple[str, int]] = []
        left = n_chunks
        while left > 0:
            k = min(left, rng.randint(40, 300))
            plan.append(("source", k))
            left -= k
        left = n_claims - n_remember
        while left > 0:
            k = min(left, 2000)
            plan.append(("claims", k))
            left -= k
        rng.shuffle(plan)
        plan += [("remember", 1)] * n_remember  # real writes last, on the full store
        for step, (what, k) in enumerate(plan):
            clock.now = T0 + int(SPAN_MS * (step + 1) / (len(plan) + 1))
            cluster = rng.choice(CLUSTERS)
            agent = rng.choice(AGENTS)
            if what == "source":
                chunks = [gen.sentence(cluster) for _ in range(k)]
                led.ingest_chunks(f"notes/{gen.word()}-{step}.md", chunks, cluster=cluster, agent=agent, trust=rng.choice((0.5, 0.75, 0.9)))
            elif what == "claims":
                with st.atomic():
                    for _ in range(k):
                        c = rng.choice(CLUSTERS)
                        st.insert_claim(gen.sentence(c), c, rng.choice(AGENTS), clock.now)
            else:
                led.remember(gen.sentence(cluster), cluster=cluster, agent=agent)
            done += k
            prog(done)
        # Counted reads on 5 % of the memories, so hits, readers and freshness vary.
        ids = list(st.iter_ids())
        sample = rng.sample(ids, max(1, len(ids) // 20))
        for i in range(0, len(sample), 5000):
            clock.now = T0 + SPAN_MS - rng.randint(0, SPAN_MS // 2)
            st.count_read(sample[i : i + 5000], rng.choice(AGENTS), clock.now)
        # No FTS 'optimize': the indexes stay as incremental writes left them.
        st._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    prog(done, force=True)
    os.replace(tmp, path)
    print(f"  built in {time.perf_counter() - t_start:.0f}s, {path.stat().st_size / 1e6:.0f} MB", file=sys.stderr, flush=True)
    return path


def working_copy(path: Path, tag: str) -> Path:
    dst = OUT / f"work-{tag}-{path.name}"
    for suf in ("", "-wal", "-shm"):
        p = Path(str(dst) + suf)
        if p.exists():
            p.unlink()
    shutil.copyfile(path, dst)
    return dst


def drop(path: Path) -> None:
    for suf in ("", "-wal", "-shm"):
        p = Path(str(path) + suf)
        if p.exists():
            p.unlink()


def sample_texts(led: Ledger, rng: random.Random, k: int = 2000) -> list[str]:
    ids = list(led.store.iter_ids())
    return [m.text for m in led.store.get_many(rng.sample(ids, min(k, len(ids))), led.clock())]


@contextlib.contextmanager
def generated_queries_on_a_copy(db: Path):
    """Open a private copy of the cached store ``db`` (the cached one is never written)
    at the benches' clock (a day after the store's span) and yield ``(led, next_query)``:
    ``next_query()`` draws the next of the generated queries of ``measure_recall`` (same
    seeds, so every bench asks the same questions of a store). The copy is deleted after."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / db.name
        shutil.copy(db, copy)
        led = Ledger.open(copy, clock=Clock(T0 + SPAN_MS + 86_400_000))
        try:
            gen = TextGen(seed=99)
            texts = sample_texts(led, random.Random(11))
            yield led, lambda: gen.query(texts)
        finally:
            led.close()


# ------------------------------------------------------------------------------ measurements
def load_baseline(path: str | None):
    """Another version of ``store.py`` (e.g. ``git show HEAD~1:src/ledger/store/store.py``)
    loaded beside the current one, for side-by-side timings and an identity check."""
    if not path:
        return None
    import importlib.util

    spec = importlib.util.spec_from_file_location("ledger.store._baseline_store", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Store


def measure_recall(path: Path, n: int, queries: int, verify: int, baseline=None) -> dict:
    work = working_copy(path, "recall")
    try:
        clock = Clock(T0 + SPAN_MS + 86_400_000)
        with Ledger.open(work, clock=clock) as led:
            rng = random.Random(11)
            gen = TextGen(seed=99)
            texts = sample_texts(led, rng)
            qs = [gen.query(texts) for _ in range(queries)]
            for q in qs[:5]:  # warm the page cache
                led.search(q, limit=10)
            rec, srch, totals = [], [], []
            phases: dict[str, list[float]] = {"bm25": [], "fuzzy": [], "rank_page": []}
            base: list[float] = []
            srch_cpu: list[float] = []  # CPU time: on a shared machine wall time mostly measures waiting for a core
            same = 0
            paths: dict[str, int] = {}  # how often each ranking path ran (Store.search_path)
            from ledger.query import parse
            for q in qs:  # alternate so both see the same machine noise
                with _phase_timer() as ph:
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    res = led.search(q, limit=10)
                    el = (time.perf_counter() - t0) * 1000
                    srch_cpu.append((time.process_time() - c0) * 1000)
                srch.append(el)
                phases["bm25"].append(ph["relevance"])
                phases["fuzzy"].append(ph["fuzzy"])
                phases["rank_page"].append(el - ph["relevance"] - ph["fuzzy"])
                paths[led.store.search_path] = paths.get(led.store.search_path, 0) + 1
                if baseline is not None:
                    pq = parse(q, clock.now)
                    t0 = time.perf_counter()
                    bhits, btotal = baseline.search(led.store, pq, clock.now, limit=10)
                    base.append((time.perf_counter() - t0) * 1000)
                    same += ([(m.id, m.score) for m in bhits], btotal) == ([(m.id, m.score) for m in res.hits], res.total)
                t0 = time.perf_counter()
                led.recall(q, agent="bench", limit=10)
                rec.append((time.perf_counter() - t0) * 1000)
                totals.append(res.total)
            out = {"recall_ms": dist(rec), "search_ms": dist(srch), "search_cpu_ms": dist(srch_cpu), "matches": dist(totals), "queries": len(qs),
                   "phases_ms": {k: dist(v) for k, v in phases.items()}, "examples": qs[:5], "paths": paths}
            if baseline is not None:
                out["baseline_search_ms"] = dist(base)
                out["baseline_identical"] = f"{same}/{len(qs)}"
            out["common"] = measure_common_terms(led, texts, max(20, queries // 4))
            if verify:
                out["verify"] = verify_exact(led, qs[:verify])
                out["verify_common"] = verify_exact(led, out["common"]["examples"][:verify])
        return out
    finally:
        drop(work)


def common_words(led: Ledger, k: int = 40) -> list[str]:
    """The ``k`` most frequent words (document frequency, read from the word index's
    vocabulary), stopwords and numbers left out: the terms of "common-term" queries."""
    from ledger.text import QUERY_STOPWORDS

    conn = led.store._conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_fts_v USING fts5vocab(main, memories_fts, row)")
    rows = conn.execute("SELECT term, doc FROM temp.bench_fts_v ORDER BY doc DESC LIMIT 400").fetchall()
    return [t for t, _ in rows if t.isalpha() and len(t) > 2 and t not in QUERY_STOPWORDS][:k]


def measure_common_terms(led: Ledger, texts: list[str], count: int) -> dict:
    """Queries of one of the most frequent words (:func:`common_words`; in the
    generated stores they are held by about a tenth of the memories) and one or two
    words of an existing memory, ranked by the top-k bound (docs/search.md "Top-k") and, forced, by
    scoring every match, interleaved; page and total compared."""
    rng = random.Random(13)
    common = common_words(led)
    qs = []
    for _ in range(count):
        words = [w.strip(".,;:?!").lower() for w in rng.choice(texts).split()]
        content = [w for w in words if len(w) > 2 and w.isalpha() and w not in FUNCTION_WORDS and w not in common]
        picked = rng.sample(content, min(len(content), rng.choice((1, 2))))
        qs.append(" ".join([rng.choice(common), *picked]))
    orig = store_mod.Store._bounded_fill
    bounded, full, bounded_cpu, full_cpu, paths, same = [], [], [], [], {}, 0
    for q in qs:
        c0, t0 = time.process_time(), time.perf_counter()
        a = led.search(q, limit=10)
        bounded.append((time.perf_counter() - t0) * 1000)
        bounded_cpu.append((time.process_time() - c0) * 1000)
        paths[led.store.search_path] = paths.get(led.store.search_path, 0) + 1
        store_mod.Store._bounded_fill = lambda *a_, **k_: None
        try:
            c0, t0 = time.process_time(), time.perf_counter()
            b = led.search(q, limit=10)
            full.append((time.perf_counter() - t0) * 1000)
            full_cpu.append((time.process_time() - c0) * 1000)
        finally:
            store_mod.Store._bounded_fill = orig
        same += ([(m.id, m.score) for m in a.hits], a.total) == ([(m.id, m.score) for m in b.hits], b.total)
    return {"queries": len(qs), "examples": qs[:10], "paths": paths, "identical": f"{same}/{len(qs)}",
            "search_ms": dist(bounded), "search_cpu_ms": dist(bounded_cpu), "full_ms": dist(full), "full_cpu_ms": dist(full_cpu)}


class _phase_timer:
    """Times the phases of one ``Store.search`` by wrapping three steps: finding fuzzy
    neighbours in the vocabulary (``textindex.neighbours_of``), scoring the matches
    (``Store._fill_relevance``, every match, or ``Store._bounded_fill``, the top-k
    bound of docs/search.md, which includes its probe); the rest is count, top-k and
    hydration of the page. Bench-side only."""

    def __enter__(self) -> dict:
        from ledger.store import textindex

        self.t = {"relevance": 0.0, "fuzzy": 0.0}
        self.mod = textindex
        self.orig = (store_mod.Store._fill_relevance, store_mod.Store._bounded_fill, textindex.neighbours_of)
        rel, bnd, nb = self.orig
        t = self.t

        def timer(fn, key):
            def timed(*a, **k):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    t[key] += (time.perf_counter() - t0) * 1000
            return timed

        store_mod.Store._fill_relevance, store_mod.Store._bounded_fill = timer(rel, "relevance"), timer(bnd, "relevance")
        textindex.neighbours_of = timer(nb, "fuzzy")
        return t

    def __exit__(self, *exc) -> None:
        store_mod.Store._fill_relevance, store_mod.Store._bounded_fill, self.mod.neighbours_of = self.orig


def measure_cli(path: Path, runs: int) -> dict:
    exe = Path(sys.executable).with_name("ledger")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "ledger.cli"]
    work = working_copy(path, "cli")
    try:
        rng = random.Random(5)
        gen = TextGen(seed=98)
        with Ledger.open(work) as led:
            texts = sample_texts(led, rng, 500)
        qs = [gen.query(texts) for _ in range(runs)]
        cli, base = [], []
        env = dict(os.environ, LEDGER_AGENT="bench", NO_COLOR="1")
        for q in qs:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
            base.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            r = subprocess.run([*cmd, "recall", *q.split(), "--db", str(work), "--limit", "10"], capture_output=True, env=env)
            cli.append((time.perf_counter() - t0) * 1000)
            if r.returncode != 0:
                raise RuntimeError(f"ledger recall failed: {r.stderr.decode()[:500]}")
        return {"cli_recall_ms": dist(cli), "python_pass_ms": dist(base), "runs": runs}
    finally:
        drop(work)


def remember_draw(rng: random.Random, gen: TextGen, texts: list[str], i: int) -> tuple[str, str]:
    """The ``i``-th write of :func:`measure_remember` (and ``bench/remember_ab.py``):
    ``(cluster, text)``, half new sentences, half near-copies of stored claims
    (``texts``) with a number changed (what the proposer exists for)."""
    cluster = rng.choice(CLUSTERS)
    if i % 2 and texts:
        base = rng.choice(texts)
        text = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), base, count=1)
        if text == base:
            text = base + f" Now {rng.randint(2, 90)}."
    else:
        text = gen.sentence(cluster)
    return cluster, text


def measure_remember(path: Path, count: int) -> dict:
    work = working_copy(path, "remember")
    try:
        clock = Clock(T0 + SPAN_MS + 86_400_000)
        rng = random.Random(3)
        gen = TextGen(seed=97)
        with Ledger.open(work, clock=clock) as led:
            claims = led.store.scalar("SELECT count(*) FROM memories WHERE kind = 'claim' AND deleted_at IS NULL")
            texts = sample_texts(led, rng, 1000)
            times, cpu, proposed = [], [], 0
            for i in range(count):
                cluster, text = remember_draw(rng, gen, texts, i)
                clock.now += 1000
                c0, t0 = time.process_time(), time.perf_counter()
                res = led.remember(text, cluster=cluster, agent="bench")
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                proposed += len(res.proposed)
        return {"claims_in_store": claims, "remember_ms": dist(times), "remember_cpu_ms": dist(cpu), "writes": count,
                "candidates_proposed": proposed}
    finally:
        drop(work)


def measure_ingest(mb: float) -> dict:
    docs = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(REFERENCE.glob("*.md"))]
    with tempfile.TemporaryDirectory(prefix="ledger-ingest-") as tmp:
        with Ledger.open(Path(tmp) / "ingest.db") as led:
            nbytes, files, chunks = 0, 0, 0
            t0 = time.perf_counter()
            per_file = []
            while nbytes < mb * 1e6:
                for name, text in docs:
                    src = ingest_mod.source_from_text(text, f"{files}-{name}")
                    t1 = time.perf_counter()
                    res = led.ingest(src, cluster="reading", agent="bench")
                    per_file.append(src.bytes / 1e6 / (time.perf_counter() - t1))
                    nbytes += src.bytes
                    chunks += res.chunks
                    files += 1
            el = time.perf_counter() - t0
    return {"mb": round(nbytes / 1e6, 2), "files": files, "chunks": chunks, "seconds": round(el, 2),
            "mb_per_s": round(nbytes / 1e6 / el, 2), "per_file_mb_per_s": dist(per_file)}


def _writer(args) -> tuple[int, int, list[str]]:
    db, idx, writes, start_at = args
    errors: list[str] = []
    ok = 0
    while time.time() < start_at:
        time.sleep(0.001)
    try:
        led = Ledger.open(db)
    except Exception as exc:  # noqa: BLE001 - counted, not raised
        return idx, 0, [f"open: {exc!r}"]
    with led:
        for i in range(writes):
            try:
                led.remember(f"Writer {idx} note {i}: the build cache for service {idx} lives in /var/cache/w{idx}/{i}.",
                             cluster="code", agent=f"writer-{idx}")
                ok += 1
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc))
    return idx, ok, errors


def measure_writers(procs: int, writes: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="ledger-writers-") as tmp:
        db = Path(tmp) / "w.db"
        Ledger.open(db).close()  # migrate once up front; the race on open is tested elsewhere
        ctx = mp.get_context("spawn")
        start_at = time.time() + 2.0
        t0 = time.perf_counter()
        with ctx.Pool(procs) as pool:
            results = pool.map(_writer, [(str(db), i, writes, start_at) for i in range(procs)])
        el = time.perf_counter() - t0 - 2.0
        errors = [e for _, _, errs in results for e in errs]
        ok = sum(k for _, k, _ in results)
        with Ledger.open(db) as led:
            rows = led.store.scalar("SELECT count(*) FROM memories WHERE kind = 'claim'")
            per_writer = dict(led.store._conn.execute("SELECT writer, count(*) FROM memories GROUP BY writer").fetchall())
    expected = procs * writes
    return {"processes": procs, "writes_each": writes, "expected": expected, "acknowledged": ok, "rows": rows,
            "errors": len(errors), "error_samples": errors[:3], "lost": ok - rows if rows <= ok else 0,
            "unacknowledged_but_stored": max(0, rows - ok), "per_writer_min": min(per_writer.values() or [0]),
            "seconds": round(el, 2), "writes_per_s": round(ok / el, 1) if el > 0 else None}


# ------------------------------------------------------------------------------ exactness oracle
def verify_exact(led: Ledger, queries: list[str], k: int = 10) -> dict:
    """Check ``search`` against an independent computation of docs/search.md's
    definition: the vocabulary read from every memory's text in Python, each query
    word's neighbours by edit distance against every vocabulary word (not through the
    trigram index), one FTS5 BM25 query per expression, strength in Python, every match
    ranked."""
    from ledger import strength as S
    from ledger import terms as T
    from ledger.query import parse
    from ledger.text import QUERY_STOPWORDS

    st = led.store
    now = led.clock()
    vocab: set[str] = set()
    for (text,) in st._conn.execute("SELECT text FROM memories"):
        vocab |= T.vocabulary_words(text)
    by_len: dict[int, list[str]] = {}
    for w in vocab:
        by_len.setdefault(len(w), []).append(w)
    rows = st._conn.execute(
        """SELECT m.seq, m.id, m.text, m.kind, m.pinned, m.hits, m.last_read_at, m.source_count, m.reader_count, s.trust
           FROM memories m LEFT JOIN sources s ON s.id = m.source_id WHERE m.deleted_at IS NULL AND m.archived = 0"""
    ).fetchall()
    strength = {}
    for r in rows:
        strength[r["seq"]] = S.strength(kind=r["kind"], pinned=bool(r["pinned"]), hits=r["hits"], last_read_at=r["last_read_at"],
                                        source_count=r["source_count"], reader_count=r["reader_count"], trust=r["trust"], now=now)[0]

    def bm25(table: str, weights: str, parts: list[str]) -> dict[int, float]:
        if not parts:
            return {}
        return {seq: max(0.0, -b) for seq, b in st._conn.execute(
            f"SELECT rowid, bm25({table}{weights}) FROM {table} WHERE {table} MATCH ?", (" OR ".join(parts),))}

    ok, checked, details = 0, 0, []
    for qtext in queries:
        q = parse(qtext, now)
        qt = T.split_query(q.terms, QUERY_STOPWORDS)
        quote = lambda x: '"' + x.replace('"', '""') + '"'  # noqa: E731
        exact = [quote(w) + ("*" if len(w) >= 3 else "") for w in qt.words] + [quote(p) for p in qt.phrases]
        fuzzy: list[str] = []
        for w in qt.words:
            kk = 0 if len(w) < 4 else 1 if len(w) < 8 else 2
            if kk and w.isalpha() and len(w) <= 40 and w not in vocab:  # hybrid: only words no memory holds
                near = [v for n in range(len(w) - kk, len(w) + kk + 1) for v in by_len.get(n, ())
                        if v != w and T.edit_distance(w, v, kk) <= kk]
                fuzzy += [quote(v) for v in sorted(near) if v not in qt.words and quote(v) not in fuzzy]
        side = [quote(T.encode_compound(c)) for c in qt.compounds] + [quote(" ".join(T.bigrams(r))) for r in qt.cjk]
        p: dict[int, float] = {}
        for fts_table, w, parts in (("memories_fts", f", 1.0, {store_mod.CONTEXT_WEIGHT}", exact), ("memories_side", "", side)):
            for seq, v in bm25(fts_table, w, parts).items():
                p[seq] = p.get(seq, 0.0) + v
        rel = {seq: v / (v + 1.0) for seq, v in p.items()}
        for seq, v in bm25("memories_fts", f", 1.0, {store_mod.CONTEXT_WEIGHT}", fuzzy).items():
            rel.setdefault(seq, store_mod.FUZZY_WEIGHT * v / (v + 1.0))
        scored = sorted(((0.75 * v + 0.25 * strength[s], s) for s, v in rel.items() if s in strength), reverse=True)
        want_total = len(scored)
        res = led.search(qtext, limit=k)
        got = [(m.score, m.id) for m in res.hits]
        seq_of = {r["id"]: r["seq"] for r in rows}
        want = scored[:k]
        same_scores = len(got) == len(want) and all(abs(g[0] - w[0]) < 1e-9 for g, w in zip(got, want))
        # Ties broken by seq desc in both; allow float noise only where scores tie.
        same_ids = [seq_of.get(g[1]) for g in got] == [w[1] for w in want]
        good = same_scores and (same_ids or _ties_only(got, want, seq_of)) and res.total == want_total
        checked += 1
        ok += good
        if not good:
            details.append({"query": qtext, "total": res.total, "want_total": want_total,
                            "got": [round(g[0], 6) for g in got], "want": [round(w[0], 6) for w in want]})
    return {"checked": checked, "exact": ok, "mismatches": details[:3]}


def _ties_only(got, want, seq_of) -> bool:
    return sorted(round(g[0], 9) for g in got) == sorted(round(w[0], 9) for w in want)


# ------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cli-runs", type=int, default=20)
    ap.add_argument("--remembers", type=int, default=200)
    ap.add_argument("--claims-store", type=int, default=100_000, help="claims in the store remember is measured on")
    ap.add_argument("--ingest-mb", type=float, default=8.0)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--verify", type=int, default=0, help="queries per store checked against the exact oracle")
    ap.add_argument("--only", default="recall,cli,remember,ingest,writers")
    ap.add_argument("--baseline-store", help="another store.py to time side by side with the current one (identity checked)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the JSON result to this file")
    ap.add_argument("--shared", type=Path, default=SHARED, help="folder with reference/*.md and data/ (default ../shared)")
    args = ap.parse_args(argv)
    global REFERENCE, DATA
    REFERENCE, DATA = args.shared / "reference", args.shared / "data"
    only = set(args.only.split(","))
    result: dict = {"bench": "scale", "machine": machine(), "code_hash": CODE_HASH, "sizes": {}}

    for n in args.sizes:
        path = build_store("mixed", n)
        entry: dict = {"store_mb": round(path.stat().st_size / 1e6, 1)}
        if "recall" in only:
            print(f"recall on {n:,} ...", file=sys.stderr, flush=True)
            entry.update(measure_recall(path, n, args.queries, args.verify, load_baseline(args.baseline_store)))
        if "cli" in only:
            print(f"cli recall on {n:,} ...", file=sys.stderr, flush=True)
            entry.update(measure_cli(path, args.cli_runs))
        result["sizes"][n] = entry
    if "remember" in only:
        print(f"remember on {args.claims_store:,} claims ...", file=sys.stderr, flush=True)
        result["remember"] = measure_remember(build_store("claims", args.claims_store), args.remembers)
    if "ingest" in only:
        print("ingest ...", file=sys.stderr, flush=True)
        result["ingest"] = measure_ingest(args.ingest_mb)
    if "writers" in only:
        print(f"{args.writers} writers ...", file=sys.stderr, flush=True)
        result["writers"] = measure_writers(args.writers, args.writes)

    if args.out:
        args.out.write_text(json.dumps(result, indent=2, default=str))
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    m = result["machine"]
    print(f"ledger scale bench · {m['date']} · {m['nproc']} cores, Python {m['python']}, SQLite {m['sqlite']} · code {result['code_hash']}")
    rows = []
    for n, e in result["sizes"].items():
        r, s, c, b, mt = e.get("recall_ms", {}), e.get("search_ms", {}), e.get("cli_recall_ms", {}), e.get("python_pass_ms", {}), e.get("matches", {})
        sc = e.get("search_cpu_ms", {})
        rows.append([f"{n:,}", e["store_mb"], r.get("p50", ""), r.get("p95", ""), s.get("p50", ""), s.get("p95", ""),
                     sc.get("p50", ""), sc.get("p95", ""),
                     mt.get("p50", ""), mt.get("p95", ""), c.get("p50", ""), c.get("p95", ""), b.get("p50", "")])
    print(table(["memories", "MB", "recall p50", "recall p95", "search p50", "search p95", "search CPU p50", "search CPU p95",
                 "matches p50", "matches p95", "CLI p50", "CLI p95", "py -c pass p50"], rows))
    prow = []
    for n, e in result["sizes"].items():
        ph = e.get("phases_ms")
        if ph:
            prow.append([f"{n:,}", *(x for k in ("bm25", "fuzzy", "rank_page") for x in (ph[k]["p50"], ph[k]["p95"]))])
    brow = [[f"{n:,}", e["search_ms"]["p50"], e["search_ms"]["p95"], e["baseline_search_ms"]["p50"], e["baseline_search_ms"]["p95"],
             e["baseline_identical"]] for n, e in result["sizes"].items() if "baseline_search_ms" in e]
    if brow:
        print(f"\nside by side with {args.baseline_store} (same queries, same run)")
        print(table(["memories", "search p50", "search p95", "baseline p50", "baseline p95", "identical page+total"], brow))
    if prow:
        print("\nwhere search time goes (ms): BM25 over every match, fuzzy neighbours in the vocabulary, count + top-k + page")
        print(table(["memories", "bm25 p50", "bm25 p95", "fuzzy p50", "fuzzy p95", "rank+page p50", "rank+page p95"], prow))
        for n, e in result["sizes"].items():
            if e.get("paths"):
                print(f"ranking paths at {n:,}: " + ", ".join(f"{k} {v}" for k, v in sorted(e["paths"].items())))
    crow = [[f"{n:,}", e["common"]["queries"], ", ".join(f"{k} {v}" for k, v in sorted(e["common"]["paths"].items())),
             *(e["common"][k][p] for k in ("search_ms", "search_cpu_ms", "full_ms", "full_cpu_ms") for p in ("p50", "p95")),
             e["common"]["identical"]] for n, e in result["sizes"].items() if "common" in e]
    if crow:
        print("\ncommon-term queries (one of the 40 most frequent words + 1-2 words of a memory): top-k bound vs every match scored, same run")
        print(table(["memories", "queries", "paths", "bound p50", "bound p95", "bound CPU p50", "bound CPU p95",
                     "full p50", "full p95", "full CPU p50", "full CPU p95", "identical page+total"], crow))
    for n, e in result["sizes"].items():
        for key, what in (("verify", "queries"), ("verify_common", "common-term queries")):
            if key in e:
                v = e[key]
                print(f"exactness at {n:,}: {v['exact']}/{v['checked']} {what} identical to the oracle {v['mismatches'] or ''}")
    if "remember" in result:
        r = result["remember"]
        rc = r.get("remember_cpu_ms", {})
        print(f"remember on {r['claims_in_store']:,} claims: p50 {r['remember_ms']['p50']} ms, p95 {r['remember_ms']['p95']} ms "
              f"(CPU p50 {rc.get('p50')} ms, p95 {rc.get('p95')} ms; {r['writes']} writes, {r['candidates_proposed']} candidates proposed)")
    if "ingest" in result:
        i = result["ingest"]
        print(f"ingest: {i['mb']} MB markdown, {i['files']} files, {i['chunks']} chunks in {i['seconds']} s = {i['mb_per_s']} MB/s")
    if "writers" in result:
        w = result["writers"]
        print(f"{w['processes']} writers x {w['writes_each']}: {w['errors']} errors, {w['rows']}/{w['expected']} rows, "
              f"{w['lost']} lost, {w['writes_per_s']} writes/s")
    print("targets: recall 100k p50 <= 10 ms, 1M p50 <= 50 ms; remember at 100k <= 5 ms; ingest >= 5 MB/s; 8 writers 0 errors 0 lost")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
