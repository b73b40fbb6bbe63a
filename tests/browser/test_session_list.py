"""Sessions you can tell apart, a helpful empty session, and a failed first send that leaves nothing."""

from __future__ import annotations

from .lab_page import CHAT, COMPOSER, SIDEBAR, LabPage


def _item(session_id: str) -> str:
    return f"{SIDEBAR} .jp-HermesSessionItem[data-session-id='{session_id}']"


def test_session_rows_show_their_notebook_and_how_long_ago_they_changed(lab: LabPage) -> None:
    # Two sessions of the same title in two notebooks: the row under each title names its
    # notebook (the server's subtitle, else notebook_path) and a relative time, and the list
    # groups sessions under their notebook's path.
    first = lab.server.new_session(title="usertests.ipynb", notebook_path="analysis/usertests.ipynb")
    second = lab.server.new_session(title="usertests.ipynb", notebook_path="scratch/usertests.ipynb")
    lab.open()
    lab.open_sidebar()
    lab.page.wait_for_selector(_item(second))
    lab.screenshot("sidebar-list-light")
    for sid, notebook in ((first, "analysis/usertests.ipynb"), (second, "scratch/usertests.ipynb")):
        row = lab.page.locator(_item(sid))
        assert row.locator("[data-testid=hermes-session-subtitle]").inner_text() == notebook
        assert row.locator("[data-testid=hermes-session-when]").inner_text() == "just now"
    headers = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-session-group]").all_inner_texts()
    mine = [h for h in headers if h.endswith("usertests.ipynb")]
    assert mine == ["scratch/usertests.ipynb", "analysis/usertests.ipynb"], headers


def test_a_new_empty_session_says_what_to_do(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    lab.new_session()
    hint = lab.page.locator(f"{CHAT}[data-status=idle] [data-testid=hermes-empty-session]")
    hint.wait_for()
    assert "Ask a question below" in hint.inner_text()
    assert "count to 20" in hint.inner_text()  # the test server runs the demo agent


def test_a_failed_first_send_keeps_the_text_and_leaves_no_session(lab: LabPage) -> None:
    # No session is selected (a fresh browser), so sending creates one with its first turn in
    # one call. A message over the server's body limit is refused (413): no session is left
    # behind, the typed text stays in the composer, and the error is a plain sentence with
    # the HTTP code only in its details fold.
    before = {s["session_id"] for s in lab.server.get("sessions").json()}
    lab.open()
    lab.open_sidebar()
    assert lab.chat_status() == "empty"
    text = "x" * (1 << 20)
    lab.page.fill(COMPOSER, text)
    lab.page.press(COMPOSER, "Enter")
    error = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-error]")
    error.wait_for()
    summary = error.inner_text().split("Details")[0]
    # the server's own sentence (what happened, what to do); the code and byte counts stay in the fold
    assert "too large" in summary and "413" not in summary and "bytes" not in summary, summary
    error.locator("summary").click()
    assert "HTTP 413" in error.locator("details").inner_text()
    assert lab.page.input_value(COMPOSER) == text
    after = {s["session_id"] for s in lab.server.get("sessions").json()}
    assert after == before
    assert lab.chat_status() == "empty"
