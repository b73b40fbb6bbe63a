"""A provider that echoes the API key: the key must appear nowhere the server writes or shows.

A real `jupyter server` process runs the `openai` backend against LLMock (a third-party mock),
which is scripted to echo the configured key: in a 401 error body, in a mid-stream answer and in
a `Retry-After` 429 before it. The key is deliberately not token-shaped, so only the server's
knowledge of its own configured key can mask it. Afterwards every file under state_dir, the
server's log, the API answers and a notebook rebuilt from the journal are scanned for it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import nbformat.v4
import pytest

from hermes_jupyter.notebook.recover import recover_notebook_file
from hermes_jupyter.redact import Redactor, redact_logs

from ..server_process import JupyterServerProcess

llmock_testing = pytest.importorskip("llmock.testing")

#: Not shaped like any known key format: only exact knowledge of the configured key catches it.
PLANTED = "plantedKEY-4f1c9e0a77b2-hj"
RUN_MIME = "application/vnd.hermes.run+json"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, JupyterServerProcess]]:
    from llmock.pytest_plugin import LLMock

    root = tmp_path_factory.mktemp("planted")
    with llmock_testing.LLMockServer() as mock_server:
        mock = LLMock(mock_server).reset()
        server = JupyterServerProcess(
            root, extra_args=["--HermesJupyter.backend=openai", "--OpenAIAgent.retry_backoff=0.05"],
            env={"OPENAI_BASE_URL": mock.base_url("openai"), "OPENAI_MODEL": "gpt-4o-mini",
                 "OPENAI_API_KEY": PLANTED},
        )
        server.start()
        try:
            yield mock, server
        finally:
            server.stop()


def _finish(server: JupyterServerProcess, sid: str, message: str) -> tuple[str, list[dict[str, Any]]]:
    run_id = server.start_run(sid, message)
    for _ in range(600):
        body = server.get(f"runs/{run_id}/events", after_seq=0).json()
        if body["terminal"]:
            return run_id, body["events"]
        import time

        time.sleep(0.05)
    raise TimeoutError(run_id)


def _files_with(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_an_echoed_key_is_nowhere_under_state_dir_in_the_log_or_in_notebook_outputs(
    stack: tuple[Any, JupyterServerProcess],
) -> None:
    mock, server = stack
    sid = server.new_session(title="planted", backend="openai")
    mock.reset().rate_limit(times=1, retry_after=0.1)
    mock.fail(401, times=1, message=f"Incorrect API key provided: {PLANTED}.")
    failed_run, failed_rows = _finish(server, sid, "hello")
    mock.reset().reply(f"Your key is {PLANTED} as configured.")
    echoed_run, echoed_rows = _finish(server, sid, "what is my key")

    terminal = failed_rows[-1]
    assert terminal["event"] == "apperror" and terminal["payload"]["type"] == "authentication"
    assert "[redacted]" in terminal["payload"]["detail"] and [r["event"] for r in failed_rows][0] == "status"
    assert echoed_rows[-1]["event"] == "done" and any("[redacted]" in r["payload"].get("text", "")
                                                         for r in echoed_rows)
    session = server.get(f"sessions/{sid}").text
    assert PLANTED not in session and "[redacted]" in session
    # the failed turn's error is no history for the model: only the user rows and the real answer
    context = server.get(f"sessions/{sid}").json()["context_messages"]
    assert [m["role"] for m in context] == ["user", "user", "assistant"]
    assert all("Incorrect API key" not in str(m["content"]) for m in context)

    notebook = server.notebooks / "planted.ipynb"
    _write_notebook_pointing_at(notebook, sid, [failed_run, echoed_run])
    assert recover_notebook_file(notebook, server.state_dir) == 2

    needle = PLANTED.encode()
    assert _files_with(server.state_dir, needle) == []
    assert PLANTED not in server.log()
    assert needle not in notebook.read_bytes() and b"[redacted]" in notebook.read_bytes()


def _write_notebook_pointing_at(path: Path, sid: str, run_ids: list[str]) -> None:
    """Cells whose outputs still say `running`, as a kernel that died mid-run leaves them."""
    new_output: Any = nbformat.v4.new_output
    new_code_cell: Any = nbformat.v4.new_code_cell
    cells = [new_code_cell("%%hermes\nhello", id=f"c{n}", outputs=[new_output(
        "display_data", data={RUN_MIME: {"run_id": run_id, "session_id": sid, "seq": 1, "status": "running"},
                              "text/plain": "…"})]) for n, run_id in enumerate(run_ids)]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_log_records_are_masked_before_any_handler_sees_them(caplog: pytest.LogCaptureFixture) -> None:
    import hermes_jupyter.runs.manager  # noqa: F401 - its logger must exist before the filter is installed

    redact_logs(Redactor.from_values([PLANTED]))
    with caplog.at_level(logging.INFO):
        logging.getLogger("hermes_jupyter.runs.manager").error("provider said %s", f"bad key {PLANTED}")
        try:
            raise RuntimeError(f"Incorrect API key provided: {PLANTED}")
        except RuntimeError:
            logging.getLogger("hermes_jupyter.runs.manager").exception("turn failed")
    assert PLANTED not in caplog.text and "[redacted]" in caplog.text
