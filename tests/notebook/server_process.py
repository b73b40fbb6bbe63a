"""The notebook tests' server: the shared `JupyterServerProcess`, as a module-scoped fixture factory."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from ..server_process import TOKEN, JupyterServerProcess

ServerProcess = JupyterServerProcess


def start_server(
    base: Path, *, token_delay: float = 0.01, extra_args: tuple[str, ...] = (), timeout_s: float = 60.0
) -> JupyterServerProcess:
    """Start `jupyter server` with hermes_jupyter and the demo agent; return once its API answers.

    Its token is also in its environment (`JUPYTER_TOKEN`, as many users set it): the kernels it
    starts must not inherit it.
    """
    server = JupyterServerProcess(base, token_delay=token_delay, extra_args=list(extra_args),
                                  env={"JUPYTER_TOKEN": TOKEN})
    return server.start(timeout_s)


def server_fixture(token_delay: float, scope: str = "module") -> Any:
    """A pytest fixture (module-scoped by default) that runs one server for its tests."""

    @pytest.fixture(scope=scope)  # type: ignore[misc]
    def _fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
        server = start_server(tmp_path_factory.mktemp("jupyter"), token_delay=token_delay)
        try:
            yield server
        finally:
            server.stop()

    return _fixture
