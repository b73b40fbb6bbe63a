"""What every agent backend owes the run engine (docs/agents.md), one suite run against each backend.

The suite drives the real engine (`RunManager` over a temp state dir, as tests/runs does) with one
backend at a time: `demo`, `openai` on the scripted stub server, and `hermes` — the real hermes-agent
install on the same stub (skipped, loudly, when it cannot be installed). Each test states one promise:
a turn streams tokens then completes with the whole text; a cancel mid-stream keeps the partial; a
provider error ends in the error table's plain sentence; usage is the provider's or null, never made
up; a tool call is journaled (`tool`, then `tool_complete` with its result); Continue continues.

A new backend joins by adding one `Subject` builder to `SUBJECTS`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hermes_jupyter import events
from hermes_jupyter.agents.base import NotebookBinding
from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.events import JournalRow
from hermes_jupyter.runs.manager import RunManager
from hermes_jupyter.sessions.store import Session
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer

from ..hermes_fixtures import Core, build_core

pytestmark = pytest.mark.asyncio

#: The stub answers `count to N` with N numbered chunks (`1`, ` 2`, …), `… slowly` paced, `error NNN` refused.
COUNT_TO_5 = "count to 5"
WHOLE_5 = "1 2 3 4 5"
SLOW = 300
#: A turn started from a notebook cell (the demo reaches the notebook tools only then).
NOTEBOOK = NotebookBinding(notebook_path="analysis.ipynb", cell_id="c1", kernel_id="k1")


@dataclass
class Subject:
    """One backend under the contract, with the prompts that make it show each behaviour."""

    name: str
    agent: Any
    slow_prompt: str
    tool_prompt: str
    tool_name: str
    tool_result: str
    #: A prompt its provider refuses (None: the backend has no provider, so nothing to refuse).
    error_prompt: str | None = None
    error_kind: str | None = None
    #: The names the turn's tool registry was called with, when the test can see it (not Hermes' own, in its process).
    tool_calls: list[str] | None = None


@dataclass
class Bench:
    """The engine over a temp state dir, with one backend as the `backend` of every new session."""

    subject: Subject
    core: Core
    manager: RunManager

    def new_session(self) -> Session:
        return self.core.store.create(backend=self.subject.name)

    async def turn(self, prompt: str, notebook: NotebookBinding | None = None) -> tuple[Session, str, list[JournalRow]]:
        """One whole turn: the saved session, the run id, its journal rows."""
        session = self.new_session()
        run = await self.manager.start_run(session.session_id, prompt, notebook=notebook)
        await asyncio.wait_for(run.done.wait(), 120)
        return self.saved(session.session_id), run.run_id, self.rows(session.session_id, run.run_id)

    def rows(self, session_id: str, run_id: str) -> list[JournalRow]:
        return self.core.journals.read(session_id, run_id).rows

    def saved(self, session_id: str) -> Session:
        return self.core.recovery.get_session(session_id)

    async def stopped_mid_stream(self) -> tuple[Session, str, list[JournalRow]]:
        """A slow count cancelled once three tokens are journaled."""
        session = self.new_session()
        run = await self.manager.start_run(session.session_id, self.subject.slow_prompt)
        deadline = time.monotonic() + 60
        while sum(r.event == events.TOKEN for r in self.rows(session.session_id, run.run_id)) < 3:
            assert time.monotonic() < deadline, "fewer than three tokens in 60 s"
            await asyncio.sleep(0.02)
        assert await self.manager.cancel(run.run_id)
        await asyncio.wait_for(run.done.wait(), 30)
        return self.saved(session.session_id), run.run_id, self.rows(session.session_id, run.run_id)


class OneTool:
    """A tool registry with one tool (`list_files`), as the server's registry answers the model."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {
            "name": "list_files", "description": "List the files of a directory.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        }}]

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.calls.append(name)
        return ("data.csv notes.md", False) if name == "list_files" else (f"Unknown tool {name}.", True)


