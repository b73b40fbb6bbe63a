"""Rewrite the unfinished hermes outputs of a notebook from the run journals; the one bundle builder.

Only outputs that carry `application/vnd.hermes.run+json` with a status that is
not final are touched; every other cell and output is left as it is. The
journal is the record: kernel output reaches a notebook only while a browser
tab listens, so a cell saved mid-stream is rebuilt from what the run wrote.

Every cell bundle of a run (the bundle route, the stream's settled message, a file or a
room recovered, `jupyter hermes recover`) comes from `bundle_of`, over a run read as every
view reads it: a settled turn as its session stored it (proposals with their decision),
else its journal folded with the session's decisions laid over (docs/transcript.md).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, MutableMapping

from ..recovery.evidence import read_transcript
from ..fsio import atomic_write
from ..ids import is_valid_id
from ..journal import Journals
from ..recovery.repair import judge_dead_run
from ..sessions.store import CorruptSession, Session, UnknownSession, read_sidecar
from ..transcript import Transcript, Verdict, part_reader, whole_answer
from ..transcript.proposals import with_decisions
from ..transcript.turns import find_turn, turn_transcript
from .outputs import FINAL_STATUSES, MimeBundle, final_bundle, run_ref_of

#: `is_live(session_id, run_id)`: is some process still running this run?
IsLive = Callable[[str, str], bool]
#: `verdict_of(session_id, run_id)`: how a run that is not live and has no terminal row ended.
VerdictOf = Callable[[str, str], Verdict]
#: `transcript_of(session_id, run_id, live)`: the run as every view shows it (raises FileNotFoundError without a record).
TranscriptOf = Callable[[str, str, bool], Transcript]


def bundle_of(transcript: Transcript, transcript_of: TranscriptOf) -> MimeBundle:
    """The cell bundle of a run: the one renderer over the whole answer (a continuation's cell shows the
    parts it continues, each read as settled)."""
    return final_bundle(whole_answer(transcript, part_reader(lambda earlier: transcript_of(transcript.session_id, earlier, False))))


def stored_transcript(session: Session, run_id: str) -> Transcript | None:
    """A settled run as its session stored it (None: not stored, or only converted from an old sidecar,
    which keeps less than the journal)."""
    turn = find_turn(session.turns, run_id)
    return turn_transcript(turn, session.session_id) if turn is not None and turn.last_seq > 0 else None


class StateRuns:
    """Runs read from a state dir, as the server shows them, without a server and writing nothing.

    Sidecars are read once per session (one recovery of one notebook).
    """

    def __init__(self, journals: Journals, sessions_dir: Path, verdict_of: VerdictOf | None = None) -> None:
        self.journals = journals
        self.sessions_dir = sessions_dir
        self._verdict_of = verdict_of
        self._sessions: dict[str, Session | None] = {}
        self._started = time.time()

    def session(self, session_id: str) -> Session | None:
        if session_id not in self._sessions:
            try:
                self._sessions[session_id] = read_sidecar(self.sessions_dir / f"{session_id}.json")
            except (UnknownSession, CorruptSession):  # logged by read_sidecar; the journal alone decides
                self._sessions[session_id] = None
        return self._sessions[session_id]

    def verdict(self, session_id: str, run_id: str) -> Verdict:
        """The cause the session shows (its marker); a turn still pending began before this process."""
        if self._verdict_of is not None:
            return self._verdict_of(session_id, run_id)
        session = self.session(session_id)
        return judge_dead_run(session, run_id, self._started) if session is not None else Verdict()

    def transcript(self, session_id: str, run_id: str, live: bool) -> Transcript:
        session = None if live else self.session(session_id)
        stored = stored_transcript(session, run_id) if session is not None else None
        if stored is not None:
            return stored
        transcript = read_transcript(self.journals, session_id, run_id, live=live,
                                     verdict_of=lambda: self.verdict(session_id, run_id))
        session = self.session(session_id)
        if session is not None:
            with_decisions(transcript, session.proposal_decisions, session.proposal_answered_by)
        return transcript


def sidecar_verdicts(state_dir: str | os.PathLike[str]) -> VerdictOf:
    """Verdicts read from the session sidecars, without a server and without writing anything.

    The cause is the one the session shows (its marker), so a notebook recovered from a
    shell says what the session says; a turn still pending began before this process.
    """
    root = Path(state_dir) / "sessions"
    started = time.time()

    def verdict_of(session_id: str, run_id: str) -> Verdict:
        try:
            session = read_sidecar(root / f"{session_id}.json")
        except (UnknownSession, CorruptSession):  # logged by read_sidecar; the journal alone decides
            return Verdict()
        return judge_dead_run(session, run_id, started)

    return verdict_of


def runs_of(journals: Journals, verdict_of: VerdictOf | None = None) -> TranscriptOf:
    """How a recovery without a server reads runs: `StateRuns` over the sidecars beside `journals`."""
    return StateRuns(journals, journals.root.parent / "sessions", verdict_of).transcript


def run_bundle(journals: Journals, session_id: str, run_id: str, *, live: bool, verdict_of: VerdictOf,
               transcript_of: TranscriptOf | None = None) -> tuple[Transcript, MimeBundle]:
    """The bundle a notebook keeps for a run (what the server's bundle route gives too)."""
    read = transcript_of or runs_of(journals, verdict_of)
    transcript = read(session_id, run_id, live)
    return transcript, bundle_of(transcript, read)


def recover_notebook(
    nb: MutableMapping[str, Any],
    journals: Journals,
    *,
    is_live: IsLive | None = None,
    verdict_of: VerdictOf | None = None,
    transcript_of: TranscriptOf | None = None,
) -> int:
    """Rebuild every hermes output whose status is not final; returns the number of cells changed.

    A run with a terminal row gets its final bundle (the full answer if it
    completed while no kernel listened). A run without one that is still live
    gets its text so far and stays `running`; one that is not live is closed by
    `verdict_of` (the server's verdict; by default none: cause unknown). By default
    a run is live while a process holds its journal open for writing (the server's
    writer lock).
    """
    live = is_live if is_live is not None else journals.writer_alive
    verdicts = verdict_of if verdict_of is not None else (lambda sid, run_id: Verdict())
    read = transcript_of or runs_of(journals, verdicts)
    changed_cells = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        changed = False
        for output in cell.get("outputs", []):
            changed = _recover_output(output, journals, live, verdicts, read) or changed
        changed_cells += changed
    return changed_cells


def _recover_output(
    output: MutableMapping[str, Any], journals: Journals, is_live: IsLive, verdict_of: VerdictOf, read: TranscriptOf,
) -> bool:
    import nbformat  # only a file's recovery needs it

    bundle = recovered_bundle(output, journals, is_live, verdict_of, transcript_of=read)
    if bundle is None:
        return False
    output["data"] = nbformat.from_dict(bundle)
    output.setdefault("metadata", nbformat.from_dict({}))
    return True


def recovered_bundle(
    output: Mapping[str, Any], journals: Journals, is_live: IsLive, verdict_of: VerdictOf, *, settled_only: bool = False,
    transcript_of: TranscriptOf | None = None,
) -> MimeBundle | None:
    """The bundle that replaces an unfinished hermes output, or None to leave it as it is.

    With `settled_only` a run without its terminal row or verdict is left to whoever follows
    it (the kernel's display), which is how a collaboration room's shared document is recovered.
    """
    ref = run_ref_of(output)
    if ref is None or ref["status"] in FINAL_STATUSES:
        return None
    sid, run_id = ref["session_id"], ref["run_id"]
    if not (is_valid_id(sid) and is_valid_id(run_id)):
        return None  # a notebook is untrusted input: its ids never reach a path unchecked
    live = is_live(sid, run_id)  # checked before reading, so a run that just ended has its terminal row
    try:
        transcript, bundle = run_bundle(journals, sid, run_id, live=live, verdict_of=verdict_of, transcript_of=transcript_of)
    except FileNotFoundError:
        return None  # no journal here (another state dir?): nothing to rebuild from
    if not transcript.is_final and (settled_only or transcript.last_seq <= ref["seq"]):
        return None
    return bundle


def recover_notebook_file(
    path: str | os.PathLike[str],
    state_dir: str | os.PathLike[str],
    *,
    is_live: IsLive | None = None,
    verdict_of: VerdictOf | None = None,
) -> int:
    """Recover a notebook file in place; returns cells_recovered (0: the file was not rewritten).

    Without `verdict_of` the causes come from the session sidecars (`StateRuns`), as do settled turns
    and the decisions on proposed cells.
    The new file is validated before it replaces the old one atomically, and keeps
    the old file's permission bits.
    """
    import nbformat  # only a file's recovery needs it

    target = Path(path)
    nb = nbformat.read(target, as_version=4)
    journals = Journals(Path(state_dir) / "runs")
    try:
        runs = StateRuns(journals, Path(state_dir) / "sessions", verdict_of)
        cells = recover_notebook(nb, journals, is_live=is_live, verdict_of=runs.verdict, transcript_of=runs.transcript)
    finally:
        journals.close()
    if cells == 0:
        return 0
    nbformat.validate(nb)
    text = nbformat.writes(nb)
    mode = target.stat().st_mode & 0o7777
    atomic_write(target, (text if text.endswith("\n") else text + "\n").encode("utf-8"))
    os.chmod(target, mode)
    return cells
