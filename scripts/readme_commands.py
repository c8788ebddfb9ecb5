"""Run every ``ledger ...`` command the README shows and report any that end in a
traceback (a clear ``✕`` error is fine: the README uses example ids that do not exist).

    python scripts/readme_commands.py --ledger /path/to/bin/ledger

Each command runs in a throwaway ``$HOME``/``$LEDGER_HOME`` with a small store (one
remembered claim, one ingested file, so the examples have something to act on), from a
throwaway git project folder, with stdin closed. ``ledger serve`` must print its URL and
answer ``/health`` before it is stopped. Exit status 1 when any command printed a
traceback or timed out; used by ``tests/test_readme_commands.py`` (against this venv)
and ``scripts/check-plain-install`` (against a fresh ``pip install .`` with no extras).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60


def readme_commands(readme: Path = ROOT / "README.md") -> list[str]:
    """Every line starting with ``ledger `` inside a fenced bash block, comments removed,
    in README order, without repeats."""
    out: list[str] = []
    in_bash = False
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_bash = line.strip() in ("```bash", "```sh")
            continue
        if not in_bash:
            continue
        cmd = _strip_comment(line.strip())
        if cmd.startswith("ledger ") and cmd not in out:
            out.append(cmd)
    return out


def _strip_comment(line: str) -> str:
    # A '#' starts a comment only outside quotes and after whitespace ("runbook §3" has none).
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def _prepare(ledger: str, env: dict, proj: Path) -> None:
    subprocess.run(["git", "init", "-q", str(proj)], check=False, capture_output=True)
    (proj / "docs").mkdir()
    (proj / "docs" / "runbook.md").write_text("# Runbook\n\nStaging deploys need the VPN up.\n\nRollbacks use the previous tag.\n")
    (proj / "notes.md").write_text("Invoice terms for ACME are net 30.\n")
    for argv in (["remember", "Invoice terms for acme are net 30", "--cluster", "proc", "--agent", "claude"],
                 ["ingest", "notes.md", "--cluster", "reading"]):
        subprocess.run([ledger, *argv], env=env, cwd=proj, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def run_all(ledger: str, commands: list[str] | None = None) -> list[dict]:
    """Run each command; returns ``[{"command", "rc", "traceback", "timeout", "stderr"}]``."""
    commands = readme_commands() if commands is None else commands
    results = []
    with tempfile.TemporaryDirectory(prefix="ledger-readme-") as tmp:
        tmp = Path(tmp)
        home, proj = tmp / "home", tmp / "project"
        home.mkdir()
        proj.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
        env.update(HOME=str(home), LEDGER_HOME=str(home / ".ledger"), LEDGER_AGENT="claude", NO_COLOR="1",
                   XDG_CONFIG_HOME=str(home / ".config"))
        env["PATH"] = str(Path(ledger).parent) + os.pathsep + env.get("PATH", "")
        _prepare(ledger, env, proj)
        for cmd in commands:
            argv = shlex.split(cmd)
            argv[0] = ledger
            if argv[1] == "serve":
                results.append(_serve(argv, env, proj, cmd))
                continue
            if ">" in argv:  # `ledger export cluster:code > code.jsonl`
                argv = argv[: argv.index(">")]
            try:
                p = subprocess.run(argv, env=env, cwd=proj, capture_output=True, text=True, timeout=TIMEOUT,
                                   stdin=subprocess.DEVNULL)
                results.append({"command": cmd, "rc": p.returncode, "traceback": "Traceback" in p.stderr + p.stdout,
                                "timeout": False, "stderr": p.stderr[-2000:]})
            except subprocess.TimeoutExpired:
                results.append({"command": cmd, "rc": None, "traceback": False, "timeout": True, "stderr": ""})
    return results


def _serve(argv: list[str], env: dict, proj: Path, cmd: str) -> dict:
    argv = [a for a in argv if a != "--port"] + ["--port", "0"]
    with subprocess.Popen(argv, env=env, cwd=proj, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL) as proc:
        try:
            line = proc.stdout.readline()
            m = re.search(r"(http://\S+/)", line)
            ok = False
            if m:
                with urllib.request.urlopen(m.group(1) + "health", timeout=10) as r:
                    ok = json.load(r).get("ok") is True
        except OSError:
            ok = False
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
    return {"command": cmd, "rc": 0 if ok else 1, "traceback": "Traceback" in err, "timeout": False,
            "stderr": (err or "")[-2000:] if not ok else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ledger", default=str(Path(sys.executable).with_name("ledger")))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = run_all(args.ledger)
    bad = [r for r in results if r["traceback"] or r["timeout"] or (r["command"].startswith("ledger serve") and r["rc"])]
    if args.json:
        print(json.dumps({"ok": not bad, "results": results}, indent=2))
    else:
        for r in results:
            mark = "✕" if r in bad else "✓"
            print(f"{mark} rc={r['rc']}  {r['command']}")
            if r in bad:
                print("    " + r["stderr"].strip().replace("\n", "\n    "))
        print(f"{len(results)} README commands, {len(bad)} with a traceback, a timeout or a dead server")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
