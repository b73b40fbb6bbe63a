"""Help in the editor (docs/editor.md): "Edit this cell" (Accel K) ends in the replace-proposal diff beside
the cell, offline with the demo agent; inline completion shows the model's ghost text in a code cell and
Tab accepts it, from the scripted OpenAI-compatible stub. Light and dark screenshots of both."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..fakes.openai_stub_server import STUB_COMPLETION, STUB_MODEL, OpenAIStubServer
from ..server_process import JupyterServerProcess
from .lab_page import SIDEBAR, LabPage
from .test_notebook_assist import cells, keep_screenshot, write_notebook

KEY = "sk-inline-" + "7e6d5c4b3a29f8e7d6c5WXYZ"
CELL = ".jp-NotebookPanel .jp-Notebook .jp-Cell"
EDIT_MARK = "# edited by Hermes: "


def _type_in_cell(lab: LabPage, index: int) -> None:
    lab.page.locator(CELL).nth(index).locator(".cm-content").click()
    lab.page.wait_for_selector(".jp-Notebook.jp-mod-editMode")


def test_edit_this_cell_shows_the_replacement_beside_the_cell_and_accept_applies_it(lab: LabPage) -> None:
    path = write_notebook(lab.server, "edit-this-cell.ipynb", "x = 1", "total = x + 41\nprint(total)", kernel=False)
    lab.open_notebook(path, kernel=False)
    _type_in_cell(lab, 1)
    lab.page.keyboard.press("Control+k")
    prompt = lab.page.locator(".jp-Dialog input")
    prompt.wait_for()
    assert "How should this cell change?" in lab.page.inner_text(".jp-Dialog")
    prompt.fill("add a comment")
    prompt.press("Enter")

    inline = lab.page.locator(CELL).nth(1).locator("[data-testid=hermes-proposal-inline][data-state=pending]")
    inline.wait_for(timeout=60_000)
    diff = inline.locator("[data-testid=hermes-proposal-diff]").inner_text()
    assert f"{EDIT_MARK}add a comment" in diff
    session_id = lab.selected_session_id()
    assert session_id and lab.server.get(f"sessions/{session_id}").json()["notebook_path"] == path
    keep_screenshot(lab, "edit-cell")
    keep_screenshot(lab, "edit-cell-dark", dark=True)

    inline.locator("[data-testid=hermes-proposal-accept]").click()
    lab.page.locator(f"{SIDEBAR} [data-testid=hermes-proposal-card][data-state=accepted]").wait_for()
    after = cells(lab)
    assert [c["source"] for c in after] == ["x = 1", f"{EDIT_MARK}add a comment\ntotal = x + 41\nprint(total)"]
    assert after[1]["execution_count"] is None


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(api_key=KEY) as server:
        yield server


@pytest.fixture
def completing_lab(make_lab_server: Callable[[str], JupyterServerProcess],
                   make_lab: Callable[[JupyterServerProcess], Any], stub: OpenAIStubServer) -> LabPage:
    """A server of its own whose model settings point at the stub, with the person's setting turned on."""
    server = make_lab_server("inline-completion")
    saved = server.request("PUT", "settings", {"backend": "openai", "url": stub.base_url, "model": STUB_MODEL,
                                               "key": KEY})
    assert saved.status_code == 200, saved.text
    raw = json.dumps({"enabled": True})
    turned_on = server.jupyter("PUT", "lab/api/settings/hermes-jupyter:inline-completion", {"raw": raw})
    assert turned_on.status_code in (200, 204), turned_on.text
    lab: LabPage = make_lab(server)
    return lab


def test_an_inline_completion_appears_as_ghost_text_and_tab_accepts_it(
    completing_lab: LabPage, stub: OpenAIStubServer,
) -> None:
    lab = completing_lab
    path = write_notebook(lab.server, "inline.ipynb", "import math", "")  # with a kernel: its Tab completer too
    lab.open_notebook(path)
    _type_in_cell(lab, 1)
    lab.page.keyboard.type(f'token = "{KEY}"\ndef add')
    ghost = lab.page.locator(CELL).nth(1).locator(".jp-GhostText")
    ghost.wait_for(timeout=30_000)
    assert ghost.inner_text().startswith("(a, b):")
    keep_screenshot(lab, "inline-completion")
    keep_screenshot(lab, "inline-completion-dark", dark=True)
    lab.page.locator(CELL).nth(1).locator(".cm-content").focus()
    lab.page.keyboard.press("Tab")
    lab.page.wait_for_function(
        "([want]) => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[1].source.endsWith(want)",
        arg=[STUB_COMPLETION],
    )
    assert cells(lab)[1]["source"] == f'token = "{KEY}"\ndef add{STUB_COMPLETION}'
    sent = json.dumps(stub.chat_requests())
    assert "def add<CURSOR>" in sent and KEY not in sent  # the key typed in the cell never left the server
