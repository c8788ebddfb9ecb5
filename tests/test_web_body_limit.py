"""A request body over the web server's limit (``web.api.MAX_BODY``, 2 MiB) is the
client's mistake: a 413 with nothing on the console of ``ledger serve``. It printed a
full traceback there (``_RequestBodyTooLarge`` caught as a bug) on every such request.
A body sent in chunks (no Content-Length) gets the JSON error shape with the limit.
Real ``ledger serve``, real HTTP."""

from __future__ import annotations

import httpx
from liveserve import LiveServe
from test_cli import remember

from ledger.web.api import MAX_BODY


def test_an_oversized_body_is_a_413_and_no_traceback(cli):
    mid = remember(cli, "Staging deploys need the VPN up", "proc")
    srv = LiveServe(cli.db)
    try:
        big = b'{"text": "' + b"a" * (MAX_BODY + 10) + b'"}'
        r = httpx.patch(f"{srv.url}api/memories/{mid}", content=big, headers={**srv.origin, "content-type": "application/json"},
                        timeout=60)
        assert r.status_code == 413, r.text

        def chunks():
            for i in range(0, len(big), 65536):
                yield big[i:i + 65536]

        r = httpx.patch(f"{srv.url}api/memories/{mid}", content=chunks(),
                        headers={**srv.origin, "content-type": "application/json"}, timeout=60)
        assert r.status_code == 413, r.text
        body = r.json()
        assert body["kind"] == "invalid-input" and f"{MAX_BODY:,} bytes" in body["error"], body
        ok = httpx.get(f"{srv.url}api/memories/{mid}", headers=srv.origin, timeout=30)
        assert ok.status_code == 200 and "Staging deploys need the VPN up" in ok.text  # unchanged
    finally:
        srv.proc.terminate()
        _, err = srv.proc.communicate(timeout=30)
    assert "Traceback" not in err, err
