"""Scene: Attach → Variable lists the kernel's variables; picking `df` attaches its summary (dtypes, head),
not the class docstring the kernel's inspector gave."""

from __future__ import annotations

import pytest

from .lab_page import SIDEBAR, LabPage
from .test_notebook_assist import keep_screenshot

pytest.importorskip("pandas")

NOTEBOOK = "variable_picker.ipynb"
SETUP = ("import pandas as pd\n"
         "df = pd.DataFrame({'region': ['north', 'south', 'east', None], 'units': [3, 5, 8, 13]})\n"
         "threshold = 4")
USER = f"{SIDEBAR} .jp-HermesMessage[data-role=user]"
PICKER = ".jp-Dialog [data-testid=hermes-variables]"


def test_the_picker_lists_the_kernel_variables_and_attaches_a_dataframe_with_its_dtypes(lab: LabPage) -> None:
    lab.open_and_run(NOTEBOOK, SETUP)

    lab.open_sidebar()
    session_id = lab.new_session()
    lab.page.click(f"{SIDEBAR} [data-testid=hermes-attach-variable]")
    lab.page.wait_for_selector(f"{PICKER}[data-state=ready]", timeout=30_000)
    rows = lab.page.locator(f"{PICKER} [data-testid=hermes-variable]")
    assert [rows.nth(i).get_attribute("data-name") for i in range(rows.count())] == ["df", "threshold"]
    df_row = lab.page.locator(f"{PICKER} [data-testid=hermes-variable][data-name=df]")
    assert df_row.locator(".jp-HermesVariables-type").inner_text() == "pandas.DataFrame"
    assert df_row.locator(".jp-HermesVariables-size").inner_text() == "4 × 2"
    df_row.click()
    lab.page.wait_for_selector(f"{PICKER} [data-name=df][aria-selected=true]")
    keep_screenshot(lab, "variable-picker")
    keep_screenshot(lab, "variable-picker-dark", dark=True)
    lab.page.click(".jp-Dialog .jp-mod-accept")
    chip = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-attachment-chip][data-kind=variable]")
    chip.wait_for()
    assert chip.locator(".jp-HermesAttach-label").inner_text() == "df"

    lab.send("What is in df?")
    lab.wait_idle()
    shown = lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=variable]")
    shown.wait_for()
    title = shown.get_attribute("title") or ""
    assert title.startswith("df: pandas.DataFrame, shape 4 × 2\ndtypes: region "), title
    assert "units int64" in title and "null counts: region 1, units 0" in title
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"][0]["attachments"][0]
    assert stored["label"] == "df" and "north" in stored["text"] and "Two-dimensional" not in stored["text"]
