"""The golden journals in tests/fixtures/journals are what the code makes now (the TypeScript fold replays them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_jupyter.journal import iter_rows
from hermes_jupyter.transcript import TranscriptFold

from ..fixtures.journals import generate

FIXTURES = Path(generate.__file__).parent


def test_fixtures_equal_what_the_fold_and_renderer_make_now() -> None:
    assert generate.main(["--check"]) == 0, "regenerate: python tests/fixtures/journals/generate.py"


@pytest.mark.parametrize("name", sorted(generate.SCENARIOS))
def test_every_scenario_has_a_journal_and_its_expectation(name: str) -> None:
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    assert set(expected) == {"transcript", "live", "bundle"}
    assert expected["transcript"]["status"] != "running"  # the verdict always closes a fixture's run
    ids = [row["id"] for row in expected["transcript"]["rows"]]
    assert len(ids) == len(set(ids)), "row ids never collide"


def test_the_approved_tool_card_is_done_and_its_approval_card_is_separate() -> None:
    rows = json.loads((FIXTURES / "tool_approval.expected.json").read_text())["transcript"]["rows"]
    tool = next(r for r in rows if r["kind"] == "tool")
    approval = next(r for r in rows if r["kind"] == "approval")
    assert tool["status"] == "done" and tool["tid"] == approval["approval_id"]
    assert approval["status"] == "resolved" and approval["choice"] == "allow_once"


def test_tool_limit_reached_is_completed_with_a_warning_note() -> None:
    transcript = json.loads((FIXTURES / "tool_limit_reached.expected.json").read_text())["transcript"]
    assert transcript["status"] == "completed"
    assert transcript["rows"][-1]["kind"] == "note" and transcript["rows"][-1]["level"] == "warning"


def test_the_torn_tail_is_skipped_and_the_run_closed_by_the_verdict() -> None:
    fold = TranscriptFold(generate.run_id_of("torn_tail"), generate.SESSION_ID)
    fold.feed(iter_rows(FIXTURES / "torn_tail.jsonl", generate.SESSION_ID, generate.run_id_of("torn_tail")))
    assert fold.terminal is None and fold.last_seq == 3
    marker = json.loads((FIXTURES / "torn_tail.expected.json").read_text())["transcript"]["rows"][-1]
    assert marker["kind"] == "marker" and marker["cause"] == "lost_worker"
    assert "partial output above was recovered from the run journal" in marker["text"]


def test_terminal_rows_carry_the_marker_the_fold_shows() -> None:
    for name in ("cancel", "kernel_restart", "error_agent", "error_rate_limit"):
        last = (FIXTURES / f"{name}.jsonl").read_bytes().rstrip(b"\n").split(b"\n")[-1]
        carried = json.loads(last)["payload"]["marker"]
        shown = json.loads((FIXTURES / f"{name}.expected.json").read_text())["transcript"]["rows"][-1]
        assert {k: shown[k] for k in ("variant", "text", "cause")} == carried


ENDINGS = ("length_limit", "content_filter", "empty_answer", "stream_cut", "model_not_found", "context_too_long",
           "bad_request", "error_chunk", "retry_after_long")


@pytest.mark.parametrize("name", ENDINGS)
def test_each_ending_says_its_own_words_and_offers_continue_only_where_it_works(name: str) -> None:
    from hermes_jupyter.agents.errors import ERRORS
    from hermes_jupyter.runs.continuation import CONTINUABLE_ERRORS

    journal = [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]
    terminal = journal[-1]["payload"]
    transcript = json.loads((FIXTURES / f"{name}.expected.json").read_text())["transcript"]
    marker = transcript["rows"][-1]
    assert transcript["status"] == "errored" and marker["kind"] == "marker" and marker["cause"] == terminal["type"]
    assert terminal["detail"] and terminal["detail"] not in marker["text"]  # the provider's words stay in the fold
    if name != "retry_after_long":
        assert marker["text"] == f"**Error:** {ERRORS[terminal['type']].message}"
    assert ("Continue" in marker["text"]) == (terminal["type"] in CONTINUABLE_ERRORS)
    streamed = "".join(row["payload"]["text"] for row in journal if row["event"] == "token")
    kept = "".join(row["text"] for row in transcript["rows"] if row["kind"] == "assistant")
    assert kept == streamed  # the partial is kept


def test_unreported_usage_reads_not_reported_never_zero() -> None:
    bundle = json.loads((FIXTURES / "usage_not_reported.expected.json").read_text())["bundle"]
    assert "tokens not reported" in bundle["text/markdown"] and "0 tokens" not in bundle["text/markdown"]


def test_the_long_retry_after_says_the_wait_in_words() -> None:
    marker = json.loads((FIXTURES / "retry_after_long.expected.json").read_text())["transcript"]["rows"][-1]
    assert "wait 2 minutes" in marker["text"] and "after retrying" not in marker["text"]


def test_one_wait_for_the_model_is_one_note_that_ends_saying_how_long() -> None:
    notes = [r for r in json.loads((FIXTURES / "waiting.expected.json").read_text())["transcript"]["rows"]
             if r["kind"] == "note"]
    assert [n["text"] for n in notes] == ["The model took 31 s to start answering."]
    assert notes[0]["id"] == "run-waiting:note:1"  # the first row's id: the note was updated, not replaced


def test_a_wait_updated_mid_text_splits_no_answer_and_a_second_wait_is_a_second_note() -> None:
    rows = json.loads((FIXTURES / "waiting_twice.expected.json").read_text())["transcript"]["rows"]
    assert [r["kind"] for r in rows] == ["note", "assistant", "tool", "note", "marker"]
    assert rows[1]["text"] == "Let me look." and rows[3]["text"] == "Waiting for the model (30 s)…"


def test_waiting_notes_without_a_wait_id_fold_as_before_one_note_each() -> None:
    rows = json.loads((FIXTURES / "waiting_unmarked.expected.json").read_text())["transcript"]["rows"]
    assert [r["text"] for r in rows if r["kind"] == "note"] == [
        "Waiting for the model (15 s)…", "Waiting for the model (30 s)…"]
