"""Which files a tool call touches: the file keys that findings are matched on.

A finding's file keys are resolved absolute paths, and relevance is an exact path match
(docs/design.md, watcher). So every path leaves here in one normal form:
``os.path.realpath(os.path.join(base, os.path.expanduser(p)))`` — absolute, ``..`` and
``.`` folded, symlinks resolved for the part of the path that exists. ``realpath`` does
not require existence (non-strict), so a file keyed before it was created gets the same
key as after, as long as its directory exists.

Sources of paths, by tool:

- any tool: ``file_path``, ``path``, ``notebook_path`` inputs (and OpenCode's
  ``filePath``, ``notebookPath``), and each concrete entry (no glob characters) of a
  ``paths`` list (Gemini's ``read_many_files`` and MCP tools, normalised by
  :mod:`ledger.harness.gemini`);
- Grep: also ``glob`` when it names one concrete file (``mix.exs``, not ``*.ex``), joined
  to ``path``; Glob: ``pattern`` when it names one concrete file;
- Bash: the command, tokenised with :mod:`shlex` (quotes, escapes, operators), split
  into simple commands on ``|``, ``||``, ``&&``, ``;``, ``&``, newlines and ``( )``.
  A token is a path when it contains ``/``, has a known file extension
  (:data:`FILE_EXTENSIONS`) or exists relative to the current base directory. Skipped:
  the command word itself (unless ``./x`` or ``../x``), flags (but ``--out=dist/x.js``
  yields ``dist/x.js``), redirection operators and fd numbers (their targets are kept,
  except ``/dev/*``), URLs and ``host:port``/``user@host:`` forms, ``NAME=value``
  assignments, tokens with shell expansions (``$``, backticks) or glob characters,
  tokens with whitespace, quotes, parentheses or ``:`` unless they exist, heredoc
  bodies, comments, the pattern argument of ``grep``/``rg``/``sed``/``awk``/``jq``...,
  and the arguments of ``echo``/``printf``. ``cd DIR`` changes the base directory for
  the rest of the command; ``bash -c 'SCRIPT'`` is parsed as a command line of its own.
  The program of ``python -c``, ``node -e``, ``ruby -e``, ``perl -e``... is no path, but
  each of its one-line string literals is one when it exists or has a known extension
  (``torch.load('x/model.ckpt')``).
  ``file.py:12`` and ``tests/x.py::test_y`` give ``file.py`` / ``tests/x.py``.
- patch tools (Codex ``apply_patch``, OpenCode ``patch``): the files the patch text names
  in its ``*** Add File:``, ``*** Update File:``, ``*** Delete File:`` and ``*** Move
  to:`` lines (:func:`patch_paths`), the text taken from ``command`` (Codex),
  ``patchText``, ``patch`` or ``input``.

The result is de-duplicated and keeps first-seen order. Nothing here raises on odd input:
an unbalanced quote falls back to a plain split. Cost is one ``shlex`` pass plus a few
``stat`` calls per path-like token.

Stdlib only: ``os``, ``re``, ``shlex``.
"""

from __future__ import annotations

import os
import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from typing import TypeGuard

    from ledger.events import ToolCall

#: Tools whose calls can touch files (Claude Code names; compared case-insensitively so
#: OpenCode's ``bash``/``read``... match too; Codex reports its shell tools as ``Bash``).
FILE_TOOLS = frozenset(
    {"bash", "read", "grep", "glob", "edit", "write", "notebookedit", "multiedit", "apply_patch", "patch"}
)
#: Tools whose input is a patch naming its files (Codex ``apply_patch``, OpenCode ``patch``).
PATCH_TOOLS = frozenset({"apply_patch", "patch"})
_PATCH_KEYS = ("command", "patchText", "patch", "input")
_PATCH_MARKERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")

