"""LLM backends for distillation, over the standard library only (no vendor SDKs).

* ``command``: any program that reads the prompt on stdin and prints the answer
  (``claude -p``, simonw's ``llm``, ``opencode run``...). Our own hooks are disabled
  for that child (``LEDGER_HOOKS_DISABLED=1``) so distilling never observes itself.
* ``openai``: an OpenAI-compatible ``POST {url}/chat/completions`` (OpenAI, Ollama,
  llama.cpp, vLLM). Token use from ``usage.prompt_tokens/completion_tokens``.
* ``gemini``: Gemini CLI's headless mode (``gemini -p``), through the user's own
  Gemini login; no extension loaded for the call.
* ``anthropic``: the Messages API ``POST {url}/v1/messages`` with ``x-api-key`` and
  ``anthropic-version: 2023-06-01``. Token use from ``usage.input_tokens/output_tokens``.
* ``codex``: Codex CLI itself, ``codex exec`` with the prompt on stdin, every hook off for
  that call (``--disable hooks``), nothing saved (``--ephemeral``), a read-only sandbox
  and no approvals; Codex's configured model unless ``[llm] model`` names one
  (docs/harness-contracts.md, Codex section).

Every call returns a :class:`Completion`; failures raise :class:`LLMError` with a message
that names the backend and what to check.

Backends live in one registry, :data:`BACKENDS` (name -> :class:`Backend`): a new one is
one function decorated with :func:`backend`. The registry also names the backends that
call no model from here (``none``; ``fallback``/``heuristic``, the deterministic
distiller; ``opencode``, which distills inside OpenCode's session server), so the
settings can check ``[llm] backend`` against it. Importing this module is cheap (it is
checked on the hook path when a backend is configured): ``subprocess``, ``shlex`` and
``urllib`` are imported by the backends that use them.
"""

from __future__ import annotations

import json
import os
import time

SYSTEM = (
    "You extract confirmed facts from a coding agent's tool outputs. Respond only with a JSON array "
    'of objects {"fact": string, "topic": string, "files": [string]}; respond [] when there are none.'
)


class LLMError(Exception):
    pass


class Completion:
    """An answer with token counts (estimated at 4 characters a token when the backend
    does not report them) and the wall time in ms."""

    __slots__ = ("text", "prompt_tokens", "completion_tokens", "ms", "model")

    def __init__(self, text: str, prompt_tokens: int, completion_tokens: int, ms: float, model: str | None):
        self.text, self.prompt_tokens, self.completion_tokens, self.ms, self.model = text, prompt_tokens, completion_tokens, ms, model


