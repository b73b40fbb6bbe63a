"""The `%hermes` / `%%hermes` magic in a real IPython shell, against a real server with the demo agent."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

from hermes_jupyter.api_client import HermesClient, ServerInfo
from hermes_jupyter.kernel.magic import HermesMagics, Request, UsageError, parse, shutdown_hold, watch_shutdown
from hermes_jupyter.kernel.view import LiveCell
from hermes_jupyter.notebook.outputs import RUN_MIME, WIDGET_MIME

from ..notebook.server_process import ServerProcess, server_fixture

server = server_fixture(token_delay=0.0)


class KernelStandIn:
    """What the magic reads from an ipykernel `Kernel`: the parent request and the control handlers."""

    def __init__(self, cell_id: str) -> None:
        self.parent = {"metadata": {"cellId": cell_id}}
        self.shutdowns = 0
        self.control_handlers: dict[str, Any] = {"shutdown_request": self._shutdown}

    def get_parent(self, channel: str = "shell") -> dict[str, Any]:
        return self.parent

    def _shutdown(self, *args: Any) -> None:
        self.shutdowns += 1


@pytest.fixture
def shell(
    server: ServerProcess, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[InteractiveShell]:
    """A real shell with the extension loaded through `%load_ext`, capturing every display and update.

    Each test is its own notebook (JPY_SESSION_NAME), so tests sharing the server share no session.
    """
    monkeypatch.setenv("HERMES_JUPYTER_URL", server.url)
    monkeypatch.setenv("HERMES_JUPYTER_TOKEN", server.token)
    monkeypatch.setenv("JPY_SESSION_NAME", f"work/{request.node.name}.ipynb")
    ip = InteractiveShell.instance()
    ip.display_pub = CapturingDisplayPublisher()
    ip.run_line_magic("load_ext", "hermes_jupyter")
    yield ip
    ip.run_line_magic("unload_ext", "hermes_jupyter")


def magics(ip: InteractiveShell) -> HermesMagics:
    return ip.magics_manager.registry["HermesMagics"]  # type: ignore[no-any-return]


def outputs(ip: InteractiveShell) -> list[dict[str, Any]]:
    return list(ip.display_pub.outputs)


def test_parse_options_and_free_text_prompts() -> None:
    assert parse("", "count to 5\n") == Request("ask", "count to 5")
    assert parse("--new", "hi") == Request("ask", "hi", new=True)
    assert parse("--session  my notes", None) == Request("ask", "notes", session="my")
    assert parse("--session=proj", "what's up?") == Request("ask", "what's up?", session="proj")
    assert parse("what's up, \"doc\"?", None) == Request("ask", "what's up, \"doc\"?")
    assert parse("sessions", None).action == "sessions"
    assert parse("cancel", None).action == "cancel"
    assert parse("", "sessions").action == "ask"  # a cell body is always a prompt
    assert parse("--model demo-large", "hi") == Request("ask", "hi", model="demo-large")
    assert parse("--new --model=m1", "hi") == Request("ask", "hi", new=True, model="m1")
    for bad in [("", ""), ("--new --session x", "hi"), ("--bogus", "hi"), ("--session", "hi"), ("extra", "hi"),
                ("--model", "hi")]:
        with pytest.raises(UsageError):
            parse(*bad)


def test_cell_magic_streams_into_one_display_then_goes_static(shell: InteractiveShell) -> None:
    shell.run_cell_magic("hermes", "", "count to 300")
    outs = outputs(shell)
    assert not outs[0]["update"] and all(o["update"] for o in outs[1:])
    assert len({o["transient"]["display_id"] for o in outs}) == 1
    first, last = outs[0]["data"], outs[-1]["data"]
    assert first[RUN_MIME]["status"] == "running" and WIDGET_MIME in first
    assert last[RUN_MIME]["status"] == "completed" and WIDGET_MIME not in last
    assert last["text/markdown"].startswith(" ".join(str(i) for i in range(1, 301)) + "\n")
    cell = magics(shell).last_cell
    assert cell is not None and cell.widget is not None and cell.widget.comm is None  # closed at the end


def test_session_is_reused_per_notebook_and_survives_a_kernel_restart(shell: InteractiveShell, server: ServerProcess) -> None:
    shell.run_line_magic("hermes", "hello")
    shell.run_line_magic("hermes", "count to 3")
    refs = [o["data"][RUN_MIME] for o in outputs(shell) if not o["update"]]
    assert refs[0]["session_id"] == refs[1]["session_id"]
    session = server.api("GET", f"sessions/{refs[0]['session_id']}")
    assert session["notebook_path"] == "work/test_session_is_reused_per_notebook_and_survives_a_kernel_restart.ipynb"
    assert len([m for m in session["messages"] if m["role"] == "user"]) == 2
    # A new kernel (new magics object) finds the notebook's newest session on the server.
    fresh = HermesMagics(shell)
    fresh.hermes("count to 2")
    fresh.close()
    assert fresh.session_id == refs[0]["session_id"]


def test_after_a_kernel_restart_the_magic_rejoins_the_session_bound_to_its_kernel(
    shell: InteractiveShell, server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hermes_jupyter.kernel.magic._kernel_id", lambda: "kernel-bound")
    notebook = f"work/{test_after_a_kernel_restart_the_magic_rejoins_the_session_bound_to_its_kernel.__name__}.ipynb"
    shell.run_line_magic("hermes", "count to 2")
    bound = magics(shell).session_id
    # newer sessions of the same notebook: one bound to another kernel, one to none (a sidebar chat about it)
    server.new_session(notebook_path=notebook, kernel_id="kernel-other")
    server.new_session(notebook_path=notebook)
    restarted = HermesMagics(shell)  # a restarted kernel keeps its id but has a fresh magic
    restarted.hermes("count to 2")
    restarted.close()
    assert restarted.session_id == bound
    # the sidebar binds another session to this notebook and kernel: the next restart joins that one
    chosen = server.new_session()
    server.api("PATCH", f"sessions/{chosen}", json={"notebook_path": notebook, "kernel_id": "kernel-bound"})
    again = HermesMagics(shell)
    again.hermes("count to 2")
    again.close()
    assert again.session_id == chosen
    assert server.api("GET", f"sessions/{chosen}")["messages"][-1]["content"] == "1 2"


def test_new_and_named_sessions(shell: InteractiveShell, server: ServerProcess) -> None:
    shell.run_line_magic("hermes", "hi")
    first = magics(shell).session_id
    shell.run_cell_magic("hermes", "--new", "hi again")
    second = magics(shell).session_id
    assert second != first
    shell.run_cell_magic("hermes", "--session Project X", "hi")
    named = magics(shell).session_id
    shell.run_cell_magic("hermes", "--session=Project", "count to 2")  # "Project X" is not "Project"
    assert magics(shell).session_id != named
    shell.run_cell_magic("hermes", "--session Project", "count to 2")
    titles = {s["session_id"]: s["title"] for s in server.api("GET", "sessions")}
    assert titles[magics(shell).session_id] == "Project"


def test_run_records_cell_and_kernel(shell: InteractiveShell, server: ServerProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "kernel", KernelStandIn("cell-42"), raising=False)
    monkeypatch.setattr("hermes_jupyter.kernel.magic._kernel_id", lambda: "kernel-abc")
    shell.run_line_magic("hermes", "count to 2")
    session = server.api("GET", f"sessions/{magics(shell).session_id}")
    assert (session["cell_id"], session["kernel_id"]) == ("cell-42", "kernel-abc")


def test_sessions_and_cancel_commands(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("hermes", "count to 2")
    shell.run_line_magic("hermes", "sessions")
    table = outputs(shell)[-1]["data"]["text/markdown"]
    assert f"▶ | `{magics(shell).session_id}`" in table
    shell.run_line_magic("hermes", "cancel")
    assert "nothing is running" in capsys.readouterr().out


def test_usage_and_server_errors_are_printed(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("hermes", "")
    assert "%%hermes [--session NAME | --new]" in capsys.readouterr().out
    broken = HermesMagics(shell, client_factory=lambda: HermesClient(ServerInfo(magics(shell).client.server.url, "wrong", "test")))
    broken.hermes("hi")
    broken.close()
    assert "HTTP 403" in capsys.readouterr().out


def test_shutdown_watch_wraps_the_control_handler_once() -> None:
    kernel = KernelStandIn("c")
    event = watch_shutdown(kernel)
    assert watch_shutdown(kernel) is event
    assert not event.is_set()
    asyncio.run(kernel.control_handlers["shutdown_request"]("stream", [], {}))
    assert event.is_set() and kernel.shutdowns == 1
    assert not watch_shutdown(object()).is_set()
    assert isinstance(watch_shutdown(None), threading.Event)


def test_a_shutdown_waits_for_the_cell_following_a_run_to_end_it() -> None:
    """A headless frontend saves what the cell shows when its kernel goes: the cell ends the run first."""
    kernel = KernelStandIn("c")
    event = watch_shutdown(kernel)

    async def run() -> list[int]:
        seen: list[int] = []
        with shutdown_hold(event):
            shutdown = asyncio.ensure_future(kernel.control_handlers["shutdown_request"]("stream", [], {}))
            for _ in range(5):
                await asyncio.sleep(0.03)
            seen.append(kernel.shutdowns)  # held while the cell follows its run
        await shutdown
        seen.append(kernel.shutdowns)
        return seen

    assert asyncio.run(run()) == [0, 1]
    assert event.is_set()


def test_sessions_started_with_new_are_titled_by_their_prompts(shell: InteractiveShell, server: ServerProcess) -> None:
    # Run All over three `%%hermes --new` cells: three sessions of one notebook, told apart by title.
    prompts = ["count to 2", "use a tool", "hello"]
    sids = []
    for prompt in prompts:
        shell.run_cell_magic("hermes", "--new", prompt)
        sids.append(magics(shell).session_id)
    rows = {s["session_id"]: s for s in server.api("GET", "sessions")}
    assert [rows[sid]["title"] for sid in sids] == prompts
    assert {rows[sid]["subtitle"] for sid in sids} == {rows[sids[0]]["notebook_path"]}


def test_model_option_switches_the_sessions_model_from_this_turn_on_and_the_footer_names_it(
    shell: InteractiveShell, server: ServerProcess
) -> None:
    shell.run_cell_magic("hermes", "--model demo-large", "count to 2")
    sid = magics(shell).session_id
    assert server.api("GET", f"sessions/{sid}")["model"] == "demo-large"
    assert "demo-large · " in outputs(shell)[-1]["data"]["text/markdown"]  # the usage footer
    shell.run_cell_magic("hermes", "", "count to 3")  # PATCH semantics: later turns keep the model
    assert "demo-large · " in outputs(shell)[-1]["data"]["text/markdown"]
    shell.run_cell_magic("hermes", "--model demo", "count to 2")
    assert server.api("GET", f"sessions/{sid}")["model"] == "demo"


def test_a_cell_sent_while_a_turn_runs_shows_queued_then_streams_its_answer(
    shell: InteractiveShell, server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell.run_line_magic("hermes", "count to 2")
    sid = magics(shell).session_id
    running = server.api("POST", f"sessions/{sid}/runs", json={"message": "count to 1000000"})  # e.g. the sidebar
    stop = threading.Timer(1.0, lambda: server.api("POST", f"runs/{running['run_id']}/cancel"))
    queued_views: list[Any] = []
    show = LiveCell.show

    def spy(cell: LiveCell, *, queued: bool = False) -> None:
        show(cell, queued=queued)
        queued_views.append(cell.widget.state.get("queued") if cell.widget is not None else queued)

    monkeypatch.setattr(LiveCell, "show", spy)
    stop.start()
    try:
        shell.run_cell_magic("hermes", "", "count to 3")
    finally:
        stop.cancel()
    cell = magics(shell).last_cell
    assert queued_views == [True] and cell is not None
    mine = [o["data"] for o in outputs(shell) if o["data"].get(RUN_MIME, {}).get("run_id") == cell.output.run_id]
    assert mine[-1][RUN_MIME]["status"] == "completed" and mine[-1]["text/markdown"].startswith("1 2 3")
    session = server.api("GET", f"sessions/{sid}")
    users = [m["content"] for m in session["messages"] if m["role"] == "user"]
    assert users[-2:] == ["count to 1000000", "count to 3"]  # answered after the turn it waited for
