"""The notebook tools over a real contents manager and a real IPython kernel (jupyter_client).

Reading (cells, outputs, variables) needs no approval; `run_code` runs only after an
`allow_once` through the broker, and a deny or an expired approval runs nothing.
"""

from __future__ import annotations

import asyncio
import json
import queue
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import nbformat.v4
import pytest
import pytest_asyncio
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from hermes_jupyter.agents.answered import person
from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.tools import (
    DENIED,
    CodeRun,
    NotebookToolRegistry,
    NotebookTools,
    format_code_run,
    format_notebook,
)
from hermes_jupyter.agents.tools_registry import ToolRegistry
from hermes_jupyter.redact import Redactor
from hermes_jupyter.server.notebook_access import (
    ContentsNotebooks,
    KernelAccess,
    ServerNotebookAccess,
)

from ..fakes.recording_sink import RecordingSink
from ..notebook.kernels import started_kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")

# nbformat is untyped; these aliases keep mypy strict quiet without scattering ignores.
new_notebook: Callable[..., Any] = nbformat.v4.new_notebook
new_code_cell: Callable[..., Any] = nbformat.v4.new_code_cell
new_markdown_cell: Callable[..., Any] = nbformat.v4.new_markdown_cell
new_output: Callable[..., Any] = nbformat.v4.new_output
write_notebook: Callable[..., Any] = nbformat.write


def _notebook() -> Any:
    cells = [
        new_markdown_cell("# Sales analysis", id="intro"),
        new_code_cell("import math\nprint('loaded')", id="load", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="loaded\n")]),
        new_code_cell("total = 6 * 7\ntotal", id="total", execution_count=2,
                      outputs=[new_output("execute_result", data={"text/plain": "42"}, execution_count=2)]),
        new_code_cell("plot()", id="plot", execution_count=3, outputs=[
            new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
            new_output("error", ename="NameError", evalue="name 'plot' is not defined",
                       traceback=["\x1b[0;31mNameError\x1b[0m: name 'plot' is not defined"]),
        ]),
    ]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "work").mkdir(parents=True)
    write_notebook(_notebook(), root / "work" / "sales.ipynb")
    outside = tmp_path / "outside"
    outside.mkdir()
    write_notebook(new_notebook(cells=[new_code_cell("SECRET = 'do not read'")]), outside / "secret.ipynb")
    (root / "work" / "leak.ipynb").symlink_to(outside / "secret.ipynb")
    return root


def _tools(root: Path, kernels: dict[str, AsyncKernelManager] | None = None, **traits: Any) -> NotebookTools:
    contents = ContentsNotebooks(AsyncLargeFileManager(root_dir=str(root)), str(root))
    access = ServerNotebookAccess(contents, KernelAccess((kernels or {}).__getitem__))
    return NotebookTools(access=access, broker=ApprovalBroker(), **traits)


def _registry(tools: NotebookTools, sink: RecordingSink, *, kernel_id: str | None = None,
              notebook_path: str | None = "work/sales.ipynb", run_id: str = "run-1") -> NotebookToolRegistry:
    binding = NotebookBinding(notebook_path=notebook_path, cell_id="total", kernel_id=kernel_id)
    request = TurnRequest(session_id="s1", run_id=run_id, message="hi", history=[], notebook=binding)
    return tools(request, sink)


# ---- reading notebooks (contents manager, confined) ----------------------------------------


async def test_read_notebook_shows_cells_and_outputs_of_the_bound_notebook(root: Path) -> None:
    registry = _registry(_tools(root), RecordingSink())
    assert isinstance(registry, ToolRegistry)
    text, is_error = await registry.call("read_notebook", {})
    assert not is_error
    assert text.startswith("Notebook work/sales.ipynb: 4 cells, kernel python3.")
    assert "--- cell 0 [markdown] id=intro\n# Sales analysis" in text
    assert "[stdout] loaded" in text
    assert "--- cell 2 [code] id=total In[2] (the cell this conversation was started from)" in text
    assert "[execute_result] 42" in text
    assert "[display_data] <Figure> (an image: image/png)" in text
    assert "[error] NameError: name 'plot' is not defined" in text and "\x1b[" not in text
    assert "iVBORw0KGgo" not in text


