"""A dropped run stream resumes from its cursor (issue 6, part 2)."""

from __future__ import annotations

from .lab_page import LabPage, counting, is_count_prefix

N = 500


def test_dropped_stream_resumes_from_its_cursor_without_duplicated_or_missing_text(lab: LabPage) -> None:
    # RunStream keeps the last seq it emitted; when the socket closes before the terminal row it
    # probes GET runs/{id}, reopens WS runs/{id}/stream?after_seq=<cursor> and drops any row at or
    # below the cursor. The page's own sockets are closed three times mid-stream (the server keeps
    # running); every text the live reply shows must still be `1 2 … k`.
    lab.open()
    lab.open_sidebar()
    lab.new_session()
    lab.record_reply_texts()
    lab.send(f"count to {N}")
    shown = 0
    for _ in range(3):
        shown = len(lab.wait_streaming(tokens=shown + 40).split())
        assert lab.drop_run_sockets() == 1
        lab.page.wait_for_selector("[data-testid=hermes-chat][data-status=reconnecting]")
    lab.wait_streaming(tokens=shown + 40)
    lab.screenshot("network-drop")
    lab.wait_idle()

    seen = lab.recorded_reply_texts()
    assert len(seen) > 3, seen
    assert all(is_count_prefix(text) for text in seen), [t[-40:] for t in seen if not is_count_prefix(t)]
    lengths = [len(text.split()) for text in seen]
    assert lengths == sorted(lengths), "the live reply went backwards"
    assert lab.assistant_texts() == [counting(N)]
