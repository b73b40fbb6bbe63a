"""Notebook 7: a notebook page opens with the Hermes chat shown in its side panel (its side panels
are hidden until asked for, so without this the chat is only reachable through View → Left Sidebar)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from ..server_process import TOKEN
from .lab_page import COMPOSER, SIDEBAR, LabPage

APP_TIMEOUT_MS = 60_000


def test_a_notebook_page_shows_the_chat_panel_and_the_shortcut_focuses_it(lab: LabPage) -> None:
    nb = new_notebook(cells=[new_code_cell("%load_ext hermes_jupyter")],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, lab.server.root_dir / "nb7.ipynb")
    page = lab.page
    page.goto(f"{lab.server.url}notebooks/nb7.ipynb?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=APP_TIMEOUT_MS)
    page.wait_for_selector(SIDEBAR, state="visible", timeout=APP_TIMEOUT_MS)
    assert page.is_visible(COMPOSER)
    lab.screenshot("notebook7-sidebar")

    page.locator(".jp-Notebook").click()
    page.keyboard.press("Control+Shift+A")
    page.wait_for_function(f"document.activeElement === document.querySelector('{COMPOSER}')")

    page.goto(f"{lab.server.url}tree?token={TOKEN}")  # the file browser page keeps its full width
    page.wait_for_selector(".jp-DirListing", timeout=APP_TIMEOUT_MS)
    page.wait_for_timeout(1000)
    assert not page.is_visible(SIDEBAR)