async def test_read_notebook_pages_when_the_result_would_be_too_long(root: Path) -> None:
    registry = _registry(_tools(root, max_result_chars=150), RecordingSink())
    text, _ = await registry.call("read_notebook", {"path": "work/sales.ipynb"})
    assert "more cells not shown; call read_notebook with start=" in text
    start = int(text.rsplit("start=", 1)[1].rstrip("."))
    rest, _ = await registry.call("read_notebook", {"path": "work/sales.ipynb", "start": start})
    assert f"Showing from cell {start}." in rest and f"--- cell {start} " in rest


@pytest.mark.parametrize("path", ["../outside/secret.ipynb", "work/leak.ipynb", "/etc/hostname", "work/../../x.ipynb"])
async def test_read_notebook_refuses_paths_outside_the_root(root: Path, path: str) -> None:
    registry = _registry(_tools(root), RecordingSink(), notebook_path=None)  # unbound: any notebook in the root
    text, is_error = await registry.call("read_notebook", {"path": path})
    assert is_error
    assert "SECRET" not in text
    assert text.startswith(("Refused", "Cannot read")), text


async def test_a_bound_conversation_reads_only_its_own_notebook(root: Path) -> None:
    """A session bound to a notebook (or to a kernel alone) cannot name another notebook (docs/agent-reach.md)."""
    other = root / "work" / "other.ipynb"
    other.write_bytes((root / "work" / "sales.ipynb").read_bytes())
    bound = _registry(_tools(root), RecordingSink(), kernel_id="k1")
    text, is_error = await bound.call("read_notebook", {"path": "work/other.ipynb"})
    assert is_error and "only this conversation's notebook (work/sales.ipynb)" in text and "Sales" not in text
    same, is_error = await bound.call("read_notebook", {"path": "/work/./sales.ipynb"})
    assert not is_error and same.startswith("Notebook work/sales.ipynb")
    kernel_only = _registry(_tools(root), RecordingSink(), kernel_id="k1", notebook_path=None)
    text, is_error = await kernel_only.call("read_notebook", {"path": "work/sales.ipynb"})
    assert is_error and "may read no notebook" in text
    unbound = _registry(_tools(root), RecordingSink(), notebook_path=None)
    text, is_error = await unbound.call("read_notebook", {"path": "work/other.ipynb"})
    assert not is_error and text.startswith("Notebook work/other.ipynb")


async def test_read_notebook_reports_missing_and_non_notebook_paths(root: Path) -> None:
    (root / "notes.txt").write_text("plain")
    registry = _registry(_tools(root), RecordingSink(), notebook_path=None)
    missing, is_error = await registry.call("read_notebook", {"path": "work/nope.ipynb"})
    assert is_error and "Cannot read work/nope.ipynb" in missing
    text, is_error = await registry.call("read_notebook", {"path": "notes.txt"})
    assert is_error and "not a notebook" in text
    text, is_error = await registry.call("read_notebook", {})
    assert is_error and "needs a notebook path" in text


async def test_schemas_offer_kernel_tools_only_with_a_bound_kernel(root: Path) -> None:
    tools = _tools(root)
    unbound = _registry(tools, RecordingSink(), notebook_path=None)
    assert [s["function"]["name"] for s in unbound.schemas()] == ["read_notebook"]
    assert unbound.schemas()[0]["function"]["parameters"]["required"] == ["path"]
    bound = _registry(tools, RecordingSink(), kernel_id="k1")
    assert [s["function"]["name"] for s in bound.schemas()] == [
        "read_notebook", "list_variables", "inspect_variable", "run_code", "propose_cell",
        "insert_cell", "edit_cell", "delete_cell"]  # Propose, the default autonomy: no run_cell
    assert bound.schemas()[0]["function"]["parameters"]["required"] == []


async def test_kernel_tools_without_a_bound_kernel_are_errors_and_ask_nothing(root: Path) -> None:
    sink = RecordingSink()
    registry = _registry(_tools(root), sink)
    for name, args in (("list_variables", {}), ("run_code", {"code": "x = 1"})):
        text, is_error = await registry.call(name, args)
        assert is_error and "not bound to one" in text
    assert sink.events == []
    assert await registry.call("rm_rf", {}) == ("Unknown tool 'rm_rf'.", True)


