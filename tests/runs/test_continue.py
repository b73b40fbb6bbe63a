"""Continue an interrupted turn (docs/transcript.md, "Continue"): after every kind of interruption, the demo's
continued `count to N` ends with exactly `1 … N` in the session, each number once."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from hermes_jupyter.agents.base import NotebookBinding
from hermes_jupyter.events import CONTINUATION
from hermes_jupyter.runs.manager import NothingToContinue, RunActive
from hermes_jupyter.sessions.store import Session

from ..hermes_fixtures import Core, Engine, build_core, build_engine

pytestmark = pytest.mark.asyncio

N = 60


def answer_numbers(session: Session) -> list[int]:
    """Every number of the last turn's answer, in order, across its parts (markers left out)."""
    users = [i for i, m in enumerate(session.messages) if m.get("role") == "user"]
    rows = session.messages[users[-1] + 1:]
    text = " ".join(str(m.get("content") or "") for m in rows if m.get("role") == "assistant" and not m.get("_error"))
    return [int(n) for n in re.findall(r"\d+", text)]


async def started(engine: Engine, prompt: str, *, at_least: int = 8, **kwargs: Any) -> Any:
    session = engine.new_session()
    run = await engine.manager.start_run(session.session_id, prompt, **kwargs)
    while run.channel.last_seq < at_least:
        await asyncio.sleep(0.002)
    return session, run


async def continued(engine: Engine, session_id: str) -> Session:
    run, continues = await engine.manager.continue_turn(session_id)
    await run.done.wait()
    saved = engine.core.recovery.get_session(session_id)
    assert engine.manager.run_status(run.run_id)["status"] == "completed"
    first = engine.core.journals.read(session_id, run.run_id).rows[0]
    assert first.event == CONTINUATION and first.payload == {"continues": continues}
    return saved


async def test_continue_after_a_user_stop_counts_on_to_n(hermes_engine: Engine) -> None:
    session, run = await started(hermes_engine, f"count to {N}")
    await hermes_engine.manager.cancel(run.run_id)
    saved = await continued(hermes_engine, session.session_id)
    assert answer_numbers(saved) == list(range(1, N + 1))
    kinds = [m.get("type") if m.get("_error") else m["role"] for m in saved.messages]
    assert kinds == ["user", "assistant", "cancelled", "assistant"]  # the marker stays, no second user row
    assert saved.messages[-1]["_continues"] == run.run_id
    assert [m["role"] for m in saved.context_messages] == ["user", "assistant"]  # one answer for the model
    assert [int(n) for n in re.findall(r"\d+", saved.context_messages[-1]["content"])] == list(range(1, N + 1))


async def test_continue_after_a_kernel_restart_counts_on_to_n(hermes_engine: Engine) -> None:
    binding = NotebookBinding(notebook_path="a.ipynb", cell_id="c1", kernel_id="k-1")
    session, run = await started(hermes_engine, f"count to {N}", notebook=binding)
    assert await hermes_engine.manager.interrupt_bound("k-1") == [run.run_id]
    saved = await continued(hermes_engine, session.session_id)
    assert answer_numbers(saved) == list(range(1, N + 1))
    assert saved.messages[2]["interruption_cause"] == "kernel_restart"


async def test_continue_after_a_shutdown_counts_on_to_n(hermes_core: Core) -> None:
    first = build_engine(hermes_core)
    session, run = await started(first, f"count to {N}")
    assert await first.manager.drain(0.0) == [run.run_id]
    saved = await continued(build_engine(hermes_core), session.session_id)  # the next server
    assert answer_numbers(saved) == list(range(1, N + 1))
    assert saved.messages[2]["interruption_cause"] == "server_shutdown"


async def test_continue_after_a_server_crash_counts_on_to_n(tmp_path: Any) -> None:
    core = build_core(tmp_path)
    session = core.store.create(title="crashed")
    session.pending_user_message, session.active_run_id = f"count to {N}", "crashed_run"
    session.pending_started_at = time.time() - 5
    core.store.save(session)
    for text in ("1", " 2", " 3", " 4"):  # the journal of a run whose server died: no terminal row
        core.append(session.session_id, "crashed_run", "token", {"text": text})
    core.recovery.process_started_at = time.time()
    engine = build_engine(core)
    saved = await continued(engine, session.session_id)
    assert answer_numbers(saved) == list(range(1, N + 1))
    assert saved.messages[2]["interruption_cause"] == "server_restart"
    assert saved.messages[3]["_continues"] == "crashed_run"


async def test_a_continued_run_stopped_again_continues_to_n(hermes_engine: Engine) -> None:
    session, run = await started(hermes_engine, f"count to {N}")
    await hermes_engine.manager.cancel(run.run_id)
    again, continues = await hermes_engine.manager.continue_turn(session.session_id)
    assert continues == run.run_id
    while again.channel.last_seq < 10:
        await asyncio.sleep(0.002)
    await hermes_engine.manager.cancel(again.run_id)
    stopped = hermes_engine.core.store.load(session.session_id)
    kinds = [m.get("type") if m.get("_error") else m["role"] for m in stopped.messages]
    assert kinds == ["user", "assistant", "cancelled", "assistant", "cancelled"]
    numbers = answer_numbers(stopped)
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) < N  # both parts kept, in order
    saved = await continued(hermes_engine, session.session_id)
    assert answer_numbers(saved) == list(range(1, N + 1))
    assert saved.messages[-1]["_continues"] == again.run_id


