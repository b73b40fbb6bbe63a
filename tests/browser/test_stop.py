"""Scene 2: stop a run from the sidebar."""

from __future__ import annotations

from .lab_page import LabPage, counting, is_count_prefix


def test_stop_keeps_the_partial_reply_and_frees_the_composer(lab: LabPage) -> None:
    # Stop POSTs runs/{id}/cancel; the server journals a terminal `cancel` row and settles the
    # session with the partial reply plus a cancel marker. The live view must end on that row
    # (not hang in "streaming"), show the kept text and the marker, and give the composer back.
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send("count to 100000")
    before_stop = lab.wait_streaming(tokens=20)
    lab.click_stop()

    marker = lab.wait_marker("cancelled")
    lab.wait_idle()
    lab.screenshot("stop")

    partial = lab.last_message_text()
    assert is_count_prefix(partial), partial
    assert len(partial.split()) >= len(before_stop.split()) >= 20
    assert len(partial.split()) < 100000
    assert lab.assistant_rows().last.get_attribute("data-partial") == "true"
    assert "cancel" in marker.text.lower(), marker
    assert [m.kind for m in lab.markers()] == ["cancelled"]
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant", "assistant"], stored
    assert stored[1]["content"].strip() == partial
    assert stored[2].get("_error") is True

    # The composer is usable again: a new turn goes through and completes.
    assert lab.composer_usable()
    lab.send("count to 3")
    lab.wait_idle()
    assert lab.last_message_text() == counting(3)
    assert [m.kind for m in lab.markers()] == ["cancelled"]
