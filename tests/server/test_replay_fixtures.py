"""The snapshot message against the golden journals: what it shows is the live fold's rows at every cut,
and tests/fixtures/snapshots (which the labextension restores and folds on) is what the code makes now."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from hermes_jupyter.journal import iter_rows
from hermes_jupyter.runs.catchup import snapshot_of
from hermes_jupyter.transcript import TranscriptFold

from ..fixtures.snapshots import generate

SCENARIOS = sorted(p.name[: -len(".jsonl")] for p in generate.JOURNALS.glob("*.jsonl"))


def test_snapshot_fixtures_equal_what_the_code_makes_now() -> None:
    assert generate.main(["--check"]) == 0, "regenerate: python tests/fixtures/snapshots/generate.py"


def _shown(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """What a view shows of a snapshot: its closed rows, then the open segment's (trimmed, blank ones none)."""
    run, n, open_ = snapshot["run_id"], snapshot["open"]["n"], snapshot["open"]
    tail = [{"kind": "reasoning", "id": f"{run}:r:{n}", "text": open_["reasoning"].strip()},
            {"kind": "assistant", "id": f"{run}:a:{n}", "text": open_["text"].strip()}]
    rows: list[dict[str, Any]] = snapshot["rows"]
    return rows + [row for row in tail if row["text"]]


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_snapshot_shows_what_the_live_fold_shows_at_every_cut(name: str) -> None:
    run_id = f"run-{name}"
    rows = list(iter_rows(generate.JOURNALS / f"{name}.jsonl", generate.SESSION_ID, run_id))
    fold = TranscriptFold(run_id, generate.SESSION_ID)
    for cut in range(len(rows)):
        if fold.terminal is not None:
            break
        snapshot = msgspec.to_builtins(snapshot_of(fold))
        assert snapshot["last_seq"] == (rows[cut - 1].seq if cut else 0)
        assert _shown(snapshot) == msgspec.to_builtins(fold.snapshot().rows), (name, cut)
        fold.feed_row(rows[cut])
