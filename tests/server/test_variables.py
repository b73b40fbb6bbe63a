"""The variable picker's routes: a notebook's kernel variables listed, and one of them as data.

A real in-process server with a real kernel opened for a notebook (a Jupyter session, as JupyterLab
opens one): the route finds the kernel from the notebook path, the summary comes from the notebook
tools' own probe (kernel_summary.py), and what it answers is the attachment's text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..notebook.kernels import run_setup
from .client import HermesClient

pytest.importorskip("pandas")

NOTEBOOK = "work/sales.ipynb"
SETUP = """
import numpy as np, pandas as pd
df = pd.DataFrame({'region': ['north', 'south', 'east', None], 'units': [3, 5, 8, 13],
                   'price': [1.5, None, 2.25, 4.0]})
units = df['units']
grid = np.arange(12).reshape(3, 4)
config = {'rows': 4, 'api_key': 'sk-live-4f9c2e7a1b3d5f6e8a0cdeadbeef', 'label': 'plain'}
api_token = 'plain-looking-value-123'
n = 4
"""


async def _notebook_kernel(jp_fetch: Any, jp_serverapp: Any, path: str = NOTEBOOK) -> str:
    body = json.dumps({"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}})
    session = json.loads((await jp_fetch("api", "sessions", method="POST", body=body)).body)
    kernel_id = str(session["kernel"]["id"])
    await run_setup(jp_serverapp.kernel_manager.get_kernel(kernel_id).client(), SETUP)
    return kernel_id


async def _variable(api: HermesClient, name: str) -> dict[str, Any]:
    code, body = await api.call("GET", "notebooks", "variables", name, path=NOTEBOOK)
    assert code == 200, body
    return dict(body)


async def test_the_list_names_types_and_shapes_without_values(api: HermesClient, jp_fetch: Any,
                                                              jp_serverapp: Any) -> None:
    await _notebook_kernel(jp_fetch, jp_serverapp)
    code, body = await api.call("GET", "notebooks", "variables", path=NOTEBOOK)
    assert code == 200, body
    rows = {row["name"]: row for row in body["variables"]}
    assert rows["df"] == {"name": "df", "type": "pandas.DataFrame", "size": "4 × 3"}
    assert rows["grid"]["size"] == "3 × 4" and rows["config"]["size"] == "3 items"
    assert {"np", "pd"}.isdisjoint(rows)  # modules are not data
    assert "sk-live" not in json.dumps(body) and "plain-looking" not in json.dumps(body)


async def test_a_dataframe_arrives_as_shape_dtypes_head_and_nulls_not_a_docstring(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any,
) -> None:
    await _notebook_kernel(jp_fetch, jp_serverapp)
    shown = await _variable(api, "df")
    summary, text = shown["summary"], shown["text"]
    assert summary["shape"] == [4, 3]
    region = summary["dtypes"].pop("region")
    assert region in ("object", "str") and summary["dtypes"] == {"units": "int64", "price": "float64"}
    assert summary["nulls"] == {"region": 1, "units": 0, "price": 1}
    assert summary["memory_bytes"] > 0
    assert text.startswith(f"df: pandas.DataFrame, shape 4 × 3\ndtypes: region {region}, units int64, price float64")
    assert "null counts: region 1, units 0, price 1" in text
    assert "north" in text and "2.25" in text and "13" in text  # the head, as a table
    assert "Two-dimensional" not in text and "Parameters" not in text  # pandas' class docstring
    assert len(text.splitlines()) < 15


async def test_series_array_dict_and_scalar_summaries(api: HermesClient, jp_fetch: Any, jp_serverapp: Any) -> None:
    await _notebook_kernel(jp_fetch, jp_serverapp)
    units = await _variable(api, "units")
    assert units["summary"]["kind"] == "series" and units["summary"]["dtype"] == "int64"
    assert units["summary"]["nulls"] == 0 and "dtype: int64" in units["text"] and "13" in units["text"]
    grid = await _variable(api, "grid")
    assert grid["summary"]["shape"] == [3, 4] and grid["summary"]["items"][:3] == ["0", "1", "2"]
    assert "min 0, max 11" in grid["text"]
    config = await _variable(api, "config")
    assert config["summary"]["length"] == 3 and "  'rows': 4" in config["text"]
    assert "sk-live" not in json.dumps(config) and "'api_key': [redacted]" in config["text"]
    scalar = await _variable(api, "n")
    assert scalar["text"] == "n: int\nvalue: 4"


async def test_a_secret_named_variable_is_described_without_its_contents(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any,
) -> None:
    await _notebook_kernel(jp_fetch, jp_serverapp)
    shown = await _variable(api, "api_token")
    assert "plain-looking-value-123" not in json.dumps(shown)
    assert shown["text"] == "api_token: str, 23 characters\nvalue: not shown: its name says it holds a secret"


async def test_refusals_in_plain_words(api: HermesClient, jp_fetch: Any, jp_serverapp: Any) -> None:
    code, body = await api.call("GET", "notebooks", "variables", path=NOTEBOOK)
    assert code == 404 and "no running kernel" in body["message"]
    await _notebook_kernel(jp_fetch, jp_serverapp)
    code, body = await api.call("GET", "notebooks", "variables", "nope", path=NOTEBOOK)
    assert code == 404 and "no variable named 'nope'" in body["message"]
    for name in ("os", "pd", "df.__class__"):
        code, body = await api.call("GET", "notebooks", "variables", name, path=NOTEBOOK)
        assert code in (404, 409) and body["message"], (name, body)
    code, body = await api.call("GET", "notebooks", "variables")
    assert code == 400
