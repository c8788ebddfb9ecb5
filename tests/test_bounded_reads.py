"""Input that never ends, or is far too big: every read of a file or of stdin is bounded
(docs/cli.md "How much a write takes"). `ledger ingest /dev/zero`, `yes | ledger ingest -`,
`yes | ledger remember -`, `ledger import /dev/zero` and a hook fed an endless stdin each
read until Python died of a MemoryError (a traceback, after eating the machine's memory).
Now each is refused at once with what to do, nothing is written, and a hook stays silent,
exits 0 and logs one line. Real processes, real devices and pipes."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from conftest import LEDGER_BIN

from ledger.ingest import MAX_SOURCE_BYTES

#: Address space for each process: an unbounded read fails inside it with a MemoryError
#: in well under a second, instead of filling the test machine's memory.
_LIMIT = 1536 * 1024 * 1024


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def _run(argv, *, stdin=subprocess.DEVNULL, db=None, cwd=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("LEDGER_DB", None)
    if db is not None:
        env["LEDGER_DB"] = str(db)
    t0 = time.monotonic()
    p = subprocess.run([LEDGER_BIN, *argv], stdin=stdin, capture_output=True, env=env, timeout=120,
                       preexec_fn=_limit_memory, cwd=cwd)
    return p, time.monotonic() - t0


def _endless(*line: str):
    """A real `yes` process whose stdout never ends."""
    return subprocess.Popen(["yes", *line], stdout=subprocess.PIPE)


def _refused(p, *words) -> str:
    err = p.stderr.decode()
    assert p.returncode == 1 and p.stdout == b"" and "Traceback" not in err and "MemoryError" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_ingest_of_an_endless_device_is_refused_as_binary_at_once(tmp_path, device):
    p, took = _run(["ingest", device, "--cluster", "proc"], db=tmp_path / "l.db")
    _refused(p, "binary content", "pipe it in")
    assert took < 20 and os.listdir(tmp_path) == []


def test_ingest_of_a_file_past_the_limit_is_refused_from_its_size(tmp_path):
    big = tmp_path / "huge.log"
    with open(big, "wb") as fh:  # sparse: no 64 MiB written, the size says it all
        fh.truncate(MAX_SOURCE_BYTES + 1)
    p, took = _run(["ingest", str(big), "--cluster", "proc"], db=tmp_path / "l.db")
    _refused(p, "at most 67,108,864 bytes", f"it holds {MAX_SOURCE_BYTES + 1:,} bytes", "split -C 32m")
    assert took < 20 and not (tmp_path / "l.db").exists()


def test_ingest_of_an_endless_pipe_is_refused(tmp_path):
    y = _endless("a line of text about the boiler")
    try:
        p, took = _run(["ingest", "-", "--cluster", "proc", "--name", "boiler.txt"], stdin=y.stdout,
                       db=tmp_path / "l.db")
    finally:
        y.kill()
        y.wait()
    _refused(p, "at most 67,108,864 bytes", "more than that arrived", "in parts")
    assert not (tmp_path / "l.db").exists()


def test_ingest_below_the_limit_still_works(tmp_path):
    f = tmp_path / "notes.md"
    f.write_text("# Boiler\n\nThe boiler limit is 3 bar.\n")
    p, _ = _run(["ingest", str(f), "--cluster", "proc"], db=tmp_path / "l.db")
    assert p.returncode == 0 and p.stdout.startswith(b"ingested s_"), p.stderr


def test_remember_from_an_endless_pipe_is_refused(tmp_path):
    y = _endless("endless")
    try:
        p, _ = _run(["remember", "-", "--cluster", "proc"], stdin=y.stdout, db=tmp_path / "l.db")
    finally:
        y.kill()
        y.wait()
    _refused(p, "stdin holds more than 1,048,576 characters", "ledger ingest -")
    assert not (tmp_path / "l.db").exists()


def test_remember_from_stdin_still_counts_an_overlong_claim(tmp_path):
    p, _ = _run(["remember", "-", "--cluster", "proc"], stdin=open(_text_file(tmp_path, 30_000), "rb"),
                db=tmp_path / "l.db")
    _refused(p, "30000 characters (max 20000)")


def _text_file(tmp_path, n: int):
    f = tmp_path / "claim.txt"
    f.write_text("a" * n)
    return f


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_import_of_a_line_that_never_ends_is_refused(tmp_path):
    p, took = _run(["import", "/dev/zero"], db=tmp_path / "l.db")
    _refused(p, "line 1 of /dev/zero is longer than", "Nothing was imported")
    assert took < 30 and not (tmp_path / "l.db").exists()


def test_hook_with_an_endless_stdin_exits_0_and_logs(tmp_path):
    y = _endless("{}")
    try:
        p, _ = _run(["hook", "claude-code", "PostToolUse"], stdin=y.stdout, db=tmp_path / "l.db")
    finally:
        y.kill()
        y.wait()
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p
    log = open(os.path.join(os.environ["LEDGER_HOME"], "hook.log")).read()
    assert "payload dropped: more than 67,108,864 bytes" in log, log
    assert not (tmp_path / "l.db").exists()
