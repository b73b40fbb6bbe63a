"""A sealer that gets killed: seals one finished run journal, printing "ready" first.

Run as `python seal_child.py STATE_DIR SID RUN`. The parent SIGKILLs it at a random
moment of the seal; the journal must read back whole either way.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hermes_jupyter.journal import Journals


def main() -> None:
    state, sid, run = sys.argv[1:4]
    journals = Journals(Path(state) / "runs", durability="terminal")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    journals.seal(sid, run)
    sys.stdout.write("sealed\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
