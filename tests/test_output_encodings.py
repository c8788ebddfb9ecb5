"""A process whose streams or arguments are not UTF-8 (docs/cli.md "The streams and the
exit status"):

- ``PYTHONIOENCODING=ascii`` (or latin-1, cp1252): printing a stored "café 東京" was a
  ``UnicodeEncodeError`` traceback from ``recall``, ``search`` and ``search --json``.
  What the stream cannot carry is now written as ``\\uXXXX``, so the text output is
  readable and ``--json`` stays valid JSON with the exact text;
- ``PYTHONUTF8=0`` under the POSIX locale: a UTF-8 argument was called "not valid UTF-8";
  the message now says the bytes are UTF-8 and the locale is the problem.

Real processes."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import LEDGER_BIN
from test_cli import remember

TEXT = "Café in 東京 opens at 7 𝔘"


def _run(cli, argv, **env):
    full = dict(os.environ, NO_COLOR="1", **env)
    full.pop("LEDGER_DB", None)
    return subprocess.run([LEDGER_BIN, *argv, "--db", str(cli.db)], capture_output=True, env=full, timeout=60)


COMMANDS = [["recall", "cafe"], ["search", "cafe"], ["show", "{id}"], ["search", "--sort", "created"], ["stats"],
            ["review", "--plain"], ["clusters"], ["sources"]]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_a_narrow_output_encoding_escapes_instead_of_crashing(cli, encoding):
    mid = remember(cli, TEXT, "travel")
    for argv in COMMANDS:
        p = _run(cli, [a.format(id=mid) for a in argv], PYTHONIOENCODING=encoding)
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode == 0 and "Traceback" not in err, (argv, err)
        if argv[0] in ("recall", "show", "search"):
            out = p.stdout.decode(encoding)
            assert "Caf" in out and ("\\u6771\\u4eac" in out or "東京" in out), (argv, out)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_json_under_a_narrow_encoding_is_valid_and_exact(cli, encoding):
    remember(cli, TEXT, "travel")
    for argv in (["search", "cafe", "--json"], ["recall", "cafe", "--json"]):
        p = _run(cli, argv, PYTHONIOENCODING=encoding)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout.decode(encoding))["hits"][0]["text"] == TEXT if argv[0] == "search" \
            else json.loads(p.stdout.decode(encoding))[0]["text"] == TEXT


def test_a_warning_under_a_narrow_encoding(cli):
    remember(cli, TEXT, "travel")
    p = _run(cli, ["search", "cluster:tōkyō"], PYTHONIOENCODING="ascii")
    err = p.stderr.decode("ascii")
    assert "Traceback" not in err and "\\u014d" in err, err


@pytest.mark.sqlite_only  # the argument is refused before any store is opened
def test_utf8_argument_under_an_ascii_locale_names_the_locale(cli):
    p = _run(cli, ["recall", "東京"], LC_ALL="POSIX", LANG="POSIX", PYTHONUTF8="0")
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 1 and "Traceback" not in err, err
    assert "is UTF-8, but this process reads its arguments as" in err and "LC_ALL=C.UTF-8" in err, err
    p = _run(cli, ["recall", os.fsdecode(b"caf\xe9")])  # really not UTF-8: the message as before
    assert p.returncode == 1 and b"is not valid UTF-8" in p.stderr, p.stderr
