"""Two collaborators on one notebook: one output per run in both browsers and on disk, with
real-time collaboration (jupyter-collaboration) on and off.

Who writes a run's output (docs/collaboration.md): the kernel's display while it follows the
run; a run the kernel could not finish (restart, a notebook saved mid-run) is finished by the
server through the room's shared document when collaboration is on, by each browser in its own
model when it is off. Each scene prints its counts (browser A, browser B, saved file).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import nbformat
import pytest

from ..server_process import JupyterServerProcess
from .lab_page import RUN_OUTPUT, SELECTED_SESSION, LabPage, counting, is_count_prefix

RUN_MIME = "application/vnd.hermes.run+json"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
#: Long enough for the slowest writer (the browsers wait 3 s for the kernel, the server 2 s more).
SETTLE_S = 8.0

# Hermes outputs of the current notebook's model (what a save writes), per cell index.
_MODEL_OUTPUTS_JS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const counts = [];
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    const outputs = cell.outputs;
    let n = 0;
    for (let j = 0; outputs && j < outputs.length; j++) {
      if (outputs.get(j).data['application/vnd.hermes.run+json']) n++;
    }
    counts.push(n);
  }
  return counts;
}"""

# Record every (follow state, word count) the page's hermes output shows, so a test can check the
# live view itself: a collaborator's view must never go back to loading nor show fewer words.
_RECORD_RUN_VIEW_JS = """() => {
  const seen = window.__hermesRunView = [];
  const read = () => {
    const out = document.querySelector('[data-testid=hermes-run-output]');
    if (!out || !out.dataset.followState) return;
    const msg = out.querySelector('.jp-HermesMessage[data-role=assistant] .jp-HermesMessage-content');
    const text = msg ? msg.innerText.trim() : '';
    const entry = [out.dataset.followState, text ? text.split(/\\s+/).length : 0];
    const last = seen[seen.length - 1];
    if (!last || last[0] !== entry[0] || last[1] !== entry[1]) seen.push(entry);
  };
  new MutationObserver(read).observe(document.body, {subtree: true, childList: true, characterData: true});
  read();
}"""


@pytest.fixture(scope="module", params=["collaboration", "alone"])
def team_server(request: pytest.FixtureRequest, make_lab_server: Callable[..., JupyterServerProcess]) -> Iterator[Any]:
    """One server per mode: jupyter-collaboration's rooms on, or off (`YDocExtension.disable_rtc`)."""
    collaboration = request.param == "collaboration"
    yield make_lab_server(f"team-{request.param}", collaboration=collaboration), collaboration


@pytest.fixture
def team(team_server: Any, make_lab: Callable[[JupyterServerProcess], LabPage]) -> tuple[LabPage, LabPage, bool]:
    server, collaboration = team_server
    return make_lab(server), make_lab(server), collaboration


def write_notebook(server: JupyterServerProcess, name: str, prompt: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"), nbformat.v4.new_code_cell(f"%%hermes\n{prompt}")]
    nb.metadata["kernelspec"] = KERNELSPEC
    nbformat.write(nb, server.notebooks / name)


def model_outputs(lab: LabPage) -> list[int]:
    return list(lab.page.evaluate(_MODEL_OUTPUTS_JS))


def saved_outputs(server: JupyterServerProcess, name: str) -> list[dict[str, Any]]:
    nb = nbformat.read(server.notebooks / name, as_version=4)
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if RUN_MIME in o.get("data", {})]


def wait_saved(server: JupyterServerProcess, name: str, status: str, timeout_s: float = 30) -> list[dict[str, Any]]:
    """The saved file's hermes outputs once one has `status` (the room saves by itself after a change)."""
    deadline = time.monotonic() + timeout_s
    while True:
        outputs = saved_outputs(server, name)
        if any(o["data"][RUN_MIME]["status"] == status for o in outputs):
            return outputs
        assert time.monotonic() < deadline, f"{name} never saved a {status} output: {outputs}"
        time.sleep(0.2)


def open_both(a: LabPage, b: LabPage, name: str, collaboration: bool) -> None:
    """Both browsers on the notebook; its model is the room's shared document exactly when collaboration is on."""
    for lab in (a, b):
        lab.open_notebook(name)
        shared = lab.page.evaluate("window.jupyterapp.shell.currentWidget.context.model.collaborative")
        assert shared is collaboration


def run_sockets(lab: LabPage, run_id: str) -> int:
    """How many WebSockets the page opened on the run's stream."""
    return int(lab.page.evaluate(
        "(id) => (window.__hermesSockets || []).filter(ws => ws.url.includes('/hermes/api/runs/' + id + '/')).length",
        run_id,
    ))


def save_and_count(a: LabPage, b: LabPage, name: str, status: str, collaboration: bool) -> tuple[int, int, int]:
    """(A's outputs, B's outputs, the saved file's outputs) once every writer had its chance."""
    time.sleep(SETTLE_S)
    a.save_notebook()
    saved = wait_saved(a.server, name, status)
    if not collaboration:  # B keeps the model it loaded: it sees the run once it opens the saved file
        b.open_notebook(name, kernel=True)
        b.wait_run_output_status(status, timeout_s=60)
    counts = (sum(model_outputs(a)), sum(model_outputs(b)), len(saved))
    print(f"\n[{'collaboration' if collaboration else 'alone'}] {name}: outputs A={counts[0]} B={counts[1]} "
          f"saved={counts[2]}")
    return counts


def assert_monotonic(lab: LabPage) -> None:
    seen = [tuple(x) for x in lab.page.evaluate("window.__hermesRunView || []")]
    states = [state for state, _ in seen]
    assert "live" in states, seen
    after_live = states[states.index("live"):]
    assert "loading" not in after_live, f"the view went back to loading: {seen}"
    words = [n for _, n in seen]
    assert words == sorted(words), f"the view showed fewer words than before: {seen}"


