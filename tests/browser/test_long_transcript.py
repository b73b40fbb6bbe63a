"""A long transcript (issue 6, part 2): windowed, opened at its bottom, following new turns."""

from __future__ import annotations

import time

from .lab_page import LabPage, counting

TURNS = 30  # 90 rows (a turn is its user row, the answer and the usage footer): more than the 40 mounted at first
ROWS_PER_TURN = 3
STICK_PX = 48  # transcript-view.tsx: within this distance the view follows new text


def make_long_session(lab: LabPage) -> str:
    server = lab.server
    session_id = server.new_session(title="long")
    for _ in range(TURNS):
        server.start_run(session_id, "count to 3")
        deadline = time.monotonic() + 10
        # The turn is settled (and the next one admitted) once the session names no active run.
        while server.get(f"sessions/{session_id}").json()["active_stream_id"]:
            assert time.monotonic() < deadline, "a count to 3 turn did not settle"
            time.sleep(0.02)
    return session_id


def test_long_transcript_opens_at_its_bottom_and_follows_a_new_turn(lab: LabPage) -> None:
    # Only the last 40 rows mount; the view sticks to the bottom while rows render their
    # markdown asynchronously. Those renders grow rows above the viewport, and the browser's
    # scroll anchoring scrolls to compensate: that scroll must not count as the reader leaving
    # the bottom, or the view stops short of the newest rows (and of the reader's next turn).
    session_id = make_long_session(lab)
    lab.open()
    lab.open_sidebar()
    lab.open_session(session_id)
    lab.wait_transcript_rendered()
    total, mounted = lab.transcript_rows()
    assert total == ROWS_PER_TURN * TURNS and mounted < total
    assert lab.page.is_visible("[data-testid=hermes-show-earlier]")
    assert lab.transcript_distance_from_bottom() < STICK_PX

    lab.send("count to 30")
    lab.wait_idle()
    lab.wait_transcript_rendered()
    lab.screenshot("long-transcript")
    assert lab.last_message_text() == counting(30)
    distance = lab.transcript_distance_from_bottom()
    assert distance < STICK_PX, (distance, lab.transcript_rows())

    # The reader's own wheel scroll up is theirs: the view stays where they put it.
    box = lab.page.locator("[data-testid=hermes-transcript]").bounding_box()
    lab.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    lab.page.mouse.wheel(0, -600)
    lab.page.wait_for_timeout(800)
    assert lab.transcript_distance_from_bottom() > STICK_PX