async def test_continue_is_refused_when_there_is_nothing_to_continue(hermes_engine: Engine) -> None:
    empty = hermes_engine.new_session()
    with pytest.raises(NothingToContinue):
        await hermes_engine.manager.continue_turn(empty.session_id)
    run = await hermes_engine.manager.start_run(empty.session_id, "count to 3")
    await run.done.wait()
    with pytest.raises(NothingToContinue):
        await hermes_engine.manager.continue_turn(empty.session_id)  # the last turn finished normally
    assert hermes_engine.core.store.load(empty.session_id).pending_continues is None


async def test_continue_is_refused_while_a_run_is_active(hermes_engine: Engine) -> None:
    session, run = await started(hermes_engine, "count to 100000")
    with pytest.raises(RunActive):
        await hermes_engine.manager.continue_turn(session.session_id)
    await hermes_engine.manager.cancel(run.run_id)


async def test_the_backend_gets_the_partial_answer_not_a_new_user_message(hermes_engine: Engine) -> None:
    session, run = await started(hermes_engine, f"count to {N}")
    await hermes_engine.manager.cancel(run.run_id)
    partial = hermes_engine.core.store.load(session.session_id).messages[1]["content"]
    hermes_engine.core.store.replace(session.session_id, backend="scripted")
    cont, _ = await hermes_engine.manager.continue_turn(session.session_id)
    await cont.done.wait()
    request = hermes_engine.scripted.requests[-1]
    assert request.continues is not None and request.continues.run_id == run.run_id
    assert request.continues.partial == partial
    assert request.history[-1] == {"role": "assistant", "content": partial}
    saved = hermes_engine.core.store.load(session.session_id)
    assert [m["role"] for m in saved.messages].count("user") == 1


async def test_a_continuations_cell_bundle_shows_the_whole_answer_with_its_marker(hermes_engine: Engine) -> None:
    from hermes_jupyter.markers import CANCEL_CONTENT
    from hermes_jupyter.notebook.recover import run_bundle, sidecar_verdicts

    session, run = await started(hermes_engine, f"count to {N}")
    await hermes_engine.manager.cancel(run.run_id)
    cont, _ = await hermes_engine.manager.continue_turn(session.session_id)
    await cont.done.wait()
    bundle = await hermes_engine.manager.run_bundle(cont.run_id)
    assert bundle["application/vnd.hermes.run+json"]["continues"] == run.run_id
    markdown = bundle["text/markdown"]
    head, marker, tail = markdown.partition(CANCEL_CONTENT.split("\n")[0])  # the marker stays between the parts
    assert marker and head.strip() and tail.strip(), markdown
    body = head + tail.split("<sub>")[0]  # the answer, without the usage footer
    assert [int(n) for n in re.findall(r"\b\d+\b", body)] == list(range(1, N + 1))
    assert hermes_engine.manager.views.settled_message(cont.run_id)["bundle"] == bundle
    _, recovered = run_bundle(hermes_engine.core.journals, session.session_id, cont.run_id, live=False,
                              verdict_of=sidecar_verdicts(hermes_engine.core.state_dir))
    assert recovered == bundle  # jupyter hermes recover writes the same bytes
    plain = await hermes_engine.manager.run_bundle(run.run_id)
    assert "continues" not in plain["application/vnd.hermes.run+json"]  # the interrupted run's own bundle


async def test_the_openai_model_gets_its_partial_answer_as_a_prefix_over_http(hermes_core: Core) -> None:
    from hermes_jupyter.agents.continuing import CONTINUE_INSTRUCTION
    from hermes_jupyter.agents.openai import OpenAIAgent
    from hermes_jupyter.runs.manager import RunManager

    from ..fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer

    with OpenAIStubServer(slow_chunk_delay_s=0.01) as stub:
        agent = OpenAIAgent(base_url=stub.base_url, model=STUB_MODEL, api_key="")
        core = hermes_core
        manager = RunManager(core.store, core.journals, core.recovery, core.live, {"openai": agent},
                             default_backend="openai", cancel_grace_s=0.5)
        session = core.store.create(backend="openai")
        run = await manager.start_run(session.session_id, "count to 400 slowly")
        while run.channel.last_seq < 10:
            await asyncio.sleep(0.005)
        await manager.cancel(run.run_id)
        partial = core.store.load(session.session_id).messages[1]["content"]
        cont, _ = await manager.continue_turn(session.session_id)
        await cont.done.wait()
        await agent.aclose()
    sent = stub.chat_requests()[-1]["messages"]
    assert sent == [
        {"role": "user", "content": "count to 400 slowly"},
        {"role": "assistant", "content": partial},  # its own unfinished answer, once
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    saved = core.store.load(session.session_id)
    assert [m["role"] for m in saved.messages].count("user") == 1
    assert saved.messages[-1]["content"] == "Hello from the stub model." and saved.messages[-1]["_continues"] == run.run_id


async def test_a_left_over_continue_mark_does_not_swallow_a_new_turn(hermes_engine: Engine) -> None:
    session, run = await started(hermes_engine, f"count to {N}")
    await hermes_engine.manager.cancel(run.run_id)
    hermes_engine.core.store.load(session.session_id).pending_continues = run.run_id  # an admission that failed
    new = await hermes_engine.manager.start_run(session.session_id, "count to 3")
    await new.done.wait()
    saved = hermes_engine.core.store.load(session.session_id)
    kinds = [m.get("type") if m.get("_error") else m["role"] for m in saved.messages]
    assert kinds == ["user", "assistant", "cancelled", "user", "assistant"]
    assert "_continues" not in saved.messages[-1] and saved.messages[-1]["content"] == "1 2 3"
    assert saved.pending_continues is None
