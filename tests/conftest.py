"""Shared fixtures: an isolated LEDGER_HOME for every test, a Ledger on a real store with a
settable clock, and a helper that runs the installed ``ledger`` command in a real
subprocess.

Engines: every test that asks for the ``engine`` fixture, directly or through
``store_target``, ``ledger``, ``cli``, ``new_store`` or ``scoped_store``, runs once per
engine: on a SQLite file, and on a fresh schema of a real PostgreSQL 15
(``$LEDGER_TEST_PG_URL``, else a throwaway cluster that :func:`pg_server` starts with
``scripts/pg-test-cluster``; skipped with the reason when neither is possible). A test
about the SQLite file itself is marked ``@pytest.mark.sqlite_only`` (say why); a module
may narrow its engines with ``ENGINES = ("sqlite",)``. docs/postgres.md "Tests"."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ledger.clock import FixedClock
from ledger.service import Ledger

#: 2026-01-15T12:00:00Z, a fixed "now" for in-process tests.
T0 = int(datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc).timestamp() * 1000)

#: The engines every store test runs on (a module's ``ENGINES`` may narrow them).
BOTH_ENGINES = ("sqlite", "postgresql")
ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(os.environ.get("LEDGER_PG_BIN", "/usr/lib/postgresql/15/bin"))


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
def session_env(monkeypatch, tmp_path) -> None:
    """The session-state tests' environment: git with a fixed identity and no user config
    (``fakes.gitrepo.GIT_ENV``) and no loop state (``LEDGER_LOOP_STATE`` at a file that
    does not exist). Those modules ask for it with ``pytest.mark.usefixtures``."""
    from fakes.gitrepo import GIT_ENV

    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LEDGER_LOOP_STATE", str(tmp_path / "no-loop-state.json"))


@pytest.fixture
def project(tmp_path) -> Path:
    """An empty project folder (``tmp_path/project``) for install, doctor and setup tests.
    A module that needs a project with files defines its own ``project``."""
    p = tmp_path / "project"
    p.mkdir()
    return p


@pytest.fixture
def db_file(tmp_path) -> Path:
    return tmp_path / "store" / "ledger.db"


def pytest_generate_tests(metafunc):
    """Run every store test once per engine (``ENGINES`` of the module, else both)."""
    if "engine" not in metafunc.fixturenames:
        return
    engines = tuple(getattr(metafunc.module, "ENGINES", BOTH_ENGINES))
    if metafunc.definition.get_closest_marker("sqlite_only"):
        engines = ("sqlite",)
    if engines != ("sqlite",):
        # Module scope: a module's module-scoped stores (a web server's demo store) can
        # follow the engine too, and its tests run grouped by engine.
        metafunc.parametrize("engine", engines, indirect=True, scope="module")


@pytest.fixture(scope="module")
def engine(request) -> str:
    """``"sqlite"`` or ``"postgresql"``: the engine this test's store runs on (module
    scope, so a module's shared stores can follow it: :func:`scoped_store`)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a PostgreSQL 15 server for the tests: ``$LEDGER_TEST_PG_URL`` (what
    .ci/run exports), else a throwaway cluster started for this session and stopped
    after it. Skips, saying why, when neither is possible."""
    url = os.environ.get("LEDGER_TEST_PG_URL")
    if url:
        yield url
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL 15 is not installed ({PG_BIN}/initdb missing: apt-get install postgresql-15), "
                    "and $LEDGER_TEST_PG_URL is not set")
    d = tempfile.mkdtemp(prefix="ledger-pg-", dir="/tmp")
    p = subprocess.run([str(ROOT / "scripts" / "pg-test-cluster"), "start", d], capture_output=True, text=True,
                       timeout=180)
    if p.returncode:
        shutil.rmtree(d, ignore_errors=True)
        pytest.skip(f"could not start a PostgreSQL test cluster: {p.stderr.strip()[-400:]}")
    try:
        yield p.stdout.strip()
    finally:
        subprocess.run([str(ROOT / "scripts" / "pg-test-cluster"), "stop", d], capture_output=True, timeout=120)


def pg_schema_url(server: str, schema: str) -> str:
    """``server`` with ``schema`` first on the search path (pg_trgm stays reachable in public)."""
    sep = "&" if "?" in server else "?"
    return f"{server}{sep}options=-csearch_path%3D{schema}%2Cpublic"


@contextlib.contextmanager
def select_only_role(pg_server: str, store_url: str):
    """A login role that may only read the schema of the PostgreSQL store at
    ``store_url`` (USAGE on the schema, SELECT on its tables as they are now: make the
    tables first), dropped on exit. Yields ``(the store URL as that role, schema, role)``."""
    import re
    from urllib.parse import urlsplit

    import psycopg

    schema = re.search(r"search_path%3D(\w+)", store_url).group(1)
    role = "ro_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg_server, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'ro-pass'")
        c.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        c.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    parts = urlsplit(store_url)
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    try:
        yield parts._replace(netloc=f"{role}:ro-pass@{host}").geturl(), schema, role
    finally:
        with psycopg.connect(pg_server, autocommit=True) as c:
            c.execute(f"DROP OWNED BY {role}")
            c.execute(f"DROP ROLE {role}")


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty PostgreSQL store (its own schema), dropped after the test."""
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    try:
        yield pg_schema_url(pg_server, schema)
    finally:
        _drop_schema(pg_server, schema)


