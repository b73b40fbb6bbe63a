"""A continued answer as one transcript: every part it continues, oldest first. Pure.

A run that continues an interrupted one (docs/transcript.md, "Continue") folds like any run; where a
cell shows the answer, it shows the whole of it: the interrupted parts with their
markers (they stay), then the continuation. A cell has one usage line: the last part's,
with the counts of every part summed where reported, so it covers the whole answer.
"""

from __future__ import annotations

from typing import Callable, Final, TypeVar

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
    usages = [row for part in parts for row in part.rows if isinstance(row, UsageRow)]
    whole = [summed_usage(usages) if isinstance(row, UsageRow) else row for row in last.rows]
    rows = [row for part in parts[:-1] for row in part.rows if not isinstance(row, UsageRow)] + whole
    meta = {key: value for part in parts for key, value in part.meta.items()}
    return Transcript(
        run_id=last.run_id, session_id=last.session_id, status=last.status, last_seq=last.last_seq,
        rows=rows, meta=meta, continues=last.continues,
    )


N = TypeVar("N", int, float)


def _sum(values: list[N | None]) -> N | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def summed_usage(usages: list[UsageRow]) -> UsageRow:
    """One usage row for an answer in parts: counts summed where reported (None where no part reported
    one), the cost only when every part's price is known, the newest part's id and model."""
    last = usages[-1]
    if len(usages) == 1:
        return last
    costs = [u.cost_usd for u in usages]
    return UsageRow(
        id=last.id, model=last.model,
        input_tokens=_sum([u.input_tokens for u in usages]), output_tokens=_sum([u.output_tokens for u in usages]),
        cached_tokens=_sum([u.cached_tokens for u in usages]), duration_s=_sum([u.duration_s for u in usages]),
        cost_usd=None if None in costs else _sum(costs), our_count=any(u.our_count for u in usages),
    )


def part_reader(read: Callable[[str], Transcript]) -> PartOf:
    """`read` (a run's transcript as every view shows it) as a part reader: None for a part that is gone."""
    def part_of(run_id: str) -> Transcript | None:
        try:
            return read(run_id)
        except (LookupError, OSError, ValueError):  # an unknown run, a pruned or damaged journal, a garbled id
            return None

    return part_of
