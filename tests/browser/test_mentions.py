"""Scene: `@` in the composer lists the notebook kernel's variables, the notebook's cells and the files
beside it; picking `df` leaves its name in the text and attaches its summary (dtypes), as Attach →
Variable does; a click on a cell row attaches that cell; Escape closes the list without leaving."""

from __future__ import annotations

import pytest

from .lab_page import ASSISTANT, COMPOSER, SIDEBAR, LabPage

pytest.importorskip("pandas")

NOTEBOOK = "mentions.ipynb"
SETUP = ("import pandas as pd\n"
         "df = pd.DataFrame({'region': ['north', 'south', 'east', None], 'units': [3, 5, 8, 13]})")
SECOND = "total = df['units'].sum()"
USER = f"{SIDEBAR} .jp-HermesMessage[data-role=user]"
LIST = f"{SIDEBAR} [data-testid=hermes-mentions]"
OPTION = f"{LIST} [data-testid=hermes-mention]"
CHIP = f"{SIDEBAR} [data-testid=hermes-attachment-chip]"


def _open_list(lab: LabPage, typed: str) -> None:
    lab.page.click(COMPOSER)
    lab.page.keyboard.type(typed)
    lab.page.wait_for_selector(f"{LIST}[data-state=ready]", timeout=30_000)


def _shown(lab: LabPage) -> list[tuple[str | None, str | None]]:
    rows = lab.page.locator(OPTION)
    return [(rows.nth(i).get_attribute("data-kind"), rows.nth(i).get_attribute("data-label"))
            for i in range(rows.count())]


def _wait_active(lab: LabPage, index: int) -> None:
    lab.page.wait_for_function(
        "([sel, i]) => { const rows = document.querySelectorAll(sel);"
        " return rows.length > i && rows[i].getAttribute('aria-selected') === 'true'; }",
        arg=[OPTION, index])


def _enter_sends(lab: LabPage, turns: int) -> None:
    """Enter in the composer sends: wait until the turn's answer is there and the chat is idle."""
    lab.page.keyboard.press("Enter")
    lab.page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n", arg=[ASSISTANT, turns], timeout=30_000)
    lab.wait_idle()


def test_at_completes_variables_cells_and_files_and_a_pick_attaches_it(lab: LabPage) -> None:
    (lab.server.notebooks / "data_notes.txt").write_text("units are boxes\n")
    lab.open_and_run(NOTEBOOK, SETUP, SECOND)
    lab.open_sidebar()
    session_id = lab.new_session()

    # `@d`: the variable df first, then the file and the cells that name d somewhere
    _open_list(lab, "What is in @d")
    shown = _shown(lab)
    assert shown[0] == ("variable", "df"), shown
    assert ("file", "data_notes.txt") in shown and ("cell", "#2") in shown, shown
    assert ("variable", "total") not in shown, shown
    composer = lab.page.locator(COMPOSER)
    assert composer.get_attribute("aria-activedescendant") == lab.page.locator(OPTION).nth(0).get_attribute("id")
    assert lab.page.locator(f"{LIST} [role=listbox] [role=option][aria-selected=true]").count() == 1
    lab.screenshot("mentions-light")
    lab.page.keyboard.press("ArrowDown")
    _wait_active(lab, 1)
    lab.page.keyboard.press("ArrowUp")  # back to df, not the prompt history
    _wait_active(lab, 0)
    lab.page.keyboard.press("Enter")  # picks, does not send
    chip = lab.page.locator(f"{CHIP}[data-kind=variable]")
    chip.wait_for()
    assert chip.locator(".jp-HermesAttach-label").inner_text() == "df"
    assert lab.page.locator(LIST).count() == 0
    assert composer.input_value() == "What is in df "
    assert composer.get_attribute("aria-activedescendant") is None

    _enter_sends(lab, 1)  # the list is closed: Enter sends
    shown_attachment = lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=variable]")
    shown_attachment.wait_for()
    title = shown_attachment.get_attribute("title") or ""
    assert title.startswith("df: pandas.DataFrame, shape 4 × 2\ndtypes: region "), title
    assert "units int64" in title

    # Escape closes the list and keeps the composer (and the text)
    _open_list(lab, "Explain @")
    lab.page.keyboard.press("Escape")
    lab.page.wait_for_selector(LIST, state="detached")
    assert composer.input_value() == "Explain @"
    assert lab.page.evaluate("(sel) => document.activeElement === document.querySelector(sel)", COMPOSER)

    # a click on a cell row attaches that cell
    lab.page.keyboard.press("Backspace")
    lab.page.keyboard.type("@")
    lab.page.wait_for_selector(f"{LIST}[data-state=ready]", timeout=30_000)
    lab.screenshot_dark("mentions-dark")
    lab.page.click(f"{OPTION}[data-kind=cell][data-label='#2']")
    cell_chip = lab.page.locator(f"{CHIP}[data-kind=cell]")
    cell_chip.wait_for()
    assert composer.input_value() == "Explain cell In [2] "
    _enter_sends(lab, 2)
    lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=cell]").wait_for()
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"]
    users = [m for m in stored if m["role"] == "user"]
    assert users[0]["attachments"][0]["label"] == "df" and "north" in users[0]["attachments"][0]["text"]
    assert users[1]["attachments"] == [{**users[1]["attachments"][0], "kind": "cell", "text": SECOND}]
