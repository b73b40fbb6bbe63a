"""The notebook binding belongs to the session: a run started from the sidebar (only `{message}`) gets it.

A real in-process server with a real kernel: the session is bound by `PATCH` (what the sidebar's
"Bind to" does), and the demo agent's `use the notebook` calls the notebook tools through the
server's one registry, so its answer names the DataFrame only if the tools were really offered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hermes_jupyter.agents.demo_notebook import UNBOUND_REPLY

from ..notebook.kernels import run_setup
from .client import HermesClient

pytest.importorskip("pandas")

SETUP = "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south', 'east'], 'units': [3, 5, 8]})\nn = 4"


async def _kernel(jp_fetch: Any, jp_serverapp: Any, code: str | None = None) -> str:
    kernel_id = str(json.loads((await jp_fetch("api", "kernels", method="POST", body="{}")).body)["id"])
    if code is not None:
        await run_setup(jp_serverapp.kernel_manager.get_kernel(kernel_id).client(), code)
    return kernel_id


async def _events(api: HermesClient, run_id: str) -> list[dict[str, Any]]:
    code, page = await api.call("GET", "runs", run_id, "events", after_seq="0")
    assert code == 200, page
    return list(page["events"])


def _text(rows: list[dict[str, Any]]) -> str:
    return "".join(r["payload"]["text"] for r in rows if r["event"] == "token")


async def test_a_sidebar_run_on_a_bound_session_gets_the_notebook_tools(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any
) -> None:
    kernel_id = await _kernel(jp_fetch, jp_serverapp, SETUP)
    sid = (await api.create_session())["session_id"]
    code, bound = await api.call("PATCH", "sessions", sid, body={"notebook_path": "sales.ipynb", "kernel_id": kernel_id})
    assert code == 200 and bound["notebook_path"] == "sales.ipynb" and bound["kernel_id"] == kernel_id

    run_id = await api.start(sid, "use the notebook")  # what the sidebar posts: no binding of its own
    assert (await api.wait_status(run_id, "completed", "errored", timeout_s=60))["status"] == "completed"
    rows = await _events(api, run_id)
    tools = [(r["payload"]["name"], r["payload"].get("is_error")) for r in rows if r["event"] == "tool_complete"]
    assert tools == [("list_variables", False), ("inspect_variable", False)]
    inspected = next(r["payload"] for r in rows if r["event"] == "tool" and r["payload"]["name"] == "inspect_variable")
    assert inspected["args"] == {"name": "sales"}  # the first DataFrame, not the first variable (`n`)
    assert "`sales` is a DataFrame of 3 rows × 2 columns" in _text(rows)
    assert "`region`, `units`" in _text(rows)
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")


async def test_an_unbound_session_is_told_how_to_bind(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "use the notebook")
    assert (await api.wait_status(run_id, "completed"))["status"] == "completed"
    rows = await _events(api, run_id)
    assert not [r for r in rows if r["event"] == "tool"]
    assert _text(rows) == UNBOUND_REPLY


async def test_unbinding_takes_the_tools_away_from_the_next_run(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any
) -> None:
    kernel_id = await _kernel(jp_fetch, jp_serverapp)
    sid = (await api.create_session(notebook_path="a.ipynb", kernel_id=kernel_id))["session_id"]
    assert (await api.call("PATCH", "sessions", sid, body={"notebook_path": None, "kernel_id": None}))[0] == 200
    run_id = await api.start(sid, "use the notebook")
    assert (await api.wait_status(run_id, "completed"))["status"] == "completed"
    assert _text(await _events(api, run_id)) == UNBOUND_REPLY
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")


async def test_a_kernel_restart_interrupts_a_sidebar_run_of_the_bound_session(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any
) -> None:
    kernel_id = await _kernel(jp_fetch, jp_serverapp)
    bound = (await api.create_session(notebook_path="a.ipynb", kernel_id=kernel_id))["session_id"]
    other = (await api.create_session(notebook_path="a.ipynb"))["session_id"]  # same notebook, no kernel
    bound_run = await api.start(bound, "count to 100000")  # started from the sidebar: only a message
    free_run = await api.start(other, "count to 100000")
    await api.stream(bound_run, stop_after=5)
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="{}")
    status = await api.wait_status(bound_run, "interrupted")
    assert status["status"] == "interrupted"
    code, session = await api.call("GET", "sessions", bound)
    assert session["messages"][-1]["interruption_cause"] == "kernel_restart"
    assert session["kernel_id"] == kernel_id  # still bound: the next run gets the restarted kernel
    assert (await api.call("GET", "runs", free_run))[1]["status"] == "running"
    await api.call("POST", "runs", free_run, "cancel")
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")


def test_every_backend_is_wired_to_the_one_notebook_tools(hermes: Any) -> None:
    from hermes_jupyter.agents.tools import NotebookTools

    backends = hermes.manager.backends
    assert {"demo", "openai", "hermes"} <= set(backends)
    tools = backends["demo"].tools_factory
    assert isinstance(tools, NotebookTools)
    assert backends["hermes"].tools_factory is tools and backends["openai"]._tools_factory is tools