class NotebookTools:
    """The notebook tools the demo calls for `use the notebook` (agents/demo_notebook.py), over a fake kernel."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def schemas(self) -> list[dict[str, Any]]:
        return []

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.calls.append(name)
        if name == "list_variables":
            return "df: DataFrame shape=3x2 = a b", False
        return json.dumps({"type": "DataFrame", "shape": [3, 2], "columns": ["a", "b"]}), False


def demo_subject(_: pytest.FixtureRequest, __: OpenAIStubServer, ___: Path) -> Subject:
    agent, tools = DemoAgent(token_delay=0.02), NotebookTools()
    agent.tools_factory = lambda request, sink: tools
    return Subject(
        "demo", agent, slow_prompt=f"count to {SLOW}",
        tool_prompt="use the notebook", tool_name="list_variables", tool_result="df: DataFrame", tool_calls=tools.calls,
    )


def openai_subject(_: pytest.FixtureRequest, stub: OpenAIStubServer, __: Path) -> Subject:
    tools = OneTool()
    agent = OpenAIAgent(base_url=stub.base_url, model=STUB_MODEL, api_key="sk-test", tools=tools)
    return Subject(
        "openai", agent, slow_prompt=f"count to {SLOW} slowly",
        tool_prompt="use a tool", tool_name="list_files", tool_result="data.csv notes.md", tool_calls=tools.calls,
        error_prompt="error 401", error_kind="authentication",
    )


def hermes_subject(request: pytest.FixtureRequest, stub: OpenAIStubServer, tmp_path: Path) -> Subject:
    from hermes_jupyter.agents.hermes import HermesAgent
    from hermes_jupyter.agents.hermes.process import RUNNER

    python = request.getfixturevalue("hermes_python")  # skips, with the reason, when the install is impossible
    home = write_hermes_home(tmp_path / "hermes_home", stub.base_url, STUB_MODEL)
    agent = HermesAgent(command=[str(python), str(RUNNER)], env={"HERMES_HOME": str(home)}, toolsets=["todo"])
    todo = 'use the todo tool with {"todos": [{"id": "1", "content": "Write tests", "status": "in_progress"}]}'
    return Subject(
        "hermes", agent, slow_prompt=f"count to {SLOW} slowly",
        tool_prompt=todo, tool_name="todo", tool_result="Write tests",
        error_prompt="error 401", error_kind="authentication",
    )


SUBJECTS: dict[str, Callable[[pytest.FixtureRequest, OpenAIStubServer, Path], Subject]] = {
    "demo": demo_subject, "openai": openai_subject, "hermes": hermes_subject,
}


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(slow_chunk_delay_s=0.05) as server:
        yield server


@pytest_asyncio.fixture(params=list(SUBJECTS))
async def bench(request: pytest.FixtureRequest, stub: OpenAIStubServer, tmp_path: Path) -> AsyncIterator[Bench]:
    subject = SUBJECTS[request.param](request, stub, tmp_path)
    core = build_core(tmp_path)
    manager = RunManager(core.store, core.journals, core.recovery, core.live, {subject.name: subject.agent},
                         cancel_grace_s=2.0)
    try:
        yield Bench(subject, core, manager)
    finally:
        await subject.agent.aclose()
        core.journals.close()
        core.store.close()


def tokens(rows: list[JournalRow]) -> str:
    return "".join(r.payload["text"] for r in rows if r.event == events.TOKEN)


def assistant_text(session: Session) -> str:
    """The text of the last turn's answer rows as the session stored them (markers and errors left out)."""
    users = [i for i, m in enumerate(session.messages) if m.get("role") == "user"]
    rows = session.messages[users[-1] + 1:]
    return "".join(str(m.get("content") or "") for m in rows if m.get("role") == "assistant" and not m.get("_error"))


# -- the contract -------------------------------------------------------------------------------------

async def test_a_turn_streams_tokens_then_completes_with_the_whole_text(bench: Bench) -> None:
    saved, run_id, rows = await bench.turn(COUNT_TO_5)

    assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
    assert rows[-1].event == events.DONE and rows[-1].terminal_state == "completed"
    assert [r.event for r in rows].count(events.TOKEN) >= 2, "the answer came in one piece, not streamed"
    assert tokens(rows) == WHOLE_5
    assert bench.manager.run_status(run_id)["status"] == "completed"
    assert assistant_text(saved) == WHOLE_5
    assert saved.pending_user_message is None and saved.active_run_id is None
    assert saved.context_messages[-1] == {**saved.context_messages[-1], "role": "assistant", "content": WHOLE_5}


