"""The engine's notebook recovery (`RunManager.recover_notebook`): rebuild a notebook's unfinished hermes outputs.

Through the collaboration room that holds the notebook when there is one (its shared document is the
notebook then), else in the file, unless a frontend has the notebook open with a kernel: its unsaved
edits must not be clobbered, so that is refused (`NotebookOpen`) unless forced (docs/collaboration.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..journal import Journals
from .recover import IsLive, VerdictOf, recover_notebook_file


class NotebookOpen(RuntimeError):
    """A frontend has the notebook open with a kernel: its file is left untouched (HTTP 409, unless forced)."""


class Rooms(Protocol):
    """The collaboration rooms (server/rooms.py): recover through the room holding `path`, None when none does."""

    async def recover(
        self, path: str, journals: Journals, *, is_live: IsLive, verdict_of: VerdictOf,
        offload: Callable[..., Awaitable[Any]],
    ) -> int | None: ...


@dataclass(frozen=True)
class NotebookPlaces:
    """Where notebooks are, as the server sees them: its root, the state dir, its rooms, who has a notebook open."""

    root_dir: Path
    state_dir: Path
    rooms: Rooms | None = None
    #: Is the notebook at this root-relative path open in a frontend with a live kernel session?
    is_open: Callable[[str], Awaitable[bool]] | None = None


@dataclass(frozen=True)
class Recovered:
    path: str
    cells_recovered: int
    shared: bool

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "cells_recovered": self.cells_recovered, "shared": self.shared}


class NotebookRecovery:
    def __init__(
        self, places: NotebookPlaces, journals: Journals, is_live: Callable[[str], bool], verdict_of: VerdictOf,
        offload: Callable[..., Awaitable[Any]],
    ) -> None:
        self.places, self.journals, self.is_live, self.verdict_of, self.offload = places, journals, is_live, verdict_of, offload

    async def recover(self, path: str, full: Path, *, force: bool = False) -> Recovered:
        """Recover the notebook at `full` (`path` as the client named it, already confined to the root)."""
        if not full.is_file():
            raise FileNotFoundError(f"no notebook at {path}")
        rooms = self.places.rooms
        if rooms is not None:
            api_path = full.relative_to(self.places.root_dir.resolve()).as_posix()
            shared = await rooms.recover(api_path, self.journals, is_live=lambda _sid, run_id: self.is_live(run_id),
                                         verdict_of=self.verdict_of, offload=self.offload)
            if shared is not None:
                return Recovered(path, shared, True)
        if not force and self.places.is_open is not None and await self.places.is_open(path):
            raise NotebookOpen(f"{path}: pass force=true to recover anyway")
        cells = await self.offload(recover_notebook_file, full, self.places.state_dir, verdict_of=self.verdict_of)
        return Recovered(path, cells, False)
