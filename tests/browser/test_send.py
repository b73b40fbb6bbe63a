"""Scene 1: send a message in the sidebar and see the streamed reply complete."""

from __future__ import annotations

import time

from .conftest import SIDEBAR_TIMINGS
from .lab_page import LabPage, counting, is_count_prefix


def test_sent_message_streams_a_reply_to_completion(lab: LabPage) -> None:
    # Enter in the composer POSTs sessions/{sid}/runs; a RunFollower backfills the journal over
    # REST and follows WS runs/{id}/stream; on the terminal row the chat re-reads the settled
    # session, so the reply is shown once, streaming first and settled after.
    started = time.monotonic()
    lab.open()
    lab.open_sidebar()
    SIDEBAR_TIMINGS["send: page load to usable sidebar"] = usable = time.monotonic() - started
    print(f"page load to usable sidebar: {usable:.2f} s")

    session_id = lab.new_session()
    lab.record_reply_texts()
    lab.send("count to 40")

    partial = lab.wait_streaming(tokens=1)
    assert is_count_prefix(partial), partial
    lab.wait_idle()
    lab.screenshot("send")

    assert lab.user_texts() == ["count to 40"]
    assert lab.assistant_texts() == [counting(40)]
    seen = lab.recorded_reply_texts()
    assert all(is_count_prefix(text) for text in seen), seen
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"]
    assert [(m["role"], m["content"]) for m in stored] == [("user", "count to 40"), ("assistant", counting(40))]