def _new_schema(server: str) -> str:
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    return schema


def _drop_schema(server: str, schema: str) -> None:
    """Drop a test's schema; retried when it deadlocks with a detached process (a hook's
    drain process) still writing to it."""
    import time

    import psycopg

    for attempt in range(5):
        try:
            with psycopg.connect(server, autocommit=True) as c:
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == 4:
                raise
            time.sleep(0.5)


def scoped_store(request, engine: str, tmp_path_factory, name: str = "store"):
    """A fresh, empty store on ``engine`` for a fixture of wider than function scope
    (``request`` is that fixture's): a SQLite file in a new temporary folder, or a new
    PostgreSQL schema dropped when the fixture's scope ends."""
    if engine != "postgresql":
        return tmp_path_factory.mktemp(name) / "ledger.db"
    server = request.getfixturevalue("pg_server")
    schema = _new_schema(server)
    request.addfinalizer(lambda: _drop_schema(server, schema))
    return pg_schema_url(server, schema)


@pytest.fixture
def new_store(engine, tmp_path, request):
    """A factory of further fresh, empty stores on this test's engine, for a test that
    needs more than one: ``new_store()`` is a new SQLite file path under ``tmp_path``,
    or the URL of a new PostgreSQL schema (dropped after the test)."""
    made: list[str] = []
    server = request.getfixturevalue("pg_server") if engine == "postgresql" else None

    def make(name: str = "store"):
        if server is None:
            made.append(name)
            return tmp_path / f"{name}-{len(made)}" / "ledger.db"
        schema = _new_schema(server)
        made.append(schema)
        return pg_schema_url(server, schema)

    yield make
    if server is not None:
        for schema in made:
            _drop_schema(server, schema)


@pytest.fixture
def store_target(engine, request):
    """Where this test's store lives: a SQLite file path, or a PostgreSQL URL."""
    if engine == "postgresql":
        return request.getfixturevalue("pg_url")
    return request.getfixturevalue("db_file")


@pytest.fixture
def ledger(store_target, clock):
    """A Ledger on a real store (file in tmp_path, or a PostgreSQL schema) whose clock
    the test can move."""
    led = Ledger.open(store_target, clock=clock)
    try:
        yield led
    finally:
        led.close()


def store_sql(target, query: str, params=()) -> list:
    """Run one statement (``?`` placeholders) on the store at ``target``, either engine,
    outside any transaction (committed at once); the rows it returns ([] for none).
    What a test uses to look under the service or to break a store on purpose."""
    from ledger.store.connection import connect

    conn = connect(target)
    try:
        cur = conn.execute(query, params)
        try:
            return [tuple(r) for r in cur.fetchall()]
        except Exception:  # a statement that returns no rows (psycopg raises on fetchall)
            return []
    finally:
        conn.close()


