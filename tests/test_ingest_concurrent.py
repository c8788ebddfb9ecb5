"""Several processes ingesting the same file (or the same named stdin text) at once make
one source, not one each (docs/cli.md "Ingest: a file, or text, and its cluster"). Four
`ledger ingest runbook.md` started together each found no finished source for the path
and each added its own: four copies of every chunk. Now the ingest whose source would be
shown second finds the first one, in the same write transaction, drops its own and
updates that one instead ("updated ... unchanged"). Real processes on either engine."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import LEDGER_BIN, store_sql

WRITERS = 4


def _doc(tmp_path):
    doc = tmp_path / "runbook.md"
    doc.write_text("".join(f"## Step {i}\n\nRun deploy stage {i} with the flag --stage-{i} and wait for the "
                           f"health check of service {i} to pass before going on.\n\n" for i in range(400)))
    return doc


def _start(argv, store_target, stdin=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("LEDGER_DB", None)
    return subprocess.Popen([LEDGER_BIN, *argv, "--db", str(store_target)], stdin=subprocess.PIPE if stdin else None,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _live_sources(store_target):
    return store_sql(store_target, "SELECT id, filename FROM sources WHERE dropped_at IS NULL AND complete = 1")


def _live_chunks(store_target):
    return store_sql(store_target, "SELECT count(*) FROM memories WHERE kind = 'chunk' AND deleted_at IS NULL")[0][0]


def _wait(ps, stdin=None):
    outs = []
    for p in ps:
        out, err = p.communicate(stdin, timeout=300)
        outs.append((p.returncode, out.decode(), err.decode()))
    return outs


@pytest.mark.parametrize("run", range(2))
def test_one_file_ingested_by_several_processes_at_once_is_one_source(cli, store_target, tmp_path, run):
    cli("remember", "Deploys go through the runbook", "--cluster", "proc")  # the store exists: no creation race
    doc = _doc(tmp_path)
    outs = _wait([_start(["ingest", str(doc), "--cluster", "proc"], store_target) for _ in range(WRITERS)])
    assert all(rc == 0 and "Traceback" not in err for rc, _, err in outs), outs
    sources = _live_sources(store_target)
    assert len(sources) == 1, (sources, outs)
    sid = sources[0][0]
    assert all(sid in out for _, out, _ in outs), outs  # each names the one source
    n = _live_chunks(store_target)
    rc, out, err = cli("ingest", str(doc), "--cluster", "proc")
    assert rc == 0 and out.startswith(f"updated {sid}") and f"{n} unchanged" in out, (out, err)


def test_named_stdin_text_ingested_at_once_is_one_source(cli, store_target, tmp_path):
    cli("remember", "Deploys go through the runbook", "--cluster", "proc")
    text = _doc(tmp_path).read_bytes()
    ps = [_start(["ingest", "-", "--name", "runbook.txt", "--cluster", "proc"], store_target, stdin=True)
          for _ in range(WRITERS)]
    outs = [(p.returncode, *(s.decode() for s in p.communicate(text, timeout=300))) for p in ps]
    outs = [(p.returncode, o, e) for p, (_, o, e) in zip(ps, outs)]
    assert all(rc == 0 for rc, _, _ in outs), outs
    assert len(_live_sources(store_target)) == 1, outs


def test_another_cluster_at_once_is_still_refused_as_a_reingest_would_be(cli, store_target, tmp_path):
    """The process that loses the race updates the winner's source only in its cluster:
    a different --cluster gets the usual refusal (with --as-new as the way on), or wins."""
    cli("remember", "Deploys go through the runbook", "--cluster", "proc")
    doc = _doc(tmp_path)
    ps = [_start(["ingest", str(doc), "--cluster", c], store_target) for c in ("proc", "projects")]
    outs = _wait(ps)
    assert len(_live_sources(store_target)) == 1, outs
    assert sorted(rc for rc, _, _ in outs) == [0, 1], outs
    assert any("--as-new" in err for rc, _, err in outs if rc == 1), outs