#: Extensions that make a bare token (no ``/``) count as a file name.
FILE_EXTENSIONS = frozenset(
    {
        "py", "pyi", "pyx", "ipynb", "js", "mjs", "cjs", "jsx", "ts", "tsx", "vue", "svelte",
        "json", "jsonl", "ndjson", "yaml", "yml", "toml", "ini", "cfg", "conf", "env", "lock",
        "md", "mdx", "rst", "txt", "csv", "tsv", "dat", "log", "xml", "html", "htm", "css", "scss",
        "sass", "less", "sql", "db", "sqlite", "sqlite3", "sh", "bash", "zsh", "fish", "ps1",
        "bat", "rb", "go", "rs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "java", "kt", "kts",
        "scala", "swift", "m", "mm", "cs", "fs", "php", "pl", "pm", "lua", "r", "jl", "dart", "ex",
        "exs", "eex", "heex", "leex", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "elm", "zig",
        "nim", "tf", "tfvars", "proto", "graphql", "gql", "gradle", "mk", "cmake", "dockerfile",
        "ckpt", "bin", "bpe", "safetensors", "npy", "npz", "pt", "pth", "onnx", "pkl", "pickle",
        "h5", "hdf5", "parquet", "arrow", "feather", "gguf", "tflite", "pb", "model", "vocab",
        "tiktoken", "spm", "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "pdf", "zip", "tar",
        "gz", "tgz", "bz2", "xz", "zst", "whl", "patch", "diff", "pem", "crt", "key", "pub",
    }
)