async def test_a_kernel_that_is_not_running_is_reported(root: Path) -> None:
    registry = _registry(_tools(root), RecordingSink(), kernel_id="gone")
    text, is_error = await registry.call("list_variables", {})
    assert is_error and "(gone) is not running" in text


async def test_formatting_is_bounded() -> None:
    big = new_notebook(cells=[new_code_cell("x" * 5000, outputs=[new_output("stream", name="stdout", text="y" * 5000)])])
    text = format_notebook("big.ipynb", big, max_chars=3000, max_piece_chars=100)
    assert len(text) < 600 and "[4900 more characters]" in text
    run = CodeRun("ok", [new_output("stream", name="stdout", text="z" * 300)])
    assert "[200 more characters]" in format_code_run(run, 5, limit=100)


# ---- the kernel: one real IPython kernel for the tests below -------------------------------


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def kernel() -> AsyncIterator[AsyncKernelManager]:
    async with started_kernel(AsyncKernelManager(kernel_name="python3")) as km:
        yield km


@pytest.fixture
def kernel_tools(root: Path, kernel: AsyncKernelManager) -> Iterator[NotebookTools]:
    yield _tools(root, {"k1": kernel}, approval_timeout=10, run_timeout=20)


async def _answer(tools: NotebookTools, run_id: str, choice: str) -> None:
    """Answer the first approval the run asks for, as the HTTP route would."""
    while not tools.broker.pending(run_id):
        await asyncio.sleep(0.01)
    (request,) = tools.broker.pending(run_id)
    tools.broker.answer(run_id, request.approval_id, choice, person("tester"))


async def _run(tools: NotebookTools, code: str, choice: str, run_id: str) -> tuple[str, bool, RecordingSink]:
    sink = RecordingSink()
    registry = _registry(tools, sink, kernel_id="k1", run_id=run_id)
    call = asyncio.ensure_future(registry.call("run_code", {"code": code}))
    await _answer(tools, run_id, choice)
    text, is_error = await call
    return text, is_error, sink


async def test_denied_code_never_runs(kernel_tools: NotebookTools) -> None:
    text, is_error, sink = await _run(kernel_tools, "denied_marker = 1\nprint('ran')", "deny", "run-deny")
    assert (text, is_error) == (DENIED, True)
    pending, resolved = sink.payloads("approval")
    assert pending["status"] == "pending" and pending["kind"] == "code"
    assert pending["command"] == "denied_marker = 1\nprint('ran')"
    assert resolved["status"] == "resolved" and resolved["choice"] == "deny"
    listing, _ = await _registry(kernel_tools, RecordingSink(), kernel_id="k1").call("list_variables", {})
    assert "denied_marker" not in listing


async def test_approved_code_runs_in_the_kernel_and_its_outputs_come_back(kernel_tools: NotebookTools) -> None:
    code = "approved_total = sum(range(10))\nprint('side effect')\napproved_total * 2"
    text, is_error, sink = await _run(kernel_tools, code, "allow_once", "run-allow")
    assert not is_error
    assert text == "The code ran.\n[stdout] side effect\n[execute_result] 90"
    assert [p["status"] for p in sink.payloads("approval")] == ["pending", "resolved"]
    registry = _registry(kernel_tools, RecordingSink(), kernel_id="k1")
    listing, _ = await registry.call("list_variables", {})
    assert "approved_total: int = 45" in listing


async def test_an_unanswered_approval_expires_as_a_deny_and_runs_nothing(root: Path, kernel: AsyncKernelManager) -> None:
    tools = _tools(root, {"k1": kernel}, approval_timeout=0.1)
    sink = RecordingSink()
    text, is_error = await _registry(tools, sink, kernel_id="k1").call("run_code", {"code": "expired_marker = 1"})
    assert (text, is_error) == (DENIED, True)
    assert sink.payloads("approval")[-1]["reason"] == "expired"
    listing, _ = await _registry(tools, RecordingSink(), kernel_id="k1").call("list_variables", {})
    assert "expired_marker" not in listing


async def test_code_that_raises_is_an_error_result(kernel_tools: NotebookTools) -> None:
    text, is_error, _ = await _run(kernel_tools, "1 / 0", "allow_once", "run-raise")
    assert is_error
    assert text.startswith("The code raised an error.\n[error] ZeroDivisionError: division by zero")


