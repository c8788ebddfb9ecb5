"""Layering: every import rule in docs/architecture.md holds, and no ledger module takes
part in an import cycle; the CLI module loads no heavy library; every subcommand's
``--help`` works.

The rules are parsed from the tables in docs/architecture.md (the one source of truth):
change them there. The checker is tested on a small synthetic package too, so a checker
that finds nothing cannot pass silently.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import ledger

SRC = Path(ledger.__file__).resolve().parent
DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
HEAVY = ("textual", "starlette", "uvicorn", "rich")


# ---------------------------------------------------------------------------- the rules


@dataclass
class Component:
    name: str
    modules: tuple[str, ...]
    layer: int
    also: frozenset[str]
    third_party: frozenset[str]


@dataclass
class Rules:
    components: dict[str, Component]
    restricted: dict[str, frozenset[str]] = field(default_factory=dict)  # stdlib module -> components allowed

    def component_of(self, module: str) -> Component | None:
        """The component owning ``module``: the longest listed name equal to it or, for a
        package other than the root ``ledger``, a prefix of it."""
        best, best_len = None, -1
        for c in self.components.values():
            for m in c.modules:
                owns = module == m or (m != "ledger" and module.startswith(m + "."))
                if owns and len(m) > best_len:
                    best, best_len = c, len(m)
        return best


def _table_after(text: str, marker: str) -> list[list[str]]:
    """Rows (cells stripped) of the first markdown table after ``marker``, header and
    separator excluded."""
    at = text.index(marker)
    rows: list[list[str]] = []
    started = False
    for line in text[at:].splitlines()[1:]:
        if line.startswith("|"):
            started = True
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif started:
            break
    assert len(rows) > 2, f"no table after {marker!r} in {DOC}"
    return rows[2:]


def _names(cell: str) -> list[str]:
    return [x.strip().strip("`") for x in cell.split(",") if x.strip().strip("`")]


def parse_rules(text: str) -> Rules:
    comps = {}
    for name, modules, layer, also, third in _table_after(text, "<!-- import-rules:components"):
        comps[name] = Component(name, tuple(_names(modules)), int(layer), frozenset(_names(also)), frozenset(_names(third)))
    restricted = {}
    for module, only_in, _why in _table_after(text, "<!-- import-rules:restricted-stdlib"):
        restricted[module.strip("`")] = frozenset(_names(only_in))
    return Rules(comps, restricted)


# ---------------------------------------------------------------------------- the imports


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``path``, wherever it is (top level, inside
    functions, under ``TYPE_CHECKING``), plus ``__import__`` / ``import_module`` calls
    with a literal name. Relative imports are resolved; ``from pkg import sub`` names
    the submodule when ``sub`` is one."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                rel = Path(*sub.split("."))
                if (root.parent / rel).with_suffix(".py").exists() or (root.parent / rel / "__init__.py").exists():
                    out.append((node.lineno, sub))
                else:
                    out.append((node.lineno, mod))
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("__import__", "import_module") and node.args:
                a = node.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    out.append((node.lineno, a.value))
    return sorted(set(out))


def check(root: Path, rules: Rules) -> tuple[list[str], list[list[str]]]:
    """``(violations, cycles)`` for the package at ``root`` under ``rules``."""
    top = root.name
    graph: dict[str, set[str]] = {}
    violations: list[str] = []
    for path in sorted(root.rglob("*.py")):
        me = module_name(path, root)
        where = path.relative_to(root.parent).as_posix()
        mine = rules.component_of(me)
        graph.setdefault(me, set())
        if mine is None:
            violations.append(f"{where}: module {me} belongs to no component; add it to the table in docs/architecture.md")
            continue
        for line, target in imports_of(path, root):
            head = target.split(".")[0]
            if head == top:
                graph[me].add(target)
                theirs = rules.component_of(target)
                if theirs is None or theirs is mine:
                    continue
                if theirs.layer > mine.layer:
                    violations.append(f"{where}:{line} imports {target}: {mine.name} (L{mine.layer}) may not import "
                                      f"{theirs.name} (L{theirs.layer}), a higher layer")
                elif theirs.layer == mine.layer and theirs.name not in mine.also:
                    violations.append(f"{where}:{line} imports {target}: {mine.name} may not import {theirs.name} "
                                      f"(same layer L{mine.layer}, not in its 'may also import' cell)")
            elif head in sys.stdlib_module_names or head == "_sqlite3":
                key = "sqlite3" if head == "_sqlite3" else head
                allowed = rules.restricted.get(key)
                if allowed is not None and mine.name not in allowed:
                    violations.append(f"{where}:{line} imports {target}: only {', '.join(sorted(allowed))} may import {key}")
            elif head not in mine.third_party:
                violations.append(f"{where}:{line} imports {target}: third-party package {head!r} is not allowed in "
                                  f"{mine.name} (allowed: {', '.join(sorted(mine.third_party)) or 'none'})")
    return violations, _cycles(graph)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a closed path) per strongly connected component of more than one
    module, or a module importing itself (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in graph.get(v, ()):
                        comps.append(comp)
    return [_path_in(graph, set(c)) + ([f"(cycle among {len(c)} modules: {', '.join(sorted(c))})"] if len(c) > 2 else [])
            for c in comps]


def _path_in(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest closed path through the component from its first module (breadth
    first), for the failure message."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if v != start else [start, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(comp)  # pragma: no cover - a strongly connected component always closes


def _report(violations: list[str], cycles: list[list[str]]) -> str:
    lines = [f"{len(violations)} import rule(s) broken (docs/architecture.md):"] + [f"  {v}" for v in violations]
    lines += [f"{len(cycles)} import cycle(s):"]
    for c in cycles:
        note = c[-1] if c[-1].startswith("(") else ""
        lines.append("  " + " -> ".join(c[:-1] if note else c) + (f"  {note}" if note else ""))
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the tests


def test_the_import_rules_in_docs_architecture_hold():
    rules = parse_rules(DOC.read_text(encoding="utf-8"))
    assert len(rules.components) >= 10 and rules.restricted.get("sqlite3") == frozenset({"store"})
    for c in rules.components.values():
        assert c.also <= set(rules.components), f"{c.name}: unknown component in 'may also import': {c.also}"
    assert len(list(SRC.rglob("*.py"))) > 20
    violations, cycles = check(SRC, rules)
    assert not violations and not cycles, _report(violations, cycles)


def test_the_checker_finds_upward_imports_cycles_foreign_packages_and_unlisted_modules(tmp_path):
    # A synthetic package breaking each kind of rule once, checked with rules in the doc's format.
    pkg = tmp_path / "ledger"
    files = {
        "__init__.py": "",
        "core.py": "import os\n",
        "store/__init__.py": "import sqlite3\nfrom .. import core\n",
        "watcher/__init__.py": "",
        "watcher/engine.py": "from ..harness import runner\n",  # up a layer
        "watcher/distill.py": "import sqlite3\nimport requests\n",  # restricted stdlib, third party
        "harness/__init__.py": "",
        "harness/runner.py": "def f():\n    from ledger.harness import server\n",
        "harness/server.py": "from . import runner\n",  # cycle through a function-level import
        "stray.py": "",  # in no component
    }
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    doc = """<!-- import-rules:components -->
| component | modules | layer | may also import | third-party |
|---|---|---|---|---|
| core | `ledger`, `ledger.core` | 0 | | |
| store | `ledger.store` | 1 | | |
| watcher | `ledger.watcher` | 2 | | |
| harness | `ledger.harness` | 4 | | |

