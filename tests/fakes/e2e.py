"""What the end-to-end tests of real harnesses (Claude Code, Codex, Gemini CLI) share:
a committed project, the environment ledger and the harness run in, ``ledger`` commands
that must succeed, and reads of the store the hooks wrote while the harness ran."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .gitrepo import make_repo

LEDGER = str(Path(sys.executable).with_name("ledger"))

#: The two facts the Claude Code and Gemini CLI scenarios remember before the session.
FACT_DATA = "data.bin is in FORMAT-ZETA: a 6-byte header then UTF-8 text"
FACT_NOTES = "notes.txt lists the three open questions of the migration (QUESTION-LIST-7)"

#: The project those scenarios work in (relative path -> content).
SCENARIO_FILES = {"data.bin": b"DATAV1 payload of the scenario\n", "notes.txt": "1. schema?\n2. backfill?\n3. rollout?\n"}


def project(path: Path, files: dict[str, str | bytes]) -> Path:
    """A git repository at ``path`` holding ``files``, committed (``fakes.gitrepo``)."""
    path.mkdir(parents=True, exist_ok=True)
    return make_repo(path, files)


def ledger_env(ledger_home: Path, *, db=None, drop: tuple[str, ...] = (), **extra: str) -> dict:
    """This process's environment with ``LEDGER_HOME`` set, ``LEDGER_DB`` set to ``db``
    (the test's store on its engine: ``install`` writes it into the hooks) or removed,
    ``drop`` removed and ``extra`` added: what the harness, and the hooks it starts, run
    with."""
    env = {**os.environ, "LEDGER_HOME": str(ledger_home), **extra}
    for var in ("LEDGER_DB", *drop):
        env.pop(var, None)
    if db is not None:
        env["LEDGER_DB"] = str(db)
    return env


def ledger(*argv: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run ``ledger argv...``; it must succeed (the test stops with its stderr otherwise)."""
    p = subprocess.run([LEDGER, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p


def remember_scenario_facts(proj: Path, env: dict) -> None:
    """:data:`FACT_DATA` and :data:`FACT_NOTES`, keyed to their files in ``proj``."""
    ledger("remember", FACT_DATA, "--cluster", "code", "--file", str(proj / "data.bin"), cwd=proj, env=env)
    ledger("remember", FACT_NOTES, "--cluster", "code", "--file", str(proj / "notes.txt"), cwd=proj, env=env)


def wait_for(fn, timeout: float = 10.0):
    """``fn()`` once it is truthy, polling every 0.1 s; its last value after ``timeout`` s
    (a detached distiller or a lingering hook writes after the harness exits)."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.1)


def query(db, sql: str, *params) -> list:
    """Rows of ``sql`` (``?`` placeholders) on the store the hooks wrote, either engine."""
    from ledger.store.connection import connect

    conn = connect(db)
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()
