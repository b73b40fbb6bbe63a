"""Where hermes-jupyter keeps its state (docs/journal.md, docs/architecture.md)."""

from __future__ import annotations

import os
from pathlib import Path


def hermes_home() -> Path:
    """`$HERMES_HOME` with `~` expanded, defaulting to `~/.hermes`."""
    return Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def default_state_dir() -> Path:
    """`$HERMES_JUPYTER_STATE_DIR` if set, else `$HERMES_HOME/jupyter`."""
    explicit = os.environ.get("HERMES_JUPYTER_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return hermes_home() / "jupyter"


def core_transcript_dir() -> Path:
    """Where Hermes Agent writes its own per-session snapshots (read only for us)."""
    return hermes_home() / "sessions"