async def test_code_past_the_time_limit_is_interrupted_and_the_kernel_stays_usable(
    root: Path, kernel: AsyncKernelManager
) -> None:
    tools = _tools(root, {"k1": kernel}, run_timeout=1.5)
    code = "import time\nprint('start', flush=True)\nfor _ in range(600):\n    time.sleep(0.05)\nslow_marker = 1"
    text, is_error, _ = await _run(tools, code, "allow_once", "run-slow")
    assert is_error
    assert text.startswith("The code was still running after 1.5 s and was interrupted.")
    assert "[stdout] start" in text and "KeyboardInterrupt" in text
    listing, _ = await _registry(tools, RecordingSink(), kernel_id="k1").call("list_variables", {})
    assert "slow_marker" not in listing


async def test_cancelling_the_turn_interrupts_approved_code(root: Path, kernel: AsyncKernelManager) -> None:
    tools = _tools(root, {"k1": kernel}, run_timeout=60)
    registry = _registry(tools, RecordingSink(), kernel_id="k1", run_id="run-cancel")
    code = "import time\nfor _ in range(1200):\n    time.sleep(0.05)\ncancel_marker = 1"
    call = asyncio.ensure_future(registry.call("run_code", {"code": code}))
    await _answer(tools, "run-cancel", "allow_once")
    await asyncio.sleep(1.0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    started = time.monotonic()
    listing, is_error = await _registry(tools, RecordingSink(), kernel_id="k1").call("list_variables", {})
    assert not is_error and "cancel_marker" not in listing
    assert time.monotonic() - started < 5  # the kernel was interrupted, not left running for a minute


async def test_big_outputs_are_bounded(kernel_tools: NotebookTools) -> None:
    code = "for i in range(5000):\n    print(i)\nprint('x' * 1_000_000)"
    text, is_error, _ = await _run(kernel_tools, code, "allow_once", "run-big")
    assert not is_error
    assert len(text) < kernel_tools.max_result_chars + 100
    assert text.startswith("The code ran.\n[stdout] 0\n1\n2\n") and "more characters]" in text


async def test_list_and_inspect_variables_leave_the_namespace_untouched(kernel_tools: NotebookTools) -> None:
    setup = ("import os\nscores = {'ann': 3, 'bob': 5}\nnames = list('abcdefghijklmnopqrstuvwxyz' * 10)\n"
             "_hidden = 1\ndef grade(score: int, curve: float = 1.0) -> str:\n    '''Letter grade.'''\n    return 'A'")
    await _run(kernel_tools, setup, "allow_once", "run-setup")
    registry = _registry(kernel_tools, RecordingSink(), kernel_id="k1")
    listing, is_error = await registry.call("list_variables", {})
    assert not is_error
    lines = {line.split(":")[0]: line for line in listing.splitlines()}
    assert lines["scores"] == "scores: dict len=2 = {'ann': 3, 'bob': 5}"
    assert lines["names"].startswith("names: list len=260 = ['a', 'b',") and len(lines["names"]) < 200
    assert "grade" in lines
    for absent in ("os", "_hidden", "In", "Out", "get_ipython", "exit", "result", "json", "reprlib", "args", "ip"):
        assert absent not in lines

    info, is_error = await registry.call("inspect_variable", {"name": "scores"})
    assert not is_error and '"keys": [\n  "\'ann\'",' in info
    info, _ = await registry.call("inspect_variable", {"name": "grade"})
    assert "(score: int, curve: float = 1.0) -> str" in info and "Letter grade." in info
    info, is_error = await registry.call("inspect_variable", {"name": "scores.keys"})
    assert not is_error and "builtin_function_or_method" in info

    missing, is_error = await registry.call("inspect_variable", {"name": "nope"})
    assert is_error and "no variable named 'nope'" in missing
    for bad in ("scores; import os", "__import__('os')", "scores.__class__"):
        text, is_error = await registry.call("inspect_variable", {"name": bad})
        assert is_error and "not a variable name" in text
    relisted, _ = await registry.call("list_variables", {})
    assert relisted == listing


async def test_inspect_variable_gives_a_dataframe_as_data_not_its_docstring(kernel_tools: NotebookTools) -> None:
    pytest.importorskip("pandas")
    await _run(kernel_tools, "import pandas as pd\nframe = pd.DataFrame({'a': [1, None, 3, 4], 'b': list('wxyz')})\n"
               "Frame = pd.DataFrame", "allow_once", "run-frame")
    registry = _registry(kernel_tools, RecordingSink(), kernel_id="k1")
    info, is_error = await registry.call("inspect_variable", {"name": "frame"})
    summary = json.loads(info)["summary"]
    assert not is_error and summary["shape"] == [4, 2] and summary["nulls"] == {"a": 1, "b": 0}
    assert summary["dtypes"]["a"] == "float64" and "w" in summary["head"]
    info, is_error = await registry.call("inspect_variable", {"name": "Frame"})
    assert not is_error and "Parameters" not in info and len(info) < 4000  # a class is one line, not its docstring
    assert json.loads(info)["summary"]["description"].startswith("class pandas.")


async def test_introspection_leaves_no_trace_in_history_or_on_iopub(kernel_tools: NotebookTools,
                                                                  kernel: AsyncKernelManager) -> None:
    kc = kernel.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=30)
    try:
        before = await _count_history(kc)
        while True:  # empty the iopub queue
            try:
                await kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                break
        registry = _registry(kernel_tools, RecordingSink(), kernel_id="k1")
        await registry.call("list_variables", {})
        await registry.call("inspect_variable", {"name": "scores"})
        seen = []
        while True:
            try:
                seen.append((await kc.get_iopub_msg(timeout=0.5))["msg_type"])
            except queue.Empty:
                break
        assert set(seen) <= {"status"}  # busy/idle only: no execute_input, stream or result
        assert await _count_history(kc) == before
    finally:
        kc.stop_channels()


