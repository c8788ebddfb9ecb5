"""``python -m ledger ...`` is the ``ledger`` command (used to start ledger's own child
processes with the same interpreter, e.g. the detached distiller)."""

import sys

from .cli import main

sys.exit(main())
