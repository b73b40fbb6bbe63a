"""Hermes Agent (the real install) calls our notebook tools on a real kernel, through the one registry.

The runner registers the turn's notebook tools with hermes-agent's own tool registry; a call is
forwarded over the runner protocol and run here by `NotebookTools` (the same code, approvals and
redaction as for `openai`) against a real IPython kernel holding a DataFrame. The scripted OpenAI
stub plays the model: it records what Hermes offers and what the tool result says.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.manager import AsyncKernelManager

from hermes_jupyter.agents.answered import person
from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from hermes_jupyter.agents.tools import NotebookTools
from hermes_jupyter.server.notebook_access import ContentsNotebooks, KernelAccess, ServerNotebookAccess
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink
from tests.notebook.kernels import run_setup

pytest.importorskip("pandas")

KERNEL_ID = "kernel-under-test"
SETUP = ("import pandas as pd\n"
         "sales = pd.DataFrame({'region': ['north', 'south', 'east'], 'units': [3, 5, 8]})\n"
         "api_token = 'sk-live-PLANTEDhermesTOOLkey0123456789'")
INSPECT = 'use the inspect_variable tool with {"name": "sales"}'
LIST = "use the list_variables tool with {}"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


async def _kernel() -> AsyncKernelManager:
    km = AsyncKernelManager(kernel_name="python3")
    await km.start_kernel()
    await run_setup(km.client(), SETUP)
    return km


async def _hermes_turn(hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, km: AsyncKernelManager,
                       message: str, approve: str | None = None) -> tuple[Any, RecordingSink, list[dict[str, Any]]]:
    """One turn of a fresh HermesAgent with the notebook tools of `km`: (result, sink, the model's requests).

    With `approve`, the first approval the turn asks for is answered with that choice, as a person would.
    """
    home = write_hermes_home(tmp_path / "home", stub.base_url, STUB_MODEL)
    before = len(stub.chat_requests())
    result, sink = await _turn(hermes_python, home, km, message, approve)
    return result, sink, stub.chat_requests()[before:]


async def _answer_first_approval(broker: ApprovalBroker, sink: RecordingSink, choice: str) -> None:
    while not (pending := [p for p in sink.payloads("approval") if p["status"] == "pending"]):
        await asyncio.sleep(0.05)
    while not broker.pending("r-tools"):
        await asyncio.sleep(0.01)
    broker.answer("r-tools", pending[0]["approval_id"], choice, person("tester"))


def _agent(hermes_python: Path, home: Path, km: AsyncKernelManager, broker: ApprovalBroker) -> HermesAgent:
    kernels = KernelAccess(lambda kernel_id: km if kernel_id == KERNEL_ID else {}[kernel_id])
    tools = NotebookTools(access=ServerNotebookAccess(ContentsNotebooks(None, str(home)), kernels), broker=broker)
    return HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                       toolsets=["todo"], tools_factory=tools)


def _request(message: str, run_id: str = "r-tools", bound: bool = True) -> TurnRequest:
    notebook = NotebookBinding(notebook_path="sales.ipynb", kernel_id=KERNEL_ID) if bound else None
    return TurnRequest(session_id="s-bound", run_id=run_id, message=message, history=[], notebook=notebook)


async def _turn(hermes_python: Path, home: Path, km: AsyncKernelManager, message: str,
                approve: str | None = None) -> tuple[Any, RecordingSink]:
    broker = ApprovalBroker()
    agent = _agent(hermes_python, home, km, broker)
    sink = RecordingSink()
    request = _request(message)
    person = asyncio.create_task(_answer_first_approval(broker, sink, approve)) if approve else None
    try:
        return await asyncio.wait_for(agent.run_turn(request, sink), 120), sink
    finally:
        if person is not None:
            person.cancel()
        await agent.aclose()


@pytest_asyncio.fixture
async def kernel() -> AsyncIterator[AsyncKernelManager]:
    km = await _kernel()
    yield km
    await km.shutdown_kernel(now=True)


def _tool_messages(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request["messages"] if m.get("role") == "tool"]


@pytest.mark.asyncio
async def test_hermes_is_offered_the_notebook_tools_and_inspects_a_dataframe(
    hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, kernel: AsyncKernelManager
) -> None:
    result, sink, requests = await _hermes_turn(hermes_python, stub, tmp_path, kernel, INSPECT)

    first, second = requests[:2]
    offered = {t["function"]["name"] for t in first.get("tools") or []}
    assert {"read_notebook", "list_variables", "inspect_variable", "run_code", "todo"} <= offered
    (described,) = _tool_messages(second)
    info = json.loads(described)
    assert info["name"] == "sales" and info["type"].endswith("DataFrame") and info["shape"] == [3, 2]
    assert info["columns"] == ["region", "units"] and info["dtypes"]["units"] == "int64"
    assert "north" in info["preview"] and "south" in info["preview"]  # the head of the frame
    # the journal has Hermes' own tool card for it, paired by id, and the answer quotes the result
    (start,), (done,) = sink.payloads("tool"), sink.payloads("tool_complete")
    assert start["name"] == done["name"] == "inspect_variable" and start["tid"] == done["tid"]
    assert start["args"] == {"name": "sales"} and done["is_error"] is False and "region" in done["preview"]
    assert result.outcome == "completed" and "Tool result:" in result.final_text


@pytest.mark.asyncio
async def test_a_tool_result_reaches_hermes_redacted(
    hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, kernel: AsyncKernelManager
) -> None:
    result, sink, requests = await _hermes_turn(hermes_python, stub, tmp_path, kernel, LIST)

    sent = json.dumps(requests)
    assert "api_token" in sent and "sales" in sent
    assert "PLANTEDhermesTOOLkey" not in sent and "PLANTEDhermesTOOLkey" not in json.dumps(sink.events)
    assert result.outcome == "completed"


@pytest.mark.asyncio
async def test_run_code_from_hermes_waits_for_the_same_approval_and_runs_in_the_kernel(
    hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, kernel: AsyncKernelManager
) -> None:
    message = 'use the run_code tool with {"code": "total = int(sales.units.sum())\\nprint(total)"}'
    result, sink, requests = await _hermes_turn(hermes_python, stub, tmp_path, kernel, message, approve="allow_once")

    approvals = sink.payloads("approval")
    assert [a["status"] for a in approvals] == ["pending", "resolved"] and approvals[1]["choice"] == "allow_once"
    assert approvals[0]["kind"] == "code" and "sales.units.sum()" in approvals[0]["command"]
    names = sink.names()
    assert names.index("tool") < names.index("approval") < names.index("tool_complete")  # inside Hermes' tool card
    (ran,) = _tool_messages(requests[1])
    assert ran.startswith("The code ran.") and "[stdout] 16" in ran
    assert result.outcome == "completed"


@pytest.mark.asyncio
async def test_a_session_unbound_between_turns_is_no_longer_offered_the_kernel_tools(
    hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, kernel: AsyncKernelManager
) -> None:
    home = write_hermes_home(tmp_path / "home", stub.base_url, STUB_MODEL)
    agent = _agent(hermes_python, home, kernel, ApprovalBroker())
    try:
        before = len(stub.chat_requests())
        await asyncio.wait_for(agent.run_turn(_request("hello", "r-1"), RecordingSink()), 120)
        bound = stub.chat_requests()[before:]
        await asyncio.wait_for(agent.run_turn(_request("hello again", "r-2", bound=False), RecordingSink()), 120)
        unbound = stub.chat_requests()[before + len(bound):]
    finally:
        await agent.aclose()
    offered = [{t["function"]["name"] for t in r.get("tools") or []} for r in (bound[0], unbound[0])]
    assert {"list_variables", "inspect_variable", "run_code", "read_notebook"} <= offered[0]
    assert "read_notebook" in offered[1] and not offered[1] & {"list_variables", "inspect_variable", "run_code"}
    assert "todo" in offered[1]  # Hermes' own tools stay
