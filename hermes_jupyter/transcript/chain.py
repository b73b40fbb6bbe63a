"""A continued answer as one transcript: every part it continues, oldest first. Pure.

A run that continues an interrupted one (CONTRACT §10) folds like any run; where a
cell shows the answer, it shows the whole of it: the interrupted parts with their
markers (they stay), then the continuation. Only the last part's usage is kept, so a
cell has one usage line, the one of the run it names.
"""

from __future__ import annotations

from typing import Callable, Final

from .rows import Transcript, UsageRow

#: Most parts followed back (a chain longer than this shows its newest parts).
MAX_PARTS: Final = 64

PartOf = Callable[[str], Transcript | None]


def whole_answer(last: Transcript, part_of: PartOf) -> Transcript:
    """`last` with the parts it continues before it; `part_of(run_id)` is None for a part that is gone."""
    parts = [last]
    seen = {last.run_id}
    while parts[0].continues and parts[0].continues not in seen and len(parts) < MAX_PARTS:
        earlier = part_of(parts[0].continues)
        if earlier is None or earlier.session_id != last.session_id:
            break
        seen.add(earlier.run_id)
        parts.insert(0, earlier)
    if len(parts) == 1:
        return last
    rows = [row for part in parts[:-1] for row in part.rows if not isinstance(row, UsageRow)] + last.rows
    meta = {key: value for part in parts for key, value in part.meta.items()}
    return Transcript(
        run_id=last.run_id, session_id=last.session_id, status=last.status, last_seq=last.last_seq,
        rows=rows, meta=meta, continues=last.continues,
    )


def part_reader(read: Callable[[str], Transcript]) -> PartOf:
    """`read` (a run's transcript as every view shows it) as a part reader: None for a part that is gone."""
    def part_of(run_id: str) -> Transcript | None:
        try:
            return read(run_id)
        except (LookupError, OSError, ValueError):  # an unknown run, a pruned or damaged journal, a garbled id
            return None

    return part_of
