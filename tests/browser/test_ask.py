"""Asking Hermes: a question the agent asks is answered in its card, a message sent while a turn runs
is queued and answered after it (from the sidebar and from a cell), and the model picker switches the
session's model."""

from __future__ import annotations

import nbformat

from .lab_page import COMPOSER, RUN_OUTPUT, SEND, SIDEBAR, LabPage, counting

CLARIFY = f"{SIDEBAR} [data-testid=hermes-clarify-card]"
QUEUED = f"{SIDEBAR} [data-testid=hermes-queued]"
PICKER = f"{SIDEBAR} [data-testid=hermes-model-picker]"
USAGE = f"{SIDEBAR} [data-testid=hermes-usage]"


def test_a_question_from_the_agent_is_answered_in_its_card_and_the_answer_reaches_the_agent(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    lab.new_session()
    lab.send("ask me a question")
    lab.page.wait_for_selector(f"{CLARIFY}[data-state=pending] [data-testid=hermes-clarify-choice]", timeout=30_000)
    lab.page.fill(f"{CLARIFY} [data-testid=hermes-clarify-text]", "only on Tuesdays")
    lab.page.click(f"{CLARIFY} [data-testid=hermes-clarify-send]")
    lab.wait_idle()
    answer = lab.page.locator(f"{CLARIFY}[data-state=resolved] [data-testid=hermes-clarify-answer]")
    said = answer.inner_text().strip()  # "Answered by <the signed-in user>: …" (wording.answer_words)
    assert said.startswith("Answered by ") and said.endswith(": only on Tuesdays"), said
    assert "You answered \u201conly on Tuesdays\u201d" in lab.last_message_text()
    lab.screenshot("clarify-answered")


def test_a_message_sent_while_a_turn_runs_is_shown_queued_then_answered_after_it(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send("count to 1000")  # about 10 s: the queue below is shown and checked while it runs
    lab.wait_streaming(tokens=3)
    lab.page.fill(COMPOSER, "count to 3")
    lab.page.press(COMPOSER, "Enter")  # the composer does not refuse: the message waits its turn
    queued = lab.page.locator(QUEUED)
    queued.first.wait_for(timeout=10_000)
    lab.page.fill(COMPOSER, "count to 4")
    lab.page.wait_for_selector(f"{SEND}:not([disabled])")  # the first message's send has returned
    lab.page.press(COMPOSER, "Enter")
    lab.page.wait_for_function("(sel) => document.querySelectorAll(sel).length === 2", arg=QUEUED)
    assert queued.locator(".jp-HermesQueue-text").all_inner_texts() == ["count to 3", "count to 4"]
    lab.screenshot("queued")
    queued.nth(1).locator("[data-testid=hermes-queued-cancel]").click()  # taken off the queue: never sent
    lab.page.wait_for_function("(sel) => document.querySelectorAll(sel).length === 1", arg=QUEUED)
    queued.first.wait_for(state="detached", timeout=60_000)
    lab.wait_idle(timeout_s=60)
    lab.page.wait_for_function(
        "(n) => document.querySelectorAll(n).length >= 2", arg=f"{SIDEBAR} .jp-HermesMessage[data-role=user]")
    assert lab.user_texts()[-2:] == ["count to 1000", "count to 3"]
    assert lab.assistant_texts()[-2:] == [counting(1000), "1 2 3"]
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert stored["queued"] == [] and [m["content"] for m in stored["messages"]][-1] == "1 2 3"


def test_the_model_picker_switches_the_sessions_model_and_the_next_answer_names_it(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    picker = lab.page.locator(PICKER)
    picker.wait_for(timeout=10_000)
    assert picker.locator("option").all_inner_texts() == [
        "Offline demo agent (no model)", "Offline demo agent, pretend large model"]
    picker.select_option("demo-large")
    for _ in range(50):  # the PATCH is on its way
        if lab.server.get(f"sessions/{session_id}").json()["model"] == "demo-large":
            break
        lab.page.wait_for_timeout(100)
    assert lab.server.get(f"sessions/{session_id}").json()["model"] == "demo-large"
    lab.send("count to 2")
    lab.wait_idle()
    lab.page.locator(USAGE).last.wait_for()
    assert lab.page.locator(USAGE).last.inner_text().startswith("demo-large · ")
    lab.reload()  # remembered: the session keeps its model
    lab.open_sidebar()
    lab.open_session(session_id)
    assert lab.page.locator(PICKER).input_value() == "demo-large"


def test_a_cell_sent_while_its_session_answers_shows_queued_then_streams(lab: LabPage) -> None:
    # The notebook's session is busy (a turn started elsewhere, e.g. the sidebar): the cell's
    # `%%hermes` is queued; its output says so, then follows the run once it starts.
    name = "queued.ipynb"
    session_id = lab.server.new_session(notebook_path=name)
    busy = lab.server.post(f"sessions/{session_id}/runs", {"message": "count to 100000"}).json()["run_id"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"), nbformat.v4.new_code_cell("%%hermes\ncount to 3")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.server.notebooks / name)
    lab.open_notebook(name)
    lab.run_all_cells()
    lab.page.wait_for_selector(f"{RUN_OUTPUT}[data-follow-state=queued]", timeout=60_000)
    assert lab.page.locator(f"{RUN_OUTPUT} [data-testid=hermes-run-stop]").inner_text() == "Remove from queue"
    lab.screenshot("queued-cell")
    assert lab.server.post(f"runs/{busy}/cancel").json()["cancelled"] is True  # the turn it waits for ends
    lab.wait_run_output_status("completed", timeout_s=90)
    shown = lab.run_output().inner_text()
    assert "1 2 3" in shown and "100" not in shown  # its own answer, not the turn it waited for
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == ["count to 100000", "count to 3"]
