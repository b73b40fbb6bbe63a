"""An approval asked mid-run is answered with the card's buttons in the sidebar."""

from __future__ import annotations

from .lab_page import SIDEBAR, LabPage

APPROVAL = f"{SIDEBAR} [data-testid=hermes-approval]"


def test_pending_approval_is_answered_from_the_sidebar(lab: LabPage) -> None:
    # The demo agent journals `approval {status: pending}` and waits on the server's broker; the
    # card's "Allow once" POSTs runs/{id}/approvals/{aid}; the agent goes on and the resolution
    # row turns the card into an answered one. Nothing runs before the click.
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send("please ask for approval first")
    allow = lab.page.locator(f"{APPROVAL}[data-pending=true] [data-testid=hermes-approval-allow_once]")
    allow.wait_for(timeout=30_000)
    lab.screenshot("approval-pending")
    allow.click()
    lab.page.locator(f"{APPROVAL}[data-choice=allow_once]").first.wait_for(state="attached", timeout=30_000)
    assert "allowed" in lab.page.locator(f"{SIDEBAR} [data-tool-name=approval]").first.inner_text()
    lab.wait_idle()
    lab.wait_transcript_rendered()
    # Once settled, the card comes from the session's tool calls: it must still say how it was answered.
    assert "allowed" in lab.page.locator(f"{SIDEBAR} [data-tool-name=approval]").first.inner_text()
    lab.screenshot("approval-answered")
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert "Approved" in stored["messages"][-1]["content"]
    [card] = [c for c in stored["tool_calls"] if c["name"] == "approval"]
    assert card["choice"] == "allow_once"
