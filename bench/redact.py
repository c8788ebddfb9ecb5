"""What redacting stored text costs (findings 3 and 4 of 2026-12-01: remember and ingest
now redact before they store).

Usage::

    python bench/redact.py [--n 15]

Measured side by side in one run, ``--n`` rounds each, p50 / p95 of CPU time
(``time.process_time``: on a shared machine wall time mostly measures waiting):

* ``redact`` over a corpus of ordinary text (this checkout's ``src/**/*.py`` and
  ``docs/*.md``), reported per MB;
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
    return f"{name:44s} p50 {statistics.median(xs):8.2f} {unit}  p95 {pct(xs, 0.95):8.2f} {unit}"


FIRST_CALL = ("import sys, time, ledger.service; from ledger.redact import redact_counted; t = time.process_time(); "
              "redact_counted(sys.argv[1]); print((time.process_time() - t) * 1000)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=15)
    a = ap.parse_args()
    from ledger.ingest import source_from_text
    from ledger.redact import redact
    from ledger.service import Ledger

    corpus = "".join(Path(f).read_text() for f in sorted(glob.glob(str(ROOT / "src/**/*.py"), recursive=True)
                                                          + glob.glob(str(ROOT / "docs/*.md"))))
    mb = len(corpus.encode()) / 1e6
    red, ing, plain, secret = [], [], [], []
    for i in range(a.n):
        t = time.process_time()
        redact(corpus)
        red.append((time.process_time() - t) / mb)
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
    print(line("redact (CPU per MB)", red, "s"))
    print(line("Ledger.ingest incl. redact (CPU per MB)", ing, "s"))
    print(line("first redact_counted, claim without trigger", plain, "ms"))
    print(line("first redact_counted, claim with PGPASSWORD=", secret, "ms"))


if __name__ == "__main__":
    main()
