"""A tiny command-line "LLM" for the ``command`` backend: reads the prompt on stdin and
prints an answer on stdout, like ``claude -p`` or ``llm`` would.

    python llm_cli.py --answer '[...]'                 # print a fixed answer
    python llm_cli.py --url http://127.0.0.1:PORT      # ask a scripted Messages server
    python llm_cli.py --env-out FILE --prompt-out FILE # also record what it was given
    python llm_cli.py --append-to FILE --sleep 2       # count calls; answer slowly

``--url`` posts the prompt to ``<url>/v1/messages`` (Anthropic Messages, non-streaming)
and prints the text of the answer. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answer")
    ap.add_argument("--url")
    ap.add_argument("--env-out")
    ap.add_argument("--prompt-out")
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("--append-to", help="append one line per call to this file (counts calls)")
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds to think before answering")
    a = ap.parse_args(argv)
    prompt = sys.stdin.read()
    if a.append_to:
        with open(a.append_to, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    if a.sleep:
        import time

        time.sleep(a.sleep)
    if a.env_out:
        with open(a.env_out, "w") as fh:
            json.dump(dict(os.environ), fh)
    if a.prompt_out:
        with open(a.prompt_out, "w") as fh:
            fh.write(prompt)
    if a.exit:
        print("scripted failure", file=sys.stderr)
        return a.exit
    if a.url:
        body = {"model": "claude-fake", "max_tokens": 1000, "messages": [{"role": "user", "content": prompt}]}
        req = urllib.request.Request(a.url.rstrip("/") + "/v1/messages", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json", "anthropic-version": "2023-06-01",
                                              "x-api-key": "fake"}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = json.loads(resp.read())
        sys.stdout.write("".join(b.get("text", "") for b in data.get("content", []) if b.get("type") == "text"))
        return 0
    sys.stdout.write(a.answer or "[]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
