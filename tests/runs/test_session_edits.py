"""Session edits the engine makes under the session lock: delete never removes a live run."""

from __future__ import annotations

import asyncio

import pytest

from hermes_jupyter.runs.manager import RunActive
from hermes_jupyter.sessions.store import UnknownSession

from ..hermes_fixtures import Engine

pytestmark = pytest.mark.asyncio


async def test_delete_refuses_a_session_with_a_live_run_and_keeps_its_journal(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 100000")
    with pytest.raises(RunActive):
        await hermes_engine.manager.delete_session(session.session_id)
    assert hermes_engine.core.journals.run_ids(session.session_id) == [run.run_id]
    await hermes_engine.manager.cancel(run.run_id)
    await hermes_engine.manager.delete_session(session.session_id)
    with pytest.raises(UnknownSession):
        hermes_engine.core.store.load(session.session_id, use_cache=False)


async def test_a_run_admitted_while_a_delete_races_is_either_refused_or_blocks_the_delete(hermes_engine: Engine) -> None:
    """Admission and delete take the same lock: never a deleted session with a live run."""
    for _ in range(5):
        session = hermes_engine.new_session()
        results = await asyncio.gather(
            hermes_engine.manager.start_run(session.session_id, "count to 100000"),
            hermes_engine.manager.delete_session(session.session_id),
            return_exceptions=True,
        )
        run, deleted = results
        if isinstance(deleted, RunActive):  # the run was admitted first: it is live and its session kept
            assert not isinstance(run, BaseException)
            assert hermes_engine.core.store.load(session.session_id, use_cache=False).active_stream_id == run.run_id
            await hermes_engine.manager.cancel(run.run_id)
        else:  # the delete went first: the run was never admitted
            assert deleted is None and isinstance(run, UnknownSession)


async def test_rename_saves_under_the_lock(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    renamed = await hermes_engine.manager.rename_session(session.session_id, "Plots")
    assert renamed.title == "Plots"
    assert hermes_engine.core.store.load(session.session_id, use_cache=False).title == "Plots"


async def test_a_run_without_a_binding_of_its_own_gets_the_sessions(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session(backend="scripted", notebook_path="a.ipynb", cell_id="c-1", kernel_id="k-1")
    run = await hermes_engine.manager.start_run(session.session_id, "hi")
    await run.done.wait()
    (request,) = hermes_engine.scripted.requests
    assert request.notebook is not None
    assert (request.notebook.notebook_path, request.notebook.cell_id, request.notebook.kernel_id) == ("a.ipynb", "c-1", "k-1")


async def test_binding_to_another_notebook_forgets_the_old_cell(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session(notebook_path="a.ipynb", cell_id="c-1", kernel_id="k-1")
    same = await hermes_engine.manager.edit_session(session.session_id, {"notebook_path": "a.ipynb", "kernel_id": "k-2"})
    assert (same.cell_id, same.kernel_id) == ("c-1", "k-2")
    moved = await hermes_engine.manager.edit_session(session.session_id, {"notebook_path": "b.ipynb", "kernel_id": "k-3"})
    assert (moved.notebook_path, moved.cell_id, moved.kernel_id) == ("b.ipynb", None, "k-3")
    unbound = await hermes_engine.manager.edit_session(session.session_id, {"notebook_path": None, "kernel_id": None})
    assert (unbound.notebook_path, unbound.cell_id, unbound.kernel_id) == (None, None, None)