def _estimate(text: str) -> int:
    return max(1, len(text) // 4)


class Backend:
    """One registry entry. ``call(prompt, llm) -> (text, prompt_tokens,
    completion_tokens)`` (0 tokens = not reported) sends a prompt; ``None`` means this
    backend is not called through :func:`complete` (``help`` says where it runs)."""

    __slots__ = ("name", "call", "help")

    def __init__(self, name: str, call, help: str):
        self.name, self.call, self.help = name, call, help

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"


#: Every backend ``[llm] backend`` may name, in registration order.
BACKENDS: dict[str, Backend] = {}


def backend(name: str, help: str):
    """Decorator registering ``fn(prompt, llm)`` as backend ``name``."""

    def deco(fn):
        BACKENDS[name] = Backend(name, fn, help)
        return fn

    return deco


def _elsewhere(name: str, help: str) -> None:
    BACKENDS[name] = Backend(name, None, help)


def callable_backends() -> list[str]:
    """Names of the backends :func:`complete` can call."""
    return [b.name for b in BACKENDS.values() if b.call is not None]


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def complete(prompt: str, llm: dict) -> Completion:
    """Send ``prompt`` to the configured backend (``llm`` is the ``[llm]`` config).
    Raises :class:`LLMError` when the backend fails or cannot be called from here."""
    name = (llm.get("backend") or "none").lower()
    entry = BACKENDS.get(name)
    if entry is None or entry.call is None:
        why = f"it {entry.help}" if entry is not None else "there is no such backend"
        raise LLMError(f'LLM backend "{name}" is not usable here ({why}): set [llm] backend to '
                       f"{_one_of(callable_backends())} in config.toml (or $LEDGER_LLM_BACKEND).")
    t0 = time.perf_counter()
    text, pt, ct = entry.call(prompt, llm)
    return Completion(text, pt or _estimate(prompt), ct or _estimate(text), (time.perf_counter() - t0) * 1000, llm.get("model") or None)


_elsewhere("none", "turns distillation off")


@backend("command", "a program reading the prompt on stdin and printing the answer ([llm] command)")
def _command(prompt: str, llm: dict) -> tuple[str, int, int]:
    import shlex
    import subprocess

    cmd = llm.get("command") or ""
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if not argv:
        raise LLMError("command backend: [llm] command is empty. Example: command = \"claude -p\"")
    env = dict(os.environ, LEDGER_HOOKS_DISABLED="1")
    try:
        p = subprocess.run(argv, input=prompt, capture_output=True, text=True, timeout=float(llm.get("timeout") or 120), env=env,
                           preexec_fn=die_with_parent())
    except FileNotFoundError:
        raise LLMError(f"command backend: {argv[0]!r} not found on PATH.") from None
    except subprocess.TimeoutExpired:
        raise LLMError(f"command backend: {argv[0]} did not answer within {llm.get('timeout')} s.") from None
    if p.returncode != 0:
        raise LLMError(f"command backend: {argv[0]} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout, 0, 0


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent():
    """A ``preexec_fn`` making the child receive SIGKILL when the process that started it
    dies, however it dies (``kill -9`` included), or None where that is not available.

    Linux only: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ctypes. A distiller killed
    during its LLM call then leaves no ``claude -p`` (or other command) behind; elsewhere
    the child runs to its own timeout and the session's lease expires (store.watch
    LEASE_MS) so a new distiller can start."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def _key(llm: dict) -> str | None:
    var = llm.get("api_key_env") or ""
    return os.environ.get(var) if var else None


def _post(url: str, body: dict, headers: dict, timeout: float) -> dict:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json", **headers}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise LLMError(f"{url} answered HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise LLMError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:  # JSONDecodeError, or bytes that are not even UTF-8
        raise LLMError(f"{url} answered with invalid JSON: {exc}") from None


@backend("openai", "an OpenAI-compatible chat completions API ([llm] url, model, api_key_env)")
def _openai(prompt: str, llm: dict) -> tuple[str, int, int]:
    base = (llm.get("url") or "https://api.openai.com/v1").rstrip("/")
    headers = {}
    key = _key(llm)
    if key:
        headers["authorization"] = f"Bearer {key}"
    body = {"model": llm.get("model") or "gpt-4o-mini", "temperature": 0, "max_tokens": int(llm.get("max_tokens") or 1500),
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]}
    data = _post(base + "/chat/completions", body, headers, float(llm.get("timeout") or 120))
    try:
        text = data["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"openai backend: unexpected answer shape: {str(data)[:200]}") from None
    usage = data.get("usage") or {}
    return text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


@backend("anthropic", "the Anthropic Messages API ([llm] url, model, api_key_env)")
def _anthropic(prompt: str, llm: dict) -> tuple[str, int, int]:
    base = (llm.get("url") or "https://api.anthropic.com").rstrip("/")
    headers = {"anthropic-version": "2023-06-01"}
    key = _key(llm) or os.environ.get("ANTHROPIC_API_KEY")
    if key:
        headers["x-api-key"] = key
    body = {"model": llm.get("model") or "claude-haiku-4-5", "max_tokens": int(llm.get("max_tokens") or 1500), "system": SYSTEM,
            "messages": [{"role": "user", "content": prompt}]}
    data = _post(base + "/v1/messages", body, headers, float(llm.get("timeout") or 120))
    try:
        text = "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
    except (KeyError, TypeError, AttributeError):
        raise LLMError(f"anthropic backend: unexpected answer shape: {str(data)[:200]}") from None
    usage = data.get("usage") or {}
    return text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)


#: The ``codex exec`` arguments of the ``codex`` backend (the prompt comes on stdin, ``-``).
CODEX_ARGS = ("exec", "--disable", "hooks", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only",
              "-c", 'approval_policy="never"', "--color", "never")


def codex_argv(llm: dict) -> list[str]:
    """The command line of the ``codex`` backend: ``[llm] command`` (default ``codex``)
    then :data:`CODEX_ARGS`, ``-m <model>`` when ``[llm] model`` is set, and ``-``
    (read the prompt from stdin)."""
    import shlex

    cmd = llm.get("command") or "codex"
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if llm.get("model"):
        argv += ["-m", str(llm["model"])]
    return argv + list(CODEX_ARGS) + ["-"]


@backend("codex", "Codex CLI: `codex exec` with hooks off for the call ([llm] model, optional [llm] command = the codex executable)")
def _codex(prompt: str, llm: dict) -> tuple[str, int, int]:
    # codex exec prints only the final answer on stdout (progress goes to stderr); the
    # system text goes first in the prompt, as exec takes one prompt.
    return _command(SYSTEM + "\n\n" + prompt, {**llm, "command": codex_argv(llm)})


@backend("gemini", "Gemini CLI's headless mode, `gemini -p`, with its own login ([llm] command, model)")
def _gemini(prompt: str, llm: dict) -> tuple[str, int, int]:
    """``gemini -e none -o json -p SYSTEM`` with the prompt on stdin (Gemini appends the
    ``-p`` text to its input; docs/harness-contracts.md §D9). ``-e none`` loads no
    extension, so ledger's own hooks and MCP server stay out of the call (and
    ``LEDGER_HOOKS_DISABLED=1`` is set too). ``[llm] command`` replaces ``gemini``
    (a path, or extra flags); ``[llm] model`` is passed as ``-m``. Token counts come from
    the JSON answer's ``stats.models.*.tokens`` (``prompt``, ``candidates``)."""
    import shlex
    import subprocess

    cmd = llm.get("command") or "gemini"
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    argv += ["-e", "none", "-o", "json", "-p", SYSTEM]
    if llm.get("model"):
        argv += ["-m", str(llm["model"])]
    env = dict(os.environ, LEDGER_HOOKS_DISABLED="1")
    try:
        p = subprocess.run(argv, input=prompt, capture_output=True, text=True, timeout=float(llm.get("timeout") or 180),
                           env=env, preexec_fn=die_with_parent())
    except FileNotFoundError:
        raise LLMError(f"gemini backend: {argv[0]!r} not found on PATH (npm install -g @google/gemini-cli).") from None
    except subprocess.TimeoutExpired:
        raise LLMError(f"gemini backend: {argv[0]} did not answer within {llm.get('timeout') or 180} s.") from None
    out = p.stdout.strip()
    try:
        data = json.loads(out[out.index("{"):]) if "{" in out else None
    except ValueError:
        data = None
    if p.returncode != 0 or not isinstance(data, dict):
        detail = (data or {}).get("error") if isinstance(data, dict) else None
        why = (detail.get("message") if isinstance(detail, dict) else None) or (p.stderr or p.stdout).strip()[-300:]
        raise LLMError(f"gemini backend: {argv[0]} exited {p.returncode}: {why}")
    text = data.get("response")
    if not isinstance(text, str):
        raise LLMError(f"gemini backend: no response in its JSON answer: {out[:200]}")
    pt = ct = 0
    models = (data.get("stats") or {}).get("models") if isinstance(data.get("stats"), dict) else None
    for m in (models or {}).values():
        tokens = m.get("tokens") if isinstance(m, dict) else None
        if isinstance(tokens, dict):
            pt += int(tokens.get("prompt") or 0)
            ct += int(tokens.get("candidates") or 0)
    return text, pt, ct


_elsewhere("fallback", "distills without a model: the deterministic distiller (ledger.watcher.fallback)")
_elsewhere("heuristic", "is another name for fallback")
_elsewhere("opencode", "distills through OpenCode's own session API, inside the OpenCode plugin's session server")
