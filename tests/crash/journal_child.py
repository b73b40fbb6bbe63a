"""A writer that gets killed: appends events to one run journal and acknowledges each seq on stdout.

Run as `python journal_child.py STATE_DIR SID RUN DURABILITY`. The parent SIGKILLs
it at a random moment; every seq printed here was returned by `append`, so it
must be in the journal afterwards.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hermes_jupyter.journal import Journals


def main() -> None:
    state, sid, run, durability = sys.argv[1:5]
    journals = Journals(Path(state) / "runs", durability=durability)  # type: ignore[arg-type]
    writer = journals.writer(sid, run)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    i = 0
    while True:
        i += 1
        if i % 17 == 0:
            row = writer.append("tool", {"tid": f"t{i}", "name": "terminal", "args": {"command": f"echo {i}"}})
        elif i % 17 == 1 and i > 1:
            row = writer.append("tool_complete", {"tid": f"t{i - 1}", "name": "terminal", "preview": str(i), "is_error": False})
        else:
            row = writer.append("token", {"text": f" {i}" + "x" * (i % 50)})
        out.write(f"{row.row.seq}\n")
        if i % 8 == 0:
            out.flush()


if __name__ == "__main__":
    main()
