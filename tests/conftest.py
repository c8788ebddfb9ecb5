"""Shared fixtures: an isolated LEDGER_HOME for every test, a Ledger on a real SQLite file
with a settable clock, and a helper that runs the installed ``ledger`` command in a real
subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ledger.clock import FixedClock
from ledger.service import Ledger

#: 2026-01-15T12:00:00Z, a fixed "now" for in-process tests.
T0 = int(datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc).timestamp() * 1000)

def iso(ms: int) -> str:
    """Epoch ms as an ISO instant with milliseconds, for ``asof:`` queries."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_BIN = Path(sys.executable).with_name("ledger")
LEDGER_BIN = str(_BIN) if _BIN.exists() else (shutil.which("ledger") or "ledger")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Never touch ~/.ledger: every test gets its own LEDGER_HOME, and the variables
    that would point elsewhere are unset."""
    home = tmp_path_factory.mktemp("ledger-home")
    monkeypatch.setenv("LEDGER_HOME", str(home))
    monkeypatch.delenv("LEDGER_DB", raising=False)
    monkeypatch.delenv("LEDGER_AGENT", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return home


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def db_file(tmp_path) -> Path:
    return tmp_path / "store" / "ledger.db"


@pytest.fixture
def ledger(db_file, clock):
    """A Ledger on a real file in tmp_path whose clock the test can move."""
    led = Ledger.open(db_file, clock=clock)
    try:
        yield led
    finally:
        led.close()


class Cli:
    """Runs the installed ``ledger`` command: ``cli("recall", "x")`` → (rc, stdout, stderr).
    ``--db`` is added (pointing at the test's store) unless ``db=None``."""

    def __init__(self, db: Path):
        self.db = db

    def __call__(self, *args: str, input: str | bytes | None = None, db: Path | None | bool = True,
                 env: dict | None = None, timeout: float = 30) -> tuple[int, str, str]:
        argv = [LEDGER_BIN, *map(str, args)]
        if db is True:
            argv += ["--db", str(self.db)]
        elif db:
            argv += ["--db", str(db)]
        full_env = dict(os.environ)
        full_env["NO_COLOR"] = "1"
        full_env.pop("LEDGER_DB", None)
        full_env.pop("LEDGER_AGENT", None)
        if env:
            for k, v in env.items():
                if v is None:
                    full_env.pop(k, None)
                else:
                    full_env[k] = v
        data = input.encode() if isinstance(input, str) else input
        p = subprocess.run(argv, input=data, stdin=None if data is not None else subprocess.DEVNULL,
                           capture_output=True, env=full_env, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


@pytest.fixture
def cli(db_file) -> Cli:
    return Cli(db_file)
