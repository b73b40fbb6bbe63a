"""Stop a count in the sidebar, then Continue: the answer goes on from the next number to N, once."""

from __future__ import annotations

import re

from .lab_page import LabPage

CONTINUE = "[data-testid=hermes-continue]"
N = 300


def test_continue_after_stop_finishes_the_count_below_the_kept_marker(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send(f"count to {N}")
    lab.wait_streaming(tokens=20)
    lab.click_stop()
    lab.wait_marker("cancelled")
    lab.wait_idle()
    lab.page.wait_for_selector(CONTINUE)  # offered on the answer that ends the session
    lab.screenshot("continue-offered")
    lab.page.click(CONTINUE)
    lab.page.wait_for_selector(CONTINUE, state="detached")
    lab.wait_idle(timeout_s=60)
    lab.screenshot("continue")

    shown = " ".join(lab.assistant_texts())
    assert [int(n) for n in re.findall(r"\d+", shown)] == list(range(1, N + 1)), shown
    assert [m.kind for m in lab.markers()] == ["cancelled"]  # the marker stays where the answer stopped
    assert lab.user_texts() == [f"count to {N}"]  # nothing was sent as a new user message
    assert lab.page.locator(CONTINUE).count() == 0  # the answer finished: nothing left to continue
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"]
    assert [m.get("type", m["role"]) for m in stored] == ["user", "assistant", "cancelled", "assistant"]
