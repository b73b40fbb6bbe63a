"""Autonomy and the cell tools end to end: a real server (openai backend on the scripted stub), real kernels
the server started, the notebook file on disk (docs/autonomy.md).

A person chooses the autonomy (PATCH; kernels and bare tokens get 403; above max_autonomy, 403 in words);
then one turn drives insert_cell → run_cell (a matplotlib plot, whose image reaches the model as an image
part) → read_notebook → edit_cell → run_cell, and the file, the journal and the model's requests are checked.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.notebook.cell_edits import source_sha256

from ..server_process import JupyterServerProcess
from .principals_stack import XSRF, Stack, is_pending, principals_stack
from .test_run_code_from_cell import HermesCell

pytestmark = pytest.mark.asyncio

PLOT = ("%matplotlib inline\nimport matplotlib.pyplot as plt\nprint('drawing')\n"
        "plt.figure(figsize=(2, 1)); plt.plot([1, 2, 3]); plt.show()")
FIXED = "print('fixed', 6 * 7)"
CELL_DONE_S = 25.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with principals_stack(tmp_path_factory.mktemp("autonomy"), "c.OpenAIAgent.send_images = 'always'\n") as stack:
        for name in stack.kernels:
            asyncio.run(stack.run_in(name, "%load_ext hermes_jupyter"))
            stack.tokens[name] = asyncio.run(
                stack.value_in(name, "__import__('os').environ.get('HERMES_JUPYTER_SERVER_TOKEN')"))
        yield stack


def _session(stack: Stack, notebook: str, title: str, autonomy: str | None) -> str:
    with stack.person() as http:
        response = http.post("sessions", json={"title": title, "backend": "openai", "notebook_path": notebook,
                                               "kernel_id": stack.kernels[notebook]})
        assert response.status_code == 201, response.text
        sid = str(response.json()["session_id"])
        if autonomy is not None:
            patched = http.patch(f"sessions/{sid}", json={"autonomy": autonomy})
            assert patched.status_code == 200 and patched.json()["autonomy"] == autonomy, patched.text
    return sid


def _start(stack: Stack, sid: str, calls: list[list[Any]]) -> str:
    with stack.person() as http:
        response = http.post(f"sessions/{sid}/runs", json={"message": "use these tools in turn: " + json.dumps(calls)})
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])


def _answer(stack: Stack, run_id: str, choice: str) -> dict[str, Any]:
    pending = stack.pending(run_id)
    with stack.as_token("", stack.browser_cookies(), **{"X-XSRFToken": XSRF}) as browser:
        response = browser.post(f"runs/{run_id}/approvals/{pending['approval_id']}", json={"choice": choice})
    assert response.status_code == 200, response.text
    return pending


def _cells(stack: Stack, notebook: str) -> list[dict[str, Any]]:
    cells = json.loads((Path(stack.server.notebooks) / notebook).read_text())["cells"]
    return [{**c, "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]} for c in cells]


def _payloads(rows: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [r["payload"] for r in rows if r["event"] == event]


def _results(rows: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return [(p["name"], p["preview"], p["is_error"]) for p in _payloads(rows, "tool_complete")]


async def test_only_a_person_chooses_the_autonomy_and_never_above_the_cap(stack: Stack) -> None:
    sid = _session(stack, "a.ipynb", "chooser", None)
    with stack.kernel("a.ipynb") as kernel, stack.bare_server_token() as bare:
        refused = [kernel.patch(f"sessions/{sid}", json={"autonomy": "agent"}),
                   bare.patch(f"sessions/{sid}", json={"autonomy": "agent"})]
    assert [r.status_code for r in refused] == [403, 403]
    assert all(r.json()["message"].startswith("Only a person can choose how much the agent") for r in refused)
    with stack.person() as http:
        assert http.get(f"sessions/{sid}").json()["autonomy"] == "propose"  # the default
        above = http.patch(f"sessions/{sid}", json={"autonomy": "agent_auto"})
        unknown = http.patch(f"sessions/{sid}", json={"autonomy": "yolo"})
        chosen = http.patch(f"sessions/{sid}", json={"autonomy": "agent"})
        shown = http.get(f"sessions/{sid}").json()
    assert above.status_code == 403 and "administrator does not allow" in above.json()["message"]
    assert "max_autonomy" in above.json()["detail"]
    assert unknown.status_code == 400
    assert chosen.status_code == 200 and chosen.json()["autonomy"] == "agent"
    assert (shown["autonomy"], shown["max_autonomy"]) == ("agent", "agent")


async def test_agent_inserts_runs_reads_a_plot_edits_and_reruns_with_one_allow_turn(stack: Stack) -> None:
    sid = _session(stack, "a.ipynb", "agent edits", "agent")
    before = len(stack.stub.chat_requests())
    run_id = _start(stack, sid, [["insert_cell", {"source": PLOT, "after_cell_id": "c1"}],
                                 ["run_cell", {"cell_id": "$cell_id"}], ["read_notebook", {}],
                                 ["edit_cell", {"cell_id": "$cell_id", "source": FIXED}],
                                 ["run_cell", {"cell_id": "$cell_id"}]])
    pending = _answer(stack, run_id, "allow_turn")
    rows = stack.finish(run_id)
    assert pending["choices"] == ["allow_once", "allow_turn", "deny"]
    assert len([r for r in rows if is_pending(r)]) == 1  # the second run_cell did not ask
    changes = _payloads(rows, "cell_change")
    assert [(c["action"], c["applied"]) for c in changes] == [
        ("insert", True), ("run", True), ("edit", True), ("run", True)]
    cell_id = changes[0]["cell_id"]
    results = _results(rows)
    assert [name for name, _, _ in results] == ["insert_cell", "run_cell", "read_notebook", "edit_cell", "run_cell"]
    assert not any(err for _, _, err in results), results
    assert "[stdout] drawing" in results[1][1] and "(an image: image/png " in results[1][1]
    # journaled before the model read the result: each cell_change row comes before its tool_complete
    order = [r["event"] for r in rows if r["event"] in ("cell_change", "tool_complete")]
    assert order == ["cell_change", "tool_complete"] * 2 + ["tool_complete"] + ["cell_change", "tool_complete"] * 2

    cells = _cells(stack, "a.ipynb")
    assert [c["id"] for c in cells] == ["c1", cell_id]
    cell = cells[1]
    assert cell["source"] == FIXED and "".join(cell["outputs"][0]["text"]) == "fixed 42\n"
    assert cell["execution_count"] == changes[-1]["execution_count"] is not None
    hermes = cell["metadata"]["hermes"]
    assert (hermes["session_id"], hermes["run_id"], hermes["source_sha256"]) == (sid, run_id, source_sha256(FIXED))
    assert hermes["approved_by"]["choice"] == "allow_turn" and hermes["approved_by"]["kind"] == "person"

    # the model saw the plot: a user message of image parts right after the run_cell result
    requests = stack.stub.chat_requests()[before:]
    messages = requests[2]["messages"]
    assert messages[-2]["role"] == "tool" and messages[-1]["role"] == "user"
    parts = messages[-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    with stack.person() as http:  # and the images are not kept in the conversation
        context = json.dumps(http.get(f"sessions/{sid}").json().get("context_messages"))
    assert "image_url" not in context


async def test_propose_changes_nothing_and_asks_nothing(stack: Stack) -> None:
    before = (Path(stack.server.notebooks) / "b.ipynb").read_text()
    sid = _session(stack, "b.ipynb", "proposer", "propose")
    run_id = _start(stack, sid, [["insert_cell", {"source": "x = 1"}], ["edit_cell", {"cell_id": "c1", "source": "2"}],
                                 ["delete_cell", {"cell_id": "c1"}], ["run_cell", {"cell_id": "c1"}]])
    rows = stack.finish(run_id)
    assert [p["action"] for p in _payloads(rows, "proposal")] == ["insert_end", "replace", "delete"]
    assert _payloads(rows, "cell_change") == [] and _payloads(rows, "approval") == []
    assert "In Propose mode nothing runs" in _results(rows)[-1][1]
    assert (Path(stack.server.notebooks) / "b.ipynb").read_text() == before


async def test_ask_offers_only_reading_tools(stack: Stack) -> None:
    sid = _session(stack, "b.ipynb", "asker", "ask")
    before = len(stack.stub.chat_requests())
    run_id = _start(stack, sid, [["insert_cell", {"source": "x = 1"}]])
    rows = stack.finish(run_id)
    offered = {t["function"]["name"] for t in stack.stub.chat_requests()[before]["tools"]}
    assert offered == {"read_notebook", "list_variables", "inspect_variable"}
    assert "Ask mode" in _results(rows)[0][1] and _payloads(rows, "cell_change") == []


async def test_run_cell_from_a_hermes_cell_runs_beside_it_after_approval(stack: Stack) -> None:
    """The %%hermes cell keeps the kernel busy; the approved run_cell runs in a subshell and its outputs land
    in the cell it names, before the %%hermes cell ends, and nothing runs later."""
    _session(stack, "b.ipynb", "fromcell", "agent")
    calls = [["insert_cell", {"source": "beside = 6 * 7\nprint(beside)"}], ["run_cell", {"cell_id": "$cell_id"}]]
    cell = HermesCell(stack, "b.ipynb", "use these tools in turn: " + json.dumps(calls), head="--session fromcell")
    run_id = cell.run_id()
    _answer(stack, run_id, "allow_once")
    assert (await cell.finished(CELL_DONE_S))["content"]["status"] == "ok"
    rows = stack.finish(run_id)
    assert [(c["action"], c["applied"]) for c in _payloads(rows, "cell_change")] == [("insert", True), ("run", True)]
    ran = next(c for c in _cells(stack, "b.ipynb") if c["id"] == _payloads(rows, "cell_change")[0]["cell_id"])
    assert "".join(ran["outputs"][0]["text"]) == "42\n"
    assert await stack.value_in("b.ipynb", "beside") == 42
    time.sleep(1.0)
    assert await stack.value_in("b.ipynb", "beside") == 42



async def test_an_admin_may_allow_agent_auto(tmp_path: Path) -> None:
    server = JupyterServerProcess(tmp_path, extra_args=["--HermesJupyter.max_autonomy=agent_auto"]).start()
    try:
        sid = server.new_session(title="trusted")
        chosen = server.request("PATCH", f"sessions/{sid}", {"autonomy": "agent_auto"})
        shown = server.get(f"sessions/{sid}").json()
    finally:
        server.stop()
    assert chosen.status_code == 200, chosen.text
    assert (shown["autonomy"], shown["max_autonomy"]) == ("agent_auto", "agent_auto")
