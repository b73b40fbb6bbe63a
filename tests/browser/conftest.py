"""Browser fixtures: Debian's chromium driven by PyPI playwright, against a real jupyter server.

Why these choices:
- `executable_path=/usr/bin/chromium`: we never download a browser (`playwright install` is
  never run); `scripts/ensure_chromium.sh` installs Debian's package.
- One browser per module, a fresh context (no cookies, no localStorage) per test.
- Real `jupyter_server` subprocesses (tests/server_process.py) serving JupyterLab and the
  extension: `lab_server` is shared by every scene that leaves it running (each scene works in
  its own session or notebook); the server-restart scenes kill theirs, so they get their own.
- JupyterLab gets throwaway settings and workspace dirs, and an `overrides.json` that turns the
  news toast off, so nothing covers the sidebar.
- Real-time collaboration (jupyter-collaboration, in the test extra) is off unless a test asks
  for it (`make_lab_server(name, collaboration=True)`): every other scene is about one browser
  on its own notebook model, and the file it saves.

Without playwright or chromium the browser tests skip with a loud banner; set
HERMES_JUPYTER_REQUIRE_BROWSER=1 (scripts/test.sh should) to make that a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..server_process import JupyterServerProcess

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
REQUIRE_ENV = "HERMES_JUPYTER_REQUIRE_BROWSER"
CHROMIUM = os.environ.get("HERMES_JUPYTER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
#: Fast enough for short scenes, slow enough that a reload or a restart lands mid-stream.
TOKEN_DELAY_S = 0.01
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}

#: Seconds from navigation to a usable sidebar, per test (printed in the terminal summary).
SIDEBAR_TIMINGS: dict[str, float] = {}


def _missing_browser() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "PyPI playwright is not installed (.venv/bin/pip install playwright; never `playwright install`)"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (run scripts/ensure_chromium.sh)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    mine = [item for item in items if here in item.path.parents]
    reason = _missing_browser() if mine else None
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV):
        raise pytest.UsageError(f"browser tests required ({REQUIRE_ENV}) but {reason}")
    banner = "!" * 78
    sys.stderr.write(f"\n{banner}\nBROWSER TESTS SKIPPED: {reason}\n{banner}\n")
    for item in mine:
        item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {reason}"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SIDEBAR_TIMINGS:
        terminalreporter.section("hermes sidebar: page load to usable sidebar")
        for name, seconds in SIDEBAR_TIMINGS.items():
            terminalreporter.write_line(f"{seconds:6.2f} s  {name}")


def lab_server_args(root: Path, *, collaboration: bool = False) -> list[str]:
    settings = root / "lab-app-settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps(LAB_OVERRIDES), encoding="utf-8")
    # Serve the labextension as built in this checkout (`npm run build` writes it to
    # hermes_jupyter/labextension), ahead of the copy `pip install` put in the venv.
    extensions = root / "labextensions"
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "hermes-jupyter").symlink_to(REPO / "hermes_jupyter" / "labextension", target_is_directory=True)
    return [
        f"--LabApp.extra_labextensions_path={extensions}",
        f"--JupyterNotebookApp.extra_labextensions_path={extensions}",  # Notebook 7's pages, where installed
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.app_settings_dir={settings}",
        f"--LabApp.user_settings_dir={root / 'lab-user-settings'}",
        f"--LabApp.workspaces_dir={root / 'lab-workspaces'}",
        *collaboration_args(collaboration),
    ]


def collaboration_args(enabled: bool) -> list[str]:
    """jupyter-collaboration's own switch (`YDocExtension.disable_rtc`): off, the page gets
    `disableRTC` and opens notebooks from their files; on, every notebook is a shared room."""
    if not enabled:
        return ["--YDocExtension.disable_rtc=True"]
    return ["--YDocExtension.disable_rtc=False", "--YDocExtension.document_save_delay=0.5"]


@pytest.fixture
def jp_asyncio_loop() -> None:
    """Override pytest-jupyter's autouse loop fixture. Playwright's sync API keeps its own loop
    running in this thread, which pytest-jupyter would adopt and close; our servers are
    subprocesses, so no in-process loop is needed."""


@pytest.fixture
def jp_server_cleanup() -> None:
    """Override pytest-jupyter's autouse in-process ServerApp cleanup (there is none here)."""


@pytest.fixture(scope="session", autouse=True)
def _clear_failure_screenshots() -> None:
    for stale in ARTIFACTS.glob("FAILED-*.png"):
        stale.unlink()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A chromium per module. Not per session: while playwright's sync API is started, its loop
    counts as running in this thread, which breaks every asyncio test that runs after us."""
    from playwright.sync_api import sync_playwright

    # launch() (not launch_persistent_context) runs chromium on a fresh temporary profile.
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def make_lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., JupyterServerProcess]]:
    """Start a jupyter server (JupyterLab + hermes) over a fresh root; all are stopped at the end."""
    started: list[JupyterServerProcess] = []

    def make(name: str, *, collaboration: bool = False) -> JupyterServerProcess:
        root = tmp_path_factory.mktemp(name)
        server = JupyterServerProcess(
            root, token_delay=TOKEN_DELAY_S, extra_args=lab_server_args(root, collaboration=collaboration)
        )
        started.append(server)
        return server.start()

    yield make
    for server in started:
        stop_or_kill(server)


def stop_or_kill(server: JupyterServerProcess) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 30 s. With jupyter-collaboration installed, a
    server sometimes never exits after shutting its kernels down: a worker thread started while its
    collaboration extension stops keeps the interpreter waiting. That is the extension's shutdown, not
    a scene's outcome, so it is logged, not failed."""
    try:
        server.stop()
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"\njupyter server {server.url} did not exit on SIGTERM; killed\n")
        if server.proc is not None:
            server.proc.kill()
            server.proc.wait(30)
            server.proc = None


@pytest.fixture(scope="session")
def lab_server(make_lab_server: Callable[[str], JupyterServerProcess]) -> JupyterServerProcess:
    """One server for the scenes that leave it running (each scene uses its own session)."""
    return make_lab_server("lab")


@pytest.fixture
def make_lab(browser: Any, request: pytest.FixtureRequest) -> Iterator[Callable[[JupyterServerProcess], Any]]:
    """A LabPage in a fresh browser context (no cookies, no localStorage) on a given server."""
    from .lab_page import LabPage

    contexts: list[Any] = []
    pages: list[LabPage] = []

    def make(server: JupyterServerProcess) -> LabPage:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        page = LabPage(context.new_page(), server, ARTIFACTS)
        pages.append(page)
        return page

    yield make
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        for n, page in enumerate(pages):
            with contextlib.suppress(Exception):  # best effort: the test already failed
                page.screenshot(f"FAILED-{request.node.name}-{n}")
            sys.stderr.write("\n".join(page.console[-40:]) + "\n")
    for context in contexts:
        context.close()


@pytest.fixture
def lab(make_lab: Callable[[JupyterServerProcess], Any], lab_server: JupyterServerProcess) -> Any:
    return make_lab(lab_server)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
