"""Distillation: turn a session's new observations into findings stored as claims.

Run detached by the hook (``python -m ledger __distill --db … --session … --owner …``, see
:mod:`ledger.cli.distiller`) once the session's lease was taken, inline by ``ledger replay``,
or in a thread of the OpenCode session server. Not on the hook's latency path. It
writes claims through the service object its caller passes in (``led``); it never
imports the facade, which sits a layer above the watcher (docs/architecture.md).

Each finding becomes a claim written by the watcher agent, with provenance naming the
session and steps, its topic, and file keys (size, mtime, sha256 at the time). Findings
are written through :meth:`ledger.service.Ledger.remember`, so they follow the one rule
of docs/store.md "Corroboration": a finding that repeats a live claim (same file keys,
no value changed) corroborates it instead of adding a copy; anything else, including a
finding that changes one value, is a new claim and goes through the contradiction
proposer like every claim.
"""

from __future__ import annotations

import json
import time

from ..plaintext import plain_text, visible_text
from .llm import LLMError, complete
from .trajectory import Observation, build_prompt, parse_findings

DISTILL_CLUSTER = "code"


#: Backends that need no LLM: the deterministic distiller of :mod:`.fallback`.
FALLBACK_BACKENDS = ("fallback", "heuristic")


def distill_session(led, key: str, owner: str, cfg: dict, *, answer_fn=None, log=print, full_read=None,
                    full_output=None, on_added=None) -> dict:
    """Distill the observations of session ``key`` after its last distilled step.

    ``led`` is an open :class:`ledger.service.Ledger`; ``answer_fn(prompt) -> (text,
    prompt_tokens, completion_tokens)`` replaces the LLM (tests). With ``[llm] backend``
    ``fallback`` (or ``heuristic``) and no ``answer_fn`` the deterministic distiller of
    :mod:`.fallback` answers, ``full_read`` and ``full_output`` being its optional
    sources of uncut Read contents and command outputs. ``on_added(memory_id, paths)`` is
    called for each claim added (``ledger replay`` measures with it). Always
    releases the lease. Returns counts: ``{"observations", "findings", "added",
    "corroborated", "rejected", "skipped"}``.
    """
    W = led.store.watch
    result = {"observations": 0, "findings": 0, "added": 0, "corroborated": 0, "rejected": 0, "skipped": None}
    sess = W.session(key)
    last_step = sess.get("distilled_step", 0)
    try:
        now = led.clock()
        budget = int(cfg["llm"].get("daily_token_budget") or 0)
        if answer_fn is None and budget and W.tokens_today(now) >= budget:
            result["skipped"] = f"daily token budget of {budget} spent"
            log(f"distill {key}: skipped, {result['skipped']}")
            return result
        rows = W.observations(key, after_step=last_step, limit=500)
        if not rows:
            result["skipped"] = "no new observations"
            return result
        # Observations stored before terminal controls were removed at the hook (and
        # any a harness slipped past it) are cleaned here, for the model's prompt and the
        # fallback's parsers alike (docs/watcher.md "Terminal control sequences").
        rows = [{**r, "output": plain_text(r["output"]) if isinstance(r["output"], str) else r["output"]} for r in rows]
        obs = [Observation(r["step"], r["tool"], _summary(r), r["output"], tuple(r["files"]), None if r["ok"] is None else bool(r["ok"])) for r in rows]
        result["observations"] = len(obs)
        files = sorted({p for o in obs for p in o.files})
        # Oldest first: build_prompt keeps the end of the list when it must cut. The
        # model is handed these as known facts: one that reads as instructions is left
        # out, as from a hook's hand-back (admit.handed_back).
        from .admit import handed_back

        known = [visible_text(f["text"]) for f in reversed(handed_back(W.facts_for_files(files, limit=40),
                                                                       f"distill {key}: known facts"))]
        prompt = build_prompt(obs, known, per_output_cap=int(cfg["watcher"]["max_output_chars"]),
                              total_cap=int(cfg["watcher"]["max_trajectory_chars"]))
        t0 = time.perf_counter()
        backend_name = str(cfg["llm"].get("backend") or "").lower()
        if answer_fn is None and backend_name in FALLBACK_BACKENDS:
            from . import fallback

            def answer_fn(_prompt: str):
                return json.dumps(fallback.findings(rows, cwd=sess.get("cwd"), full_read=full_read,
                                                   full_output=full_output)), 0, 0
        try:
            if answer_fn is not None:
                text, pt, ct = answer_fn(prompt)
                backend, model = "scripted", None
            else:
                c = complete(prompt, cfg["llm"])
                text, pt, ct, backend, model = c.text, c.prompt_tokens, c.completion_tokens, cfg["llm"]["backend"], c.model
        except LLMError as exc:
            W.record_llm_call(session=key, backend=cfg["llm"]["backend"], model=cfg["llm"].get("model"), prompt_tokens=0,
                              completion_tokens=0, ms=(time.perf_counter() - t0) * 1000, ok=False, error=str(exc), now=led.clock())
            log(f"distill {key}: {exc}")
            raise
        if backend_name not in FALLBACK_BACKENDS:  # no LLM was called: nothing to account
            W.record_llm_call(session=key, backend=backend, model=model, prompt_tokens=pt, completion_tokens=ct,
                              ms=(time.perf_counter() - t0) * 1000, ok=True, error=None, now=led.clock())
        findings = parse_findings(text)
        result["findings"] = len(findings)
        agent = cfg["watcher"]["agent"]
        steps = f"{obs[0].step}-{obs[-1].step}" if len(obs) > 1 else f"{obs[0].step}"
        cwd = sess.get("cwd") or "."
        from ..filekeys import file_key

        seen_files = set(files)
        from .admit import instruction_like, names_session

        commands = _commands(rows)
        for f in findings:
            # docs/watcher.md "What a finding must be to be handed back": text addressed
            # to the agent (a prompt injection in a tool output) is never stored; a
            # finding naming no file or command of the session is stored without file
            # keys, so no hook hands it back by itself. Judged on the text as the model
            # wrote it: an invisible character may stand for the space between two words.
            if instruction_like(f.fact):
                result["rejected"] += 1
                log(f"distill {key}: finding rejected: reads as instructions to the agent: "
                    f"{visible_text(f.fact)[:80]!r}")
                continue
            # A model may echo an escape sequence or an invisible character it was shown:
            # what is stored is the text as it is drawn.
            fact, topic = visible_text(f.fact), visible_text(f.topic) if f.topic else f.topic
            if fact != f.fact or topic != f.topic:
                f = f.replace(fact=fact, topic=topic)
            # Resolve against the session's cwd, then keep only files the trajectory
            # really touched, so a path the model invents never becomes a file key.
            # A file the finding names but this trajectory did not touch is still where
            # its duplicates live (it may restate a known fact), without becoming a key.
            resolved = [file_key(p, cwd) for p in f.files]
            keys = [k for k in resolved if k.path in seen_files]
            named = [k.path for k in resolved if k.path not in seen_files]
            if keys and not names_session(f.fact, files, commands):
                log(f"distill {key}: finding names no file or command of the session; stored without file keys")
                named, keys = [k.path for k in resolved], []
            paths = [k.path for k in keys]
            try:
                res = led.remember(f.fact, cluster=DISTILL_CLUSTER, agent=agent, note=f"distilled from {key} steps {steps}",
                                   topic=f.topic or None, files=keys, named_files=named)
                if res.duplicate:  # docs/store.md "Corroboration"
                    result["corroborated"] += 1
                    continue
                result["added"] += 1
                if on_added is not None:
                    on_added(res.memory.id, paths)
            except Exception as exc:  # one bad finding must not lose the others
                result["rejected"] += 1
                log(f"distill {key}: finding rejected: {exc}")
        if result["added"]:
            with W.atomic():
                W.reset_escalation(key)
        last_step = obs[-1].step
        return result
    finally:
        W.release_lease(key, owner, last_step if result["observations"] else None)


def _commands(rows: list[dict]) -> list[str]:
    """The shell commands of the observations ``rows`` (their ``command`` inputs)."""
    out = []
    for r in rows:
        try:
            inp = json.loads(r["input"]) if isinstance(r["input"], str) else r["input"]
        except (TypeError, ValueError):
            continue
        if isinstance(inp, dict) and isinstance(inp.get("command"), str):
            out.append(inp["command"])
    return out


def _summary(row: dict) -> str:
    try:
        inp = json.loads(row["input"])
    except (TypeError, ValueError):
        return plain_text(str(row["input"])[:600])
    from .trajectory import summarize_input

    return plain_text(summarize_input(row["tool"], inp if isinstance(inp, dict) else {"input": inp}))