def store_exists(target) -> bool:
    """Whether the store at ``target`` has been created: the SQLite file exists, or the
    PostgreSQL schema holds ledger's tables."""
    if is_pg(target):
        from ledger.store.health import migration_status

        return migration_status(target)["exists"]
    return Path(target).exists()


@functools.lru_cache(maxsize=1)
def pg_driver_modules() -> frozenset[str]:
    """The modules importing the PostgreSQL driver brings into a fresh interpreter: what a
    process on a PostgreSQL store may import beyond the SQLite path's budget (psycopg is
    imported only when the store is PostgreSQL)."""
    r = subprocess.run([sys.executable, "-c", "import sys; b = set(sys.modules); import psycopg; "
                        "print(' '.join(sorted(set(sys.modules) - b)))"], capture_output=True, text=True, check=True)
    return frozenset(r.stdout.split())


def foreign_modules(mods, target) -> list[str]:
    """The top-level packages in ``mods`` from outside the standard library and ledger,
    less the PostgreSQL driver's when ``target`` is a PostgreSQL store."""
    # On PostgreSQL, what the driver brings, and two imports it tries that fail here:
    # psycopg_c (its C build) and org (copy's probe for Jython).
    allowed = {m.split(".")[0] for m in pg_driver_modules()} | {"psycopg_c", "org"} if is_pg(target) else set()
    tops = {m.split(".")[0] for m in mods}
    return sorted(t for t in tops if t not in sys.stdlib_module_names and t != "ledger" and t not in allowed)


def spool_settled(target, home=None, timeout_s: float = 60, idle: bool = False) -> None:
    """Wait until what hooks spooled for the store at ``target`` is stored: on
    PostgreSQL a finished tool call goes to this machine's spool and a detached drain
    process stores it (docs/postgres.md "Hooks"); on SQLite the spool is empty unless
    the store was locked. ``home``: the hooks' ``$LEDGER_HOME`` when it is not this
    process's (a PostgreSQL store's spool is under it). ``idle``: also wait until no drain
    process runs (it lingers a few seconds). AssertionError after ``timeout_s``."""
    import time

    from ledger.watcher import spool as S

    mine = os.environ.get("LEDGER_HOME")
    os.environ["LEDGER_HOME"] = str(home or mine)
    try:
        folder = S.spool_dir(str(target))
    finally:
        os.environ["LEDGER_HOME"] = mine
    deadline = time.monotonic() + timeout_s
    while S.has_work(folder) or (idle and S.drainer_running(folder)):
        assert time.monotonic() < deadline, f"the spool {folder} was not drained in {timeout_s} s: {os.listdir(folder)}"
        time.sleep(0.05)


def is_pg(target) -> bool:
    """Whether a store target is a PostgreSQL URL (else a SQLite file path)."""
    return isinstance(target, str) and target.startswith("postgresql://")


class WriteLock:
    """Another process's writer holding the store's write lock until :meth:`release`:
    SQLite's ``BEGIN IMMEDIATE`` on the file, or on PostgreSQL the store's advisory
    lock (:func:`ledger.store.pg.atomic`) in an open transaction. May be released
    from another thread."""

    def __init__(self, target):
        self.pg = is_pg(target)
        if self.pg:
            import psycopg

            self.conn = psycopg.connect(target, autocommit=True)
            self.conn.execute("BEGIN")
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('ledger:' || coalesce(current_schema(), '')))")
        else:
            import sqlite3

            self.conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None

    def __enter__(self) -> "WriteLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Cli:
    """Runs the installed ``ledger`` command: ``cli("recall", "x")`` → (rc, stdout, stderr).
    ``--db`` is added (pointing at the test's store) unless ``db=None``."""

    def __init__(self, db: Path | str):
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

    def create_store(self) -> None:
        """Create the test's store, empty and migrated (no read command creates one,
        docs/store.md "A missing store"; a write would add a memory or a cluster)."""
        Ledger.open(self.db).close()


@pytest.fixture
def cli(store_target) -> Cli:
    return Cli(store_target)