async def _count_history(kc: Any) -> int:
    msg_id = kc.execute("", silent=True, user_expressions={"n": "len(In)"})
    while True:
        reply = await kc.get_shell_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            return int(reply["content"]["user_expressions"]["n"]["data"]["text/plain"])


# ---- nothing secret reaches the model -------------------------------------------------------

PLANTED_KEY = "sk-live-" + "4f9c2e7a1b3d5f6e8a0c"
PLANTED_PASSWORD = "correct-horse-battery"
PLANTED_ENV = "planted-env-value-7731"
#: Shaped like a default Jupyter token (48 hex digits): only known-value redaction can catch it.
PLANTED_SERVER_TOKEN = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071"
PLANTED = (PLANTED_KEY, PLANTED_PASSWORD, PLANTED_ENV, PLANTED_SERVER_TOKEN)
SECRETS_SETUP = f"""
import os, types
os.environ['PLANTED_SERVICE_TOKEN'] = {PLANTED_ENV!r}
api_token = {PLANTED_KEY!r}
db_password = {PLANTED_PASSWORD!r}
jupyter_url = 'http://127.0.0.1:8888/?token={PLANTED_SERVER_TOKEN}'
env_ref = os.environ
env_copy = dict(os.environ)
holder = types.SimpleNamespace(os=os, label='plain')
"""


@pytest.fixture
def secret_tools(root: Path, kernel: AsyncKernelManager, monkeypatch: pytest.MonkeyPatch) -> NotebookTools:
    """Tools whose redactor is built as the server builds it: from its environment plus its token."""
    monkeypatch.setenv("PLANTED_SERVICE_TOKEN", PLANTED_ENV)
    redactor = Redactor.from_environ(extra=[PLANTED_SERVER_TOKEN])
    return _tools(root, {"k1": kernel}, approval_timeout=10, run_timeout=20, redactor=redactor)


def _assert_clean(text: str) -> None:
    leaked = [secret for secret in PLANTED if secret in text]
    assert not leaked, f"{leaked} reached the model in:\n{text}"


