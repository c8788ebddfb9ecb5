"""How to install ledger, said the same way everywhere (CLI messages, README, SKILL.md,
the web UI's first-run and Connections screens; ``tests/test_install_hint.py`` greps
them all).

The package is not published on PyPI, so the only true instructions are the ones that
start from the repository. Stdlib only (layer L0): the CLI prints this when a
dependency is missing, where nothing heavy may be imported.
"""

from __future__ import annotations

#: Each of these installs the ``ledger`` command with every dependency it needs.
INSTALL_COMMANDS = ("pipx install .", "uv tool install .", "pip install git+<repository URL>")

#: The one sentence every surface uses.
INSTALL_SENTENCE = ("Install ledger from a clone of the repository with `pipx install .` or `uv tool install .`, "
                    "or without a clone with `pip install git+<repository URL>`.")


def missing_module_message(module: str, command: str) -> str:
    """One line for a command whose dependency ``module`` cannot be imported (a broken
    or partial install): names the module and the reinstall commands."""
    return (f"`ledger {command}` needs the Python package '{module}', which this install lacks. "
            f"Reinstall: {INSTALL_SENTENCE[len('Install ledger '):]}")
