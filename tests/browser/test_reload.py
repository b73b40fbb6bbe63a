"""Scene 3: reload the page while a reply streams."""

from __future__ import annotations

import time

from .conftest import SIDEBAR_TIMINGS
from .lab_page import LabPage, counting, is_count_prefix

N = 1000  # 10 s at 0.01 s a token: a reload (~3 s) lands well inside the stream


def test_reload_mid_stream_resumes_without_duplicated_or_missing_text(lab: LabPage) -> None:
    # The run belongs to the server, so a reload only loses the tab's socket. The selected
    # session survives in localStorage; on load the chat reads the session, sees its
    # active_stream_id and joins WS runs/{id}/stream with a snapshot of the run so far, then
    # its rows after it. Every text the live row shows must be `1 2 … k`.
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send(f"count to {N}")
    before_reload = lab.wait_streaming(tokens=30)

    started = time.monotonic()
    lab.reload()
    lab.record_reply_texts()
    lab.open_sidebar()
    SIDEBAR_TIMINGS["reload: page reload mid-stream to usable sidebar"] = time.monotonic() - started
    assert lab.selected_session_id() == session_id
    resumed = lab.wait_streaming(tokens=len(before_reload.split()) + 20)
    assert is_count_prefix(resumed), resumed
    lab.screenshot("reload")
    lab.wait_idle(timeout_s=60)

    seen = lab.recorded_reply_texts()
    assert seen and all(is_count_prefix(text) for text in seen), [t[-40:] for t in seen if not is_count_prefix(t)]
    lengths = [len(text.split()) for text in seen]
    assert lengths == sorted(lengths), "the live reply went backwards"
    assert lab.user_texts() == [f"count to {N}"]
    assert lab.assistant_texts() == [counting(N)]
    assert lab.markers() == []