_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "notebookPath")
_GLOB_CHARS = frozenset("*?[]{}")
_SEPARATORS = frozenset({"|", "||", "&&", ";", ";;", "&", "|&", "\n", "(", ")"})
# Commands whose first positional argument is a pattern/program, not a file.
_PATTERN_FIRST = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "jq", "yq"}
)
# Options of those commands that take the pattern/program as their value.
_PATTERN_OPTS = frozenset({"-e", "--regexp", "--expression", "-f", "--file"})
# Commands whose arguments are text, not files.
_TEXT_ARGS = frozenset({"echo", "printf", "cd", "pushd", "export", "alias", "unset", "set"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# Interpreters that take a program as an option's value (``python -c CODE``, ``node -e
# CODE``): the program is not a path, but the files it opens are named in its string
# literals. Versioned names (python3.11, node18) are folded to these by _interpreter.
_INLINE_CODE = {
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "bun": ("-e", "--eval"),
    "deno": ("eval",), "ruby": ("-e",), "perl": ("-e", "-E"), "php": ("-r",), "rscript": ("-e",),
    "julia": ("-e", "--eval"), "lua": ("-e",), "osascript": ("-e",),
}
# A string literal of such a program: single, double or backquoted, on one line, without
# escapes (a path with an escaped quote in it is not worth a parser).
_CODE_LITERAL = r"""'([^'\\\n]{1,4096})'|"([^"\\\n]{1,4096})"|`([^`\\\n$]{1,4096})`"""
# Prefix commands: the real command word follows them.
_WRAPPERS = frozenset(
    {"sudo", "time", "nohup", "nice", "exec", "command", "builtin", "env", "xargs", "then",
     "do", "else", "if", "while", "until", "!", "{"}
)
# Regexes are kept as source and compiled on first use through re's cache, so importing
# this module compiles nothing (hook-path import cost).
_ASSIGN = r"[A-Za-z_][A-Za-z0-9_]*\+?="
# URL, host:port, user@host: (scp/git) or NAME=value: never a local path.
_NOT_PATH = r"[A-Za-z][A-Za-z0-9+.-]*://|[\w.-]+:\d+(?:/|$)|[\w.-]+@[\w.-]+:|" + _ASSIGN
_LINE_SUFFIX = r"(?:::.*|:\d+(?::\d+)?:?)$"
_HEREDOC = r"(?<!<)<<(?!<)-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1[^\n]*\n"
_SED_SCRIPT = r"[0-9,$]*s(.).*\1.*\1[gimpeI0-9]*$"
# Characters that do not occur in the paths agents name; such tokens count only if they
# exist on disk.
_ODD_CHARS = frozenset(" \t:()<>|;'\"\\")
# Options of pattern-first commands that take a value (so the value is not the pattern).
_VALUE_OPTS = frozenset(
    {"-A", "-B", "-C", "-m", "-d", "-D", "-g", "-t", "-T", "-j", "-M", "--max-count",
     "--glob", "--type", "--type-not", "--include", "--exclude", "--exclude-dir",
     "--context", "--before-context", "--after-context", "--threads", "--max-columns"}
)


def is_file_tool(name: str) -> bool:
    """True for the tools that touch files: Bash, Read, Grep, Glob, Edit, Write,
    NotebookEdit, MultiEdit, apply_patch, patch (any case)."""
    return isinstance(name, str) and name.lower() in FILE_TOOLS


def files_touched(tool: ToolCall, cwd: str) -> list[str]:
    """Resolved absolute paths of the files ``tool`` touches, first-seen order, no dups.

    ``tool`` needs only ``.name`` (str) and ``.input`` (dict); ``cwd`` is the agent's
    working directory, the base for relative paths. Directories count (a Grep ``path``
    is usually one); the implicit "search the whole cwd" of a Grep/Glob without a path
    does not. Never raises on malformed input.
    """
    inp = tool.input if isinstance(tool.input, dict) else {}
    name = (tool.name or "").lower()
    base = cwd or os.getcwd()
    found: list[str] = []

    for key in _PATH_KEYS:
        value = inp.get(key)
        if isinstance(value, str) and value.strip():
            found.append(_resolve(base, value.strip()))
    listed = inp.get("paths")
    if isinstance(listed, list):
        found.extend(_resolve(base, p.strip()) for p in listed[:200] if _concrete(p))

    if name == "glob":
        pattern = inp.get("pattern")
        if _concrete(pattern):
            found.append(_resolve(_search_base(base, inp), pattern.strip()))
    elif name == "grep":
        pattern = inp.get("glob")
        if _concrete(pattern):
            found.append(_resolve(_search_base(base, inp), pattern.strip()))
    elif name == "bash":
        command = inp.get("command")
        if isinstance(command, str) and command.strip():
            found.extend(command_paths(command, base))
    elif name in PATCH_TOOLS:
        for key in _PATCH_KEYS:
            text = inp.get(key)
            if isinstance(text, str) and "*** " in text:
                found.extend(patch_paths(text, base))
    return _dedupe(found)


def patch_paths(patch: str, cwd: str) -> list[str]:
    """Resolved paths a patch in the ``*** Begin Patch`` format names, in order: the
    ``*** Add File:``, ``*** Update File:``, ``*** Delete File:`` and ``*** Move to:``
    lines, relative to ``cwd``. Lines inside hunks start with `` ``, ``+`` or ``-``, so
    a marker there is never mistaken for one of these."""
    out = []
    for line in patch.splitlines():
        if line.startswith(_PATCH_MARKERS):
            p = line.split(":", 1)[1].strip()
            if p:
                out.append(_resolve(cwd, p))
    return out


def command_paths(command: str, cwd: str, _depth: int = 0) -> list[str]:
    """Resolved paths a shell command names (see the module docstring for the rules)."""
    base = cwd
    out: list[str] = []
    for part in _simple_commands(_tokens(_strip_heredocs(command))):
        base = _part_paths(part, base, out, _depth)
    return _dedupe(out)


# --------------------------------------------------------------------------- helpers


def _resolve(base: str, path: str) -> str:
    if path.startswith("~"):
        path = os.path.expanduser(path)
    full = os.path.join(base, path)
    try:
        return os.path.realpath(full)
    except (ValueError, OSError):  # embedded NUL, symlink loop on odd platforms
        return os.path.normpath(os.path.abspath(full))


def _search_base(cwd: str, inp: dict[str, object]) -> str:
    path = inp.get("path")
    if isinstance(path, str) and path.strip():
        full = _resolve(cwd, path.strip())
        return full if not os.path.isfile(full) else os.path.dirname(full)
    return cwd


def _concrete(pattern: object) -> TypeGuard[str]:
    return (
        isinstance(pattern, str)
        and bool(pattern.strip())
        and not (_GLOB_CHARS & set(pattern))
    )


def _dedupe(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def _strip_heredocs(command: str) -> str:
    """Drop heredoc bodies (data, not commands); keep the ``<< EOF`` line itself."""
    if "<<" not in command:
        return command
    out = []
    pos = 0
    for m in re.finditer(_HEREDOC, command):
        if m.start() < pos:
            continue
        out.append(command[pos : m.end()])
        end = re.compile(r"^[ \t]*" + re.escape(m.group(2)) + r"[ \t]*$", re.M).search(
            command, m.end()
        )
        pos = end.end() if end else len(command)
    out.append(command[pos:])
    return "".join(out)


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"  # newlines separate commands, so they are punctuation
    lexer.commenters = ""  # '#' only starts a comment as a whole word; handled below
    tokens: list[str] = []
    try:
        for tok in lexer:
            tokens.append(tok)
    except ValueError:
        # Trigger: unbalanced quote or trailing escape. Outcome: a plain split on
        # whitespace and operators, quote characters stripped; never an error.
        return [t.strip("'\"") for t in re.findall(r"[^\s;|&<>()]+|[;|&<>()\n]+", command)]
    return tokens


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    comment = False
    for tok in tokens:
        if tok in _SEPARATORS or (tok and set(tok) <= set("|&;()\n")):
            parts.append([])
            comment = False
        elif comment:
            continue
        elif tok == "#" or (tok.startswith("#") and not parts[-1]):
            comment = True
        else:
            parts[-1].append(tok)
    return [p for p in parts if p]


def _part_paths(part: list[str], base: str, out: list[str], depth: int = 0) -> str:
    """Append the paths of one simple command to ``out``; return the new base dir."""
    # Redirections: the operator takes its target with it (kept as a 1-tuple so it is
    # emitted in order but never mistaken for the command word); fd numbers go away.
    words: list[str | tuple[str]] = []
    i = 0
    while i < len(part):
        tok = part[i]
        if set(tok) <= set("<>&|") and ("<" in tok or ">" in tok):
            target = part[i + 1] if i + 1 < len(part) else ""
            i += 2
            if tok.startswith("<<") or (tok.endswith("&") and (target.isdigit() or target == "-")):
                continue  # heredoc delimiter / fd duplication
            if target and not target.startswith("/dev/"):
                words.append((target,))
            continue
        if tok.isdigit() and i + 1 < len(part) and set(part[i + 1]) <= set("<>&|"):
            i += 1  # the "2" of "2>"
            continue
        words.append(tok)
        i += 1

    def emit(tok: str) -> None:
        path = _pathlike(tok, base)
        if path:
            out.append(path)

    # Leading assignments and wrappers, then the command word.
    j = 0
    while j < len(words):
        w = words[j]
        if isinstance(w, tuple):
            emit(w[0])
        elif not (w in _WRAPPERS or re.match(_ASSIGN, w)):
            break
        j += 1
    if j >= len(words):
        return base
    cmd = words[j]
    assert isinstance(cmd, str)
    cmd_name = os.path.basename(cmd)
    args = words[j + 1 :]

    if cmd_name in ("cd", "pushd"):
        plain = [a for a in args if isinstance(a, str)]
        target = next((a for a in plain if a == "-" or not a.startswith("-")), "~")
        if target == "-" or _has_expansion(target):
            return base  # previous dir / unknown: keep the base we have
        return _resolve(base, target)
    if cmd.startswith(("./", "../")):
        emit(cmd)
    code_opts = _INLINE_CODE.get(_interpreter(cmd_name))
    if code_opts:
        # python -c 'open("data/model.ckpt", "rb")': the files are the program's string
        # literals that name an existing file or a file of a known type; any other
        # literal ("utf-8", "application/json") is text. Arguments after the program
        # are the program's argv and are read as usual below.
        for n, arg in enumerate(args[:-1]):
            program = args[n + 1]
            if isinstance(arg, str) and arg in code_opts and isinstance(program, str):
                for m in re.finditer(_CODE_LITERAL, program):
                    lit = next(g for g in m.groups() if g is not None)
                    path = _pathlike(lit, base)
                    if path and (_has_known_extension(lit) or os.path.exists(path)):
                        out.append(path)
                args = args[: n + 1] + args[n + 2 :]  # the program is not a path itself
                break
    if cmd_name in _SHELLS and depth < 2:
        # bash -c 'SCRIPT': the script is a command line of its own.
        for n, arg in enumerate(args[:-1]):
            script = args[n + 1]
            if arg == "-c" and isinstance(script, str):
                out.extend(command_paths(script, base, depth + 1))
                return base
    text_args = cmd_name in _TEXT_ARGS
    skip_pattern = cmd_name in _PATTERN_FIRST
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if isinstance(arg, tuple):
            emit(arg[0])
            continue
        if text_args or not arg:
            continue  # echo/printf text; sed -i '' (BSD in-place suffix)
        if skip_pattern and arg in _VALUE_OPTS:
            k += 1
            continue
        if skip_pattern and arg in _PATTERN_OPTS:
            # -e PATTERN / -f FILE: the pattern is given, positionals are files.
            value = args[k] if k < len(args) else ""
            if arg in ("-f", "--file") and isinstance(value, str) and value:
                emit(value)
            k += 1
            skip_pattern = False
            continue
        if skip_pattern and arg.startswith(("--regexp=", "--expression=")):
            skip_pattern = False
            continue
        if arg.startswith("-"):
            if arg.startswith("--") and "=" in arg:
                emit(arg.split("=", 1)[1])
            continue
        if skip_pattern:
            skip_pattern = False
            continue
        if cmd_name == "sed" and re.match(_SED_SCRIPT, arg):
            continue
        emit(arg)
    return base


def _interpreter(cmd_name: str) -> str:
    """The interpreter family of a command word: ``python3.11`` → ``python``, ``node18``
    → ``node``, ``Rscript`` → ``rscript``; anything else unchanged (lower case)."""
    name = cmd_name.lower()
    if name.endswith(".exe"):
        name = name[:-4]
    return name.rstrip("0123456789.") or name


def _has_expansion(tok: str) -> bool:
    return "$" in tok or "`" in tok


def _pathlike(tok: str, base: str) -> str | None:
    """The resolved path if ``tok`` looks like a file path, else None."""
    if not tok or tok in (".", "..", "-", "--") or len(tok) > 4096:
        return None
    if "\n" in tok or "\x00" in tok or _has_expansion(tok):
        return None
    if re.match(_NOT_PATH, tok):
        return None
    if tok.startswith("/dev/") or tok.startswith("[REDACTED"):
        return None
    if ":" in tok:
        tok = re.sub(_LINE_SUFFIX, "", tok) or tok
    if _GLOB_CHARS & set(tok):
        return None
    if _ODD_CHARS & set(tok):
        full = _resolve(base, tok)
        return full if os.path.exists(full) else None
    if "/" in tok or _has_known_extension(tok):
        return _resolve(base, tok)
    if tok.isdigit():
        return None
    full = _resolve(base, tok)
    return full if os.path.exists(full) else None


def _has_known_extension(tok: str) -> bool:
    name = tok.rsplit("/", 1)[-1]
    if name.lower() in ("makefile", "dockerfile", "justfile", "gemfile", "rakefile"):
        return True
    stem, dot, ext = name.rpartition(".")
    return bool(dot and stem and ext.lower() in FILE_EXTENSIONS)


# --------------------------------------------------------------------------- investigating

#: Tools that only look at files (compared case-insensitively; Gemini's ``read_file``,
#: ``grep_search``... arrive under these names, OpenCode's in lower case).
LOOKING_TOOLS = frozenset({"read", "grep", "glob"})
#: Shell commands that only read: a command line made of these (and of ``cd``, ``echo``,
#: ``printf``, ``pwd``, ``true``), with no output redirection to a file, re-investigates.
READING_COMMANDS = frozenset(
    {"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "wc", "ls", "find",
     "file", "stat", "tree", "nl", "diff", "cmp", "jq", "od", "xxd", "hexdump", "strings", "sort", "uniq", "cut",
     "column", "bat", "awk"}
)
_NEUTRAL_COMMANDS = frozenset({"cd", "pushd", "popd", "echo", "printf", "pwd", "true"})
_GIT_READING = frozenset({"show", "log", "diff", "grep", "blame", "status", "ls-files", "cat-file"})
# Options that make an otherwise reading command write or run something.
_WRITING_OPTS = {
    "sed": ("-i", "--in-place"), "awk": ("-i",), "sort": ("-o", "--output"),
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
}
# A sed script command that writes a file (w, W) or runs one (e).
_SED_WRITES = r"(?:^|[;{}\s/0-9$])[wWe](?:\s|$)"


def is_investigating(tool: ToolCall) -> bool:
    """True when ``tool`` only looks at files: Read, Grep, Glob, or a shell command line
    every part of which reads (:data:`READING_COMMANDS`, ``git show|log|diff|grep|blame|
    status|ls-files|cat-file``) with no redirection into a file, no ``sed -i``, ``find
    -exec``/``-delete``, ``awk`` writing, ``tee``, command substitution, heredoc or
    ``sh -c``. Everything else acts (Edit, Write, MultiEdit, NotebookEdit, patches, any
    other command): an escalation may deny only an investigating call
    (``[watcher] deny_on_escalation``). In doubt, not investigating. Never raises."""
    name = (getattr(tool, "name", "") or "").lower()
    if name in LOOKING_TOOLS:
        return True
    if name != "bash":
        return False
    inp = tool.input if isinstance(tool.input, dict) else {}
    command = inp.get("command")
    if not isinstance(command, str) or not command.strip() or len(command) > 20_000:
        return False
    if "<<" in command or "$(" in command or "`" in command or "<(" in command or ">(" in command:
        return False
    reads = False
    for part in _simple_commands(_tokens(command)):
        words = list(part)
        for n, tok in enumerate(words):
            if set(tok) <= set("<>&|") and ">" in tok:
                target = words[n + 1] if n + 1 < len(words) else ""
                if not (target.startswith("/dev/") or (tok.endswith("&") and (target.isdigit() or target == "-"))):
                    return False  # output into a file
        j = 0
        while j < len(words) and (words[j] in ("sudo", "time", "nice", "command", "env", "!")
                                  or re.match(_ASSIGN, words[j])):
            j += 1
        if j >= len(words):
            continue
        cmd = os.path.basename(words[j])
        args = [w for w in words[j + 1:] if isinstance(w, str)]
        if cmd in _NEUTRAL_COMMANDS:
            continue
        if cmd == "git":
            sub = next((a for a in args if not a.startswith("-")), "")
            if sub not in _GIT_READING or any(a.startswith("--output") for a in args):
                return False
            reads = True
            continue
        if cmd not in READING_COMMANDS:
            return False
        bad = _WRITING_OPTS.get(cmd, ())
        for a in args:
            if a in bad or any(a.startswith(b + "=") for b in bad if b.startswith("--")):
                return False
            if cmd in ("sed", "awk") and (a.startswith(("-i", "--in-place")) or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and cmd == "sed")):
                return False  # -i, -i.bak, -ni: in place
        if cmd == "sed" and any(re.search(_SED_WRITES, a) for a in args if not a.startswith("-")):
            return False
        if cmd == "awk" and any(">" in a or "system(" in a or "|" in a for a in args):
            return False
        reads = True
    return reads