def test_a_finished_run_leaves_one_output_everywhere(team: tuple[LabPage, LabPage, bool]) -> None:
    a, b, collaboration = team
    name = "team-finish.ipynb"
    write_notebook(a.server, name, "count to 300")
    open_both(a, b, name, collaboration)
    b.page.evaluate(_RECORD_RUN_VIEW_JS)
    a.page.evaluate(_RECORD_RUN_VIEW_JS)
    a.run_all_cells()
    a.wait_run_output_streaming(tokens=20)
    if collaboration:  # the collaborator follows the run live, from the journal
        b.wait_run_output_streaming(tokens=20)
    # The sidebar of the browser that did not run the cell selects the notebook's session and streams it.
    b.open_sidebar()
    sid = b.page.wait_for_selector(SELECTED_SESSION).get_attribute("data-session-id")
    assert sid == next(s["session_id"] for s in a.server.get("sessions").json() if s.get("notebook_path") == name)
    a.wait_run_output_status("completed")
    if collaboration:
        b.wait_run_output_status("completed")
        assert_monotonic(b)
    assert_monotonic(a)

    assert save_and_count(a, b, name, "completed", collaboration) == (1, 1, 1)
    (output,) = saved_outputs(a.server, name)
    run = output["data"][RUN_MIME]
    assert dict(output["data"]) == a.server.get(f"runs/{run['run_id']}/bundle").json()
    assert output["data"]["text/markdown"].startswith(counting(300))
    assert b.run_output_text() == counting(300)
    if collaboration:  # one stream for the cell's views, one for the sidebar: not one per display update
        sockets = run_sockets(b, run["run_id"])
        print(f"[collaboration] B opened {sockets} WebSockets on the run")
        assert sockets <= 2


def test_a_kernel_restart_mid_stream_leaves_one_interrupted_output(team: tuple[LabPage, LabPage, bool]) -> None:
    a, b, collaboration = team
    name = "team-restart.ipynb"
    write_notebook(a.server, name, "count to 2000")
    open_both(a, b, name, collaboration)
    a.run_all_cells()
    a.wait_run_output_streaming(tokens=30)
    if collaboration:
        b.wait_run_output_streaming(tokens=30)
    a.restart_kernel()
    a.wait_run_output_status("interrupted")
    if collaboration:
        b.wait_run_output_status("interrupted")

    assert save_and_count(a, b, name, "interrupted", collaboration) == (1, 1, 1)
    (output,) = saved_outputs(a.server, name)
    assert output["data"][RUN_MIME]["status"] == "interrupted"
    assert "application/vnd.jupyter.widget-view+json" not in output["data"]
    partial = b.run_output_text()
    assert is_count_prefix(partial) and output["data"]["text/markdown"].startswith(partial)


def test_server_side_recovery_with_the_notebook_open_keeps_collaborators_edits(team: tuple[LabPage, LabPage, bool]) -> None:
    # A run cut off while nobody watched (its kernel shut down), saved mid-run in a notebook that
    # both collaborators then have open, each with the kernel. POST notebooks/recover goes through
    # the room (collaboration on) or refuses to rewrite a file open with a kernel (off); either
    # way A's typing meanwhile is kept, and the run has one output everywhere.
    a, b, collaboration = team
    server = a.server
    name = "team-recover.ipynb"
    kernel = server.jupyter("POST", "api/kernels", {"name": "python3"}).json()
    sid = server.new_session(notebook_path=name)
    run_id = server.start_run(sid, "count to 100000", kernel_id=kernel["id"], notebook_path=name)
    deadline = time.monotonic() + 30
    while server.get(f"runs/{run_id}").json()["last_seq"] < 20:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert server.jupyter("DELETE", f"api/kernels/{kernel['id']}").status_code == 204
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    typing = nbformat.v4.new_code_cell("# notes")
    cell = nbformat.v4.new_code_cell("%%hermes\ncount to 100000")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        RUN_MIME: {"run_id": run_id, "session_id": sid, "seq": 2, "status": "running"},
        "text/markdown": "1 2", "text/plain": "1 2",
    })]
    nb.cells = [typing, cell]
    nbformat.write(nb, server.notebooks / name)

    open_both(a, b, name, collaboration)
    a.page.click(".jp-Cell:first-child .jp-InputArea-editor")
    a.page.keyboard.press("End")
    a.page.keyboard.type(" typed meanwhile", delay=20)
    answer = server.post("notebooks/recover", {"path": name})
    if collaboration:
        assert answer.status_code == 200 and answer.json()["shared"] is True, answer.text
    else:
        assert answer.status_code == 409, answer.text
        message = answer.json()["message"]
        assert "left untouched" in message and "HTTP" not in message and "409" not in message
    a.wait_run_output_status("interrupted")
    b.wait_run_output_status("interrupted")

    assert save_and_count(a, b, name, "interrupted", collaboration) == (1, 1, 1)
    saved = nbformat.read(server.notebooks / name, as_version=4)
    assert saved.cells[0].source == "# notes typed meanwhile"
    if collaboration:  # the collaborator sees the typing too: nothing was written under the room
        text = b.page.locator(".jp-Cell:first-child .jp-InputArea-editor").inner_text()
        assert "typed meanwhile" in text, text
    (output,) = saved_outputs(server, name)
    assert json.dumps(dict(output["data"]), sort_keys=True) == json.dumps(
        server.get(f"runs/{run_id}/bundle").json(), sort_keys=True
    )
