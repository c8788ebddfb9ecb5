"""What redacting stored text costs (findings 3 and 4 of 2026-12-01: remember and ingest
now redact before they store).

Usage::

    python bench/redact.py [--n 15] [--against REV]

Measured side by side in one run, ``--n`` rounds each, p50 / p95 of CPU time
(``time.process_time``: on a shared machine wall time mostly measures waiting):

* ``redact`` over a corpus of ordinary text (this checkout's ``src/**/*.py`` and
  ``docs/*.md``), reported per MB: joined into one text (which holds a few non-ASCII
  characters, ``…`` and ``—``, so it is matched on its folded view) and file by file
  (most files are ASCII); and the joined text with a look-alike line every 20 lines
  (fullwidth key and colon, a zero-width space in a key: every pattern's triggers);
* with ``--against REV``, the same three with ``src/ledger/redact.py`` as it was at
  ``REV`` (loaded beside this one), alternating in each round;
* ``Ledger.ingest`` of the same corpus (one source) into a fresh SQLite store, redaction
  included, so the share of ingest that redaction takes reads off the two lines;
* the first ``redact_counted`` call in a fresh process that has imported
  ``ledger.service`` (what ``ledger remember`` pays once), for a claim with no trigger
  word and for one with ``PGPASSWORD=`` (the patterns compile on first use).
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def line(name: str, xs: list[float], unit: str) -> str:
    return f"{name:52s} p50 {statistics.median(xs):8.2f} {unit}  p95 {pct(xs, 0.95):8.2f} {unit}"


FIRST_CALL = ("import sys, time, ledger.service; from ledger.redact import redact_counted; t = time.process_time(); "
              "redact_counted(sys.argv[1]); print((time.process_time() - t) * 1000)")


def redact_at(rev: str):
    """``redact`` of ``src/ledger/redact.py`` as it was at git revision ``rev``."""
    import importlib.util

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/ledger/redact.py"], capture_output=True,
                         text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("ledger._redact_before", f.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    os.unlink(f.name)
    return mod.redact


def look_alikes(text: str) -> str:
    """``text`` with every 20th line replaced by settings written with look-alikes."""
    lines = text.split("\n")
    for i in range(0, len(lines), 20):
        lines[i] = (f"ｐａｓｓｗｏｒｄ：Hunter{i}secret  DB_TOKEN\u00a0=\u00a0Ab{i}cd  pass\u200bword=Zx9{i}  "
                    + lines[i])
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--against", metavar="REV", help="also time src/ledger/redact.py as it was at REV")
    a = ap.parse_args()
    from ledger.ingest import source_from_text
    from ledger.redact import redact
    from ledger.service import Ledger

    files = [Path(f).read_text() for f in sorted(glob.glob(str(ROOT / "src/**/*.py"), recursive=True)
                                                  + glob.glob(str(ROOT / "docs/*.md")))]
    corpus = "".join(files)
    mb = len(corpus.encode()) / 1e6
    disguised = look_alikes(corpus)
    mb_d = len(disguised.encode()) / 1e6
    versions = [("", redact)] + ([(f"{a.against}: ", redact_at(a.against))] if a.against else [])
    cpu: dict[str, list[float]] = {}

    def timed(name: str, fn, per: float) -> None:
        t = time.process_time()
        fn()
        cpu.setdefault(name, []).append((time.process_time() - t) / per)

    ing, plain, secret = [], [], []
    for i in range(a.n):
        for label, r in versions if i % 2 == 0 else versions[::-1]:
            timed(f"{label}redact, joined (CPU per MB)", lambda r=r: r(corpus), mb)
            timed(f"{label}redact, file by file (CPU per MB)", lambda r=r: [r(f) for f in files], mb)
            timed(f"{label}redact, look-alike lines (CPU per MB)", lambda r=r: r(disguised), mb_d)
        with tempfile.TemporaryDirectory() as d:
            led = Ledger.open(os.path.join(d, "ledger.db"))
            t = time.process_time()
            led.ingest(source_from_text(corpus, f"corpus-{i}.md"), cluster="code", agent="bench")
            ing.append((time.process_time() - t) / mb)
            led.close()
        for text, out in (("CI runs on Python 3.11", plain),
                          ("deploy of config.py uses PGPASSWORD=filesecret99 always", secret)):
            r = subprocess.run([sys.executable, "-c", FIRST_CALL, text], capture_output=True, text=True, check=True)
            out.append(float(r.stdout))
    print(f"corpus {mb:.2f} MB, {a.n} rounds; load average {os.getloadavg()[0]:.2f}")
    for name, xs in sorted(cpu.items(), key=lambda kv: (kv[0].split(": ")[-1], kv[0])):
        print(line(name, xs, "s"))
    print(line("Ledger.ingest incl. redact (CPU per MB)", ing, "s"))
    print(line("first redact_counted, claim without trigger", plain, "ms"))
    print(line("first redact_counted, claim with PGPASSWORD=", secret, "ms"))


if __name__ == "__main__":
    main()
