"""The README's main job: build a demo store from real material and use it.

Runs the real `ledger` command in subprocesses, printing each command before its
output, so what you see is exactly what an agent or a person would get. Ends by serving
the web UI on the demo store (pass --no-serve to stop before that).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEDGER = str(Path(sys.executable).with_name("ledger"))


def run(*args: str, stdin: str | None = None, check: bool = True) -> str:
    print(f"\n$ ledger {' '.join(shlex.quote(a) for a in args)}", flush=True)
    p = subprocess.run([LEDGER, *args], input=stdin, text=True, capture_output=True, env=ENV)
    out = (p.stdout + p.stderr).rstrip()
    print(out, flush=True)
    if check and p.returncode != 0:
        sys.exit(f"demo step failed with exit code {p.returncode}")
    return p.stdout


def material() -> list[tuple[Path, str, float]]:
    """(file, cluster, trust): the project's docs, then the shared design notes and seeds."""
    found = [(ROOT / "README.md", "projects", 0.9), (ROOT / "src/ledger/SKILL.md", "proc", 0.9)]
    found += [(p, "projects", 0.8) for p in sorted((ROOT / "docs").glob("*.md"))]
    shared = ROOT.parent / "shared"
    found += [(p, "reading", 0.7) for p in [shared / "DESIGN.md", *sorted((shared / "reference").glob("*.md"))]]
    return [(p, c, t) for p, c, t in found if p.is_file()]


def main() -> None:
    serve = "--no-serve" not in sys.argv
    demo_dir = ROOT / ".demo"
    if demo_dir.exists():
        shutil.rmtree(demo_dir)
    global ENV
    ENV = dict(os.environ, LEDGER_DB=str(demo_dir / "ledger.db"), LEDGER_AGENT="demo-agent", NO_COLOR="1")
    print(f"Demo store: {demo_dir / 'ledger.db'}")
    for path, cluster, trust in material():
        run("ingest", str(path), "--cluster", cluster, "--trust", str(trust))
    run("remember", "The ledger test suite runs with ./scripts/test", "--cluster", "code", "--note", "README quick start")
    run("remember", "Strength of a new claim is 51 out of 100", "--cluster", "reading")
    run("remember", "The web UI listens on port 7444 by default", "--cluster", "code", "--agent", "claude")
    run("remember", "The web UI listens on port 8080 by default", "--cluster", "code", "--agent", "codex")
    run("recall", "what port does the web UI use")
    run("recall", "how is strength computed freshness", "--limit", "5")
    run("conflicts")
    run("search", "contradiction proposer signals", "--limit", "8")
    run("search", "kind:claim", "--limit", "5")
    run("sources")
    run("stats")
    if serve:
        print("\nServing the demo store; open the printed URL. Ctrl-C stops.", flush=True)
        os.execve(LEDGER, [LEDGER, "serve", "--port", os.environ.get("LEDGER_PORT", "7444")], ENV)


ENV: dict = {}

if __name__ == "__main__":
    main()
