"""The objects the server extension builds once and hands to every handler."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..agents.approvals import ApprovalBroker
from ..agents.clarify import ClarifyBroker
from ..journal import Journals
from ..recovery.liveness import LiveRuns
from ..recovery.repair import Recovery
from ..runs.manager import RunManager
from ..sessions.store import SessionStore
from .notebook_editor import NotebookEditor
from .rooms import SharedNotebooks


@dataclass
class HermesServices:
    state_dir: Path
    store: SessionStore
    journals: Journals
    live: LiveRuns
    recovery: Recovery
    manager: RunManager
    root_dir: Path
    approvals: ApprovalBroker
    clarify: ClarifyBroker = field(default_factory=ClarifyBroker)
    allowed_backends: list[str] = field(default_factory=list)
    default_backend: str = "demo"
    max_body_bytes: int = 1 << 20
    #: The collaboration rooms (jupyter-collaboration), when the server has them.
    rooms: SharedNotebooks | None = None
    #: The one writer of agent cell changes (docs/notebook-edits.md): the cell tools and undo go through it.
    notebook_editor: NotebookEditor | None = None