async def test_a_cancel_mid_stream_ends_cancelled_with_the_partial_kept(bench: Bench) -> None:
    saved, run_id, rows = await bench.stopped_mid_stream()

    assert rows[-1].event == events.CANCEL and rows[-1].terminal_state == "interrupted-by-user"
    assert bench.manager.run_status(run_id)["status"] == "cancelled"
    partial = tokens(rows)
    assert partial.startswith("1 2 3") and len(partial.split()) < SLOW
    assert assistant_text(saved) == partial
    assert saved.messages[-1].get("type") == "cancelled" and saved.pending_user_message is None


async def test_a_provider_error_ends_the_turn_in_a_plain_sentence(bench: Bench) -> None:
    subject = bench.subject
    if subject.error_prompt is None:
        pytest.skip(f"the {subject.name} backend has no provider to refuse a request")
    saved, run_id, rows = await bench.turn(subject.error_prompt)

    assert bench.manager.run_status(run_id)["status"] == "errored"
    last = rows[-1]
    assert last.terminal_state == "errored" and last.payload["type"] == subject.error_kind
    sentence = ERRORS[subject.error_kind].message  # type: ignore[index]
    assert last.payload["message"] == sentence and "401" not in sentence
    assert "401" in last.payload["detail"]  # the status code is for the log and the details, not the sentence
    assert saved.messages[-1]["_error"] is True and sentence in saved.messages[-1]["content"]


async def test_usage_is_the_providers_count(bench: Bench) -> None:
    _, _, rows = await bench.turn(COUNT_TO_5)

    [usage] = [r.payload for r in rows if r.event == events.USAGE]
    assert usage["output_tokens"] == 5  # the stub counts one token a chunk; the demo counts words
    assert isinstance(usage["input_tokens"], int) and usage["input_tokens"] > 0


async def test_usage_of_a_refused_request_is_null_not_zero(bench: Bench) -> None:
    if bench.subject.error_prompt is None:
        pytest.skip(f"the {bench.subject.name} backend has no provider to refuse a request")
    _, _, rows = await bench.turn(bench.subject.error_prompt)

    [usage] = [r.payload for r in rows if r.event == events.USAGE]
    assert usage["input_tokens"] is None and usage["output_tokens"] is None, usage


async def test_a_tool_call_through_the_registry_is_journaled_with_its_result(bench: Bench) -> None:
    subject = bench.subject
    _, run_id, rows = await bench.turn(subject.tool_prompt, NOTEBOOK)

    calls = {r.payload["tid"]: i for i, r in enumerate(rows) if r.event == events.TOOL}
    ends = {r.payload["tid"]: i for i, r in enumerate(rows) if r.event == events.TOOL_COMPLETE}
    assert calls and set(calls) == set(ends) and all(calls[tid] < ends[tid] for tid in calls)
    [(call, done)] = [(rows[calls[tid]].payload, rows[ends[tid]].payload) for tid in calls
                      if rows[calls[tid]].payload["name"] == subject.tool_name]
    assert done["name"] == subject.tool_name and done["is_error"] is False and subject.tool_result in done["preview"]
    if subject.tool_calls is not None:
        assert subject.tool_name in subject.tool_calls, "the tool card was journaled but the registry never called"
    assert rows[-1].event == events.DONE and bench.manager.run_status(run_id)["status"] == "completed"


async def test_continue_continues_the_stopped_turn(bench: Bench) -> None:
    stopped, stopped_run, stopped_rows = await bench.stopped_mid_stream()
    partial = tokens(stopped_rows)

    run, continues = await bench.manager.continue_turn(stopped.session_id)
    await asyncio.wait_for(run.done.wait(), 120)
    rows = bench.rows(stopped.session_id, run.run_id)
    saved = bench.saved(stopped.session_id)

    assert continues == stopped_run
    assert rows[0].event == events.CONTINUATION and rows[0].payload == {"continues": stopped_run}
    assert rows[-1].event == events.DONE and tokens(rows), "the continuation added nothing"
    assert [m["role"] for m in saved.messages if m["role"] == "user"] == ["user"]  # no second user row
    assert saved.messages[-1]["_continues"] == stopped_run
    assert assistant_text(saved).startswith(partial)
    assert not tokens(rows).lstrip().startswith(partial.strip()), "the continuation repeated the kept text"
