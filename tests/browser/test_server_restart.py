"""Scene 5: the Jupyter server dies (SIGKILL) mid-stream and starts again over the same state."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ..server_process import JupyterServerProcess
from .lab_page import LabPage, is_count_prefix


@pytest.fixture(scope="module")
def restarting_server(make_lab_server: Callable[[str], JupyterServerProcess]) -> JupyterServerProcess:
    """These scenes kill their server, so they get one of their own."""
    return make_lab_server("restart")


def start_long_reply(lab: LabPage) -> tuple[str, str]:
    """Open the sidebar, send a reply that outlives the server; returns (session id, text seen)."""
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send("count to 100000")
    return session_id, lab.wait_streaming(tokens=30)


def assert_recovered_turn(lab: LabPage, session_id: str, seen: str) -> None:
    """The sidebar shows the journal's partial text, one server_restart marker and the banner,
    exactly as the repaired session on the server has it, and takes a new message."""
    marker = lab.wait_marker("interrupted")
    lab.wait_idle()
    assert marker.cause == "server_restart", marker
    assert "partial output above was recovered from the run journal" in marker.text
    assert "WebUI process restarted" not in marker.text
    partial = lab.last_message_text()
    assert is_count_prefix(partial) and len(partial.split()) >= len(seen.split()), partial
    assert lab.assistant_rows().last.get_attribute("data-recovered") == "true"
    assert [m.kind for m in lab.markers()] == ["interrupted"]
    assert lab.recovery_banner().is_visible()
    assert lab.composer_usable()

    stored = lab.server.get(f"sessions/{session_id}").json()
    assert stored["active_stream_id"] is None
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant", "assistant"]
    assert stored["messages"][1]["content"].strip() == partial


def test_server_restart_mid_stream_shows_the_recovered_partial_and_marker_after_reload(
    make_lab: Callable[[JupyterServerProcess], LabPage], restarting_server: JupyterServerProcess
) -> None:
    # SIGKILL leaves the journal without a terminal row and the session pointing at a dead
    # stream. The new process (same state dir, same port) repairs the turn on the first read:
    # the journal's text becomes a recovered partial reply, followed by an interrupted marker
    # with cause server_restart. A reloaded page shows exactly that, with the banner.
    lab = make_lab(restarting_server)
    session_id, seen = start_long_reply(lab)

    restarting_server.kill()
    restarting_server.start()
    lab.reload()
    lab.open_sidebar()
    assert lab.selected_session_id() == session_id

    lab.wait_marker("interrupted")
    lab.screenshot("server-restart")
    assert_recovered_turn(lab, session_id, seen)


def test_open_page_shows_reconnecting_then_settles_after_a_server_restart(
    make_lab: Callable[[JupyterServerProcess], LabPage], restarting_server: JupyterServerProcess
) -> None:
    # Without a reload: the run's WebSocket closes, the stream says "reconnecting" and retries
    # with backoff; once the server is back, GET runs/{id} answers `interrupted` (repaired on
    # read), the rest of the journal is read over REST and the chat re-reads the settled session.
    lab = make_lab(restarting_server)
    session_id, seen = start_long_reply(lab)

    restarting_server.kill()
    lab.page.wait_for_selector("[data-testid=hermes-chat][data-status=reconnecting]", timeout=15_000)
    lab.screenshot("server-restart-reconnecting")
    restarting_server.start()

    lab.wait_marker("interrupted", timeout_s=60)
    lab.screenshot("server-restart-no-reload")
    assert_recovered_turn(lab, session_id, seen)