<!-- import-rules:restricted-stdlib -->
| module | only in | why |
|---|---|---|
| `sqlite3` | store | one place |
"""
    violations, cycles = check(pkg, parse_rules(doc))
    text = "\n".join(violations)
    assert "ledger/watcher/engine.py:1 imports ledger.harness.runner: watcher (L2) may not import harness (L4)" in text
    assert "ledger/watcher/distill.py:1 imports sqlite3: only store may import sqlite3" in text
    assert "ledger/watcher/distill.py:2 imports requests: third-party package 'requests'" in text
    assert "module ledger.stray belongs to no component" in text
    assert len(violations) == 4, text
    assert cycles == [["ledger.harness.runner", "ledger.harness.server", "ledger.harness.runner"]]


_PROBE = r"""
import io, json, sys, contextlib
heavy = %r
def loaded():
    return sorted({m.split(".")[0] for m in sys.modules} & set(heavy))
import ledger.cli.app as app
after_import = loaded()
import click
paths = []
def walk(cmd, path):
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            paths.append(path + [name])
            walk(sub, path + [name])
walk(app.cli, [])
results = {}
for p in paths:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = app.run(p + ["--help"])
    results[" ".join(p)] = [rc, buf.getvalue()]
print(json.dumps({"after_import": after_import, "after_help": loaded(), "help": results}))
"""


def test_cli_module_loads_no_heavy_library_and_every_help_works(tmp_path):
    p = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["after_import"] == [], f"import ledger.cli.app loaded {r['after_import']}"
    helps = r["help"]
    for verb in ("recall", "remember", "forget", "link", "clusters", "clusters add", "conflicts", "judge", "ingest",
                 "search", "review", "resolve", "sources", "sources trust", "sources drop", "stats", "export", "show", "serve"):
        assert verb in helps, verb
    for path, (rc, out) in helps.items():
        assert rc == 0, (path, out)
        assert out.startswith(f"Usage: ledger {path} "), (path, out[:200])
        assert "--help" in out
    assert r["after_help"] == [], f"--help loaded {r['after_help']}"
    assert not any(tmp_path.iterdir())  # help touched no store


def test_help_through_the_installed_command(cli):
    for argv in (["recall", "--help"], ["clusters", "add", "--help"], ["sources", "drop", "-h"]):
        rc, out, err = cli(*argv, db=None)
        assert rc == 0, err
        assert out.startswith("Usage: ledger " + " ".join(argv[:-1]))
