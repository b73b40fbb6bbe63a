"""The live cell's throttle: bounded widget and display updates, and the last update holds every token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_jupyter.events import JournalRow, rows_from_json
from hermes_jupyter.kernel.view import LiveCell
from hermes_jupyter.notebook.outputs import RUN_MIME, WIDGET_MIME

from ..kernel import flaky_stream_server


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Handle:
    def __init__(self, log: list[dict[str, Any]]) -> None:
        self.log = log

    def update(self, bundle: dict[str, Any], **kwargs: Any) -> None:
        self.log.append(bundle)


class RecordingDisplay:
    """Stands in for IPython's `display(..., display_id=True)`: records the first bundle and each update."""

    def __init__(self) -> None:
        self.bundles: list[dict[str, Any]] = []

    def __call__(self, bundle: dict[str, Any], **kwargs: Any) -> Handle:
        assert kwargs == {"raw": True, "display_id": True}
        self.bundles.append(bundle)
        return Handle(self.bundles)


def make_rows(n: int, *, terminal: bool = True) -> list[JournalRow]:
    """The fake server's rows, decoded as the kernel client decodes them."""
    return rows_from_json(flaky_stream_server.make_rows(n, terminal=terminal))


def stream_through(cell: LiveCell, clock: Clock, n_rows: int, seconds: float) -> None:
    rows = make_rows(n_rows)
    step = seconds / n_rows
    for row in rows:
        clock.now += step
        cell.feed([row])
        cell.tick()


def test_ten_thousand_tokens_in_two_seconds_make_few_updates() -> None:
    clock, display = Clock(), RecordingDisplay()
    cell = LiveCell("s1", "run1", display=display, clock=clock)
    cell.show()
    stream_through(cell, clock, 10_000, 2.0)
    assert cell.widget_updates <= 2.0 / 0.1 + 1
    assert cell.display_updates <= 2.0 / 1.0 + 1
    snap = cell.finish()
    assert snap.status == "completed"
    final = display.bundles[-1]
    assert WIDGET_MIME not in final and final[RUN_MIME]["seq"] == 10_000
    assert final["text/markdown"].startswith(" ".join(str(i) for i in range(1, 10_000)) + "\n")
    assert all(WIDGET_MIME in b for b in display.bundles[:-1])


def test_widget_state_after_the_last_tick_holds_every_token() -> None:
    clock, display = Clock(), RecordingDisplay()
    cell = LiveCell("s1", "run1", display=display, clock=clock)
    cell.show()
    rows = make_rows(500, terminal=False)
    cell.feed(rows[:250])
    cell.tick()
    clock.now += 0.01
    cell.feed(rows[250:])
    wait = cell.tick()  # too soon: coalesced, not dropped
    assert 0 < wait <= 0.1
    clock.now += wait
    cell.tick()
    assert cell.widget is not None
    assert cell.widget.state["seq"] == 500
    assert cell.widget.state["segments"][0]["text"].endswith(" 499 500")


def test_without_a_widget_the_display_still_streams() -> None:
    clock, display = Clock(), RecordingDisplay()
    cell = LiveCell("s1", "run1", display=display, clock=clock, use_widget=False)
    cell.show()
    stream_through(cell, clock, 100, 3.0)
    cell.finish()
    assert cell.widget is None and all(WIDGET_MIME not in b for b in display.bundles)
    assert 3 <= len(display.bundles) <= 5
    assert display.bundles[-1][RUN_MIME]["status"] == "completed"


def test_finish_without_terminal_row_keeps_running_status_for_recover() -> None:
    display = RecordingDisplay()
    cell = LiveCell("s1", "run1", display=display, use_widget=False)
    cell.show()
    cell.feed(make_rows(5, terminal=False))
    cell.finish()
    assert display.bundles[-1][RUN_MIME] == {"run_id": "run1", "session_id": "s1", "seq": 5, "status": "running"}


def test_a_pending_question_gives_the_widget_its_choices_and_an_answered_one_shows_the_answer() -> None:
    from hermes_jupyter.journal import iter_rows
    from hermes_jupyter.notebook.outputs import RunOutput, view_state
    from tests.fixtures.journals import generate

    rows = list(iter_rows(Path(generate.__file__).parent / "clarify.jsonl", generate.SESSION_ID, "run-clarify"))
    asking = RunOutput(generate.SESSION_ID, "run-clarify")
    asking.feed(rows[:4])  # up to the first question, still pending
    (question,) = [c for s in view_state(asking.snapshot())["segments"] for c in s["tools"] if c["name"] == "question"]
    assert (question["status"], question["tid"], question["choices"]) == ("running", "q-1", ["yes", "no"])
    answered = RunOutput(generate.SESSION_ID, "run-clarify")
    answered.feed(rows)
    cards = [c for s in view_state(answered.snapshot("completed"))["segments"] for c in s["tools"] if c["name"] == "question"]
    assert [c["status"] for c in cards] == ["done", "done"]
    # the answer with who gave it (wording.answer_words); the fixture's answer names no user
    assert "Answered: yes" in cards[0]["preview"] and "Not answered" in cards[1]["preview"]
