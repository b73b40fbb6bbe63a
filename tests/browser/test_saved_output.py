"""A hermes output saved on another machine (its run unknown here) shows its saved answer."""

from __future__ import annotations

import nbformat

from .lab_page import RUN_OUTPUT, LabPage

RUN_MIME = "application/vnd.hermes.run+json"
ANSWER = "The mean is **4.2**, computed from `data.csv`."


def test_output_of_an_unknown_run_shows_the_saved_answer_quietly(lab: LabPage) -> None:
    # GET runs/{id} answers 404 here: the renderer shows the bundle's own markdown (through
    # rendermime) with a quiet "saved" pill, never an error in place of the answer.
    name = "foreign.ipynb"
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%hermes\nsummarise data.csv")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        RUN_MIME: {"run_id": "e17746fe0000", "session_id": "abc123", "seq": 40, "status": "completed"},
        "text/markdown": ANSWER, "text/plain": "The mean is 4.2.",
    })]
    nb.cells = [cell]
    nbformat.write(nb, lab.server.notebooks / name)
    lab.open_notebook(name, kernel=False)
    output = lab.page.locator(f"{RUN_OUTPUT}[data-saved=true]")
    output.wait_for(timeout=30_000)
    lab.page.locator(f"{RUN_OUTPUT} .jp-HermesRunOutput-saved strong").wait_for()
    text = output.inner_text()
    assert "The mean is 4.2, computed from data.csv." in " ".join(text.split())
    assert output.locator("[data-testid=hermes-run-status]").inner_text().strip() == "saved"
    assert "unavailable" not in text.lower() and "e17746fe" not in text
    assert output.get_attribute("data-status") == "completed"
    lab.screenshot("saved-output")