async def test_planted_secrets_never_reach_the_model_from_any_notebook_tool(secret_tools: NotebookTools,
                                                                           root: Path) -> None:
    ran, is_error, _ = await _run(secret_tools, SECRETS_SETUP + "print(api_token, 'password=' + db_password, "
                                  "os.environ['PLANTED_SERVICE_TOKEN'], jupyter_url)", "allow_once", "run-plant")
    assert not is_error and ran.startswith("The code ran.\n[stdout] [redacted]")
    _assert_clean(ran)
    registry = _registry(secret_tools, RecordingSink(), kernel_id="k1", notebook_path="work/leaky.ipynb")

    listing, _ = await registry.call("list_variables", {})
    _assert_clean(listing)
    rows = {line.split(":")[0]: line for line in listing.splitlines()}
    assert rows["api_token"].endswith("= [redacted]") and rows["db_password"].endswith("= [redacted]")
    assert "process environment" in rows["env_ref"] and "process environment" in rows["env_copy"]
    assert "holder" in rows and "label='plain'" in rows["holder"]

    for name in ("api_token", "db_password", "jupyter_url", "holder"):
        shown, is_error = await registry.call("inspect_variable", {"name": name})
        assert not is_error, shown
        _assert_clean(shown)

    notebook = new_notebook(cells=[new_code_cell("print(secrets)", outputs=[new_output(
        "stream", name="stdout", text=f"{PLANTED_KEY} {PLANTED_ENV}\n{{'password': '{PLANTED_PASSWORD}'}}\n"
        f"{PLANTED_SERVER_TOKEN}\n")])])
    write_notebook(notebook, root / "work" / "leaky.ipynb")
    read, is_error = await registry.call("read_notebook", {"path": "work/leaky.ipynb"})
    assert not is_error and "[stdout] [redacted]" in read
    _assert_clean(read)


@pytest.mark.parametrize(("name", "why"), [
    ("os", "is a module"),
    ("os.environ", "is a module"),
    ("holder.os", "is a module"),
    ("holder.os.environ", "holder.os is a module"),
    ("env_ref", "process environment"),
    ("env_copy", "process environment"),
    ("env_ref.copy", "process environment"),
    ("os._Environ", "not a variable name"),
    ("env_ref._data", "not a variable name"),
])
async def test_inspect_variable_never_traverses_modules_or_shows_the_environment(
    secret_tools: NotebookTools, name: str, why: str,
) -> None:
    await _run(secret_tools, SECRETS_SETUP, "allow_once", f"run-env-{name}")
    text, is_error = await _registry(secret_tools, RecordingSink(), kernel_id="k1").call(
        "inspect_variable", {"name": name})
    assert is_error and why in text, text
    _assert_clean(text)
    assert "PATH" not in text


# ---- proposing cells (journaled, never applied here) ----------------------------------------

async def test_propose_cell_journals_a_replacement_with_the_saved_source_for_the_diff(root: Path) -> None:
    sink = RecordingSink()
    text, is_error = await _registry(_tools(root), sink).call(
        "propose_cell", {"action": "replace", "cell_id": "total", "source": "total = 6 * 7\nprint(total)"})
    [proposal] = sink.payloads("proposal")
    assert not is_error and "not run" in text and proposal["proposal_id"] in text
    assert proposal["old_source"] == "total = 6 * 7\ntotal" and proposal["cell_type"] == "code"
    assert (root / "work" / "sales.ipynb").read_text().count("print(total)") == 0  # the notebook is untouched


@pytest.mark.parametrize("args, words", [
    ({"action": "insert_below", "cell_id": "nope", "source": "x"}, "no cell with id 'nope'"),
    ({"action": "replace", "source": "x"}, "needs the target cell's id"),
    ({"action": "delete", "cell_id": "total", "source": "x"}, "action must be one of"),
    ({"action": "insert_end", "source": "  "}, "needs the cell's source"),
])
async def test_a_proposal_the_model_got_wrong_is_an_error_it_can_read(root: Path, args: dict[str, Any], words: str) -> None:
    sink = RecordingSink()
    text, is_error = await _registry(_tools(root), sink).call("propose_cell", args)
    assert is_error and words in text and sink.payloads("proposal") == []


async def test_propose_cell_is_offered_and_works_only_for_a_bound_notebook(root: Path) -> None:
    unbound = _registry(_tools(root), RecordingSink(), notebook_path=None)
    assert "propose_cell" not in [s["function"]["name"] for s in unbound.schemas()]
    text, is_error = await unbound.call("propose_cell", {"action": "insert_end", "source": "x"})
    assert is_error and "not bound" in text
