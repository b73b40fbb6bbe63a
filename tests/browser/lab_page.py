"""A page object for JupyterLab with the hermes-jupyter extension, driven by Playwright.

Tests read as intent (`send`, `wait_streaming`, `click_stop`, `last_message_text`); the
selectors and the waiting tricks live here, and come from labextension/README.md
("Stable selectors"). Every wait is on a DOM condition, never a bare sleep.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ..server_process import TOKEN, JupyterServerProcess

#: JupyterLab's two themes by the names the scenes use.
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
#: Resolves after two animation frames: what was changed has been painted.
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

SIDEBAR = ".jp-HermesSidebar"
CHAT = f"{SIDEBAR} [data-testid=hermes-chat]"
COMPOSER = f"{SIDEBAR} [data-testid=hermes-composer]"
SEND = f"{SIDEBAR} [data-testid=hermes-send]"
STOP = f"{SIDEBAR} [data-testid=hermes-stop]"
SELECTED_SESSION = f"{SIDEBAR} .jp-HermesSessionItem.jp-mod-selected"
ASSISTANT = f"{SIDEBAR} .jp-HermesMessage[data-role=assistant]"
USER = f"{SIDEBAR} .jp-HermesMessage[data-role=user]"
MARKER = f"{SIDEBAR} .jp-HermesMarker"
TRANSCRIPT = f"{SIDEBAR} [data-testid=hermes-transcript]"
RUN_OUTPUT = "[data-testid=hermes-run-output]"

#: Long enough for a cold JupyterLab on 2 busy cores; the happy path takes ~3 s.
APP_TIMEOUT_MS = 60_000


def counting(n: int) -> str:
    """What the demo agent streams for `count to n` (docs/demo-agent.md)."""
    return " ".join(str(i) for i in range(1, n + 1))


def is_count_prefix(text: str) -> bool:
    """True if `text` is `1 2 … k` for some k ≥ 1: no gap, no duplicate, no stray text."""
    numbers = text.split()
    return bool(numbers) and numbers == [str(i) for i in range(1, len(numbers) + 1)]


@dataclass(frozen=True)
class MarkerView:
    kind: str
    cause: str
    text: str


def _marker_views(markers: Locator) -> list[MarkerView]:
    return [
        MarkerView(
            kind=item.get_attribute("data-kind") or "",
            cause=item.get_attribute("data-cause") or "",
            text=re.sub(r"\s+", " ", item.inner_text()).strip(),
        )
        for item in markers.all()
    ]


# A JS predicate over the last assistant row of `root`: streaming and holding ≥ n numbers.
_STREAMING_JS = """([root, n]) => {
  const rows = document.querySelectorAll(root + ' .jp-HermesMessage[data-role=assistant]');
  const row = rows[rows.length - 1];
  if (!row || row.dataset.streaming !== 'true') return false;
  const content = row.querySelector('.jp-HermesMessage-content');
  const text = content ? content.innerText.trim() : '';
  return !!text && text.split(/\\s+/).length >= n;
}"""

# Record every text the last assistant row of `root` shows (a MutationObserver sees each render),
# so a test can check the live view itself, not only the settled transcript that replaces it.
_RECORD_JS = """(root) => {
  const seen = window.__hermesSeen = [];
  const read = () => {
    const rows = document.querySelectorAll(root + ' .jp-HermesMessage[data-role=assistant]');
    const content = rows.length && rows[rows.length - 1].querySelector('.jp-HermesMessage-content');
    const text = content ? content.innerText.trim() : '';
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  };
  new MutationObserver(read).observe(document.body, {subtree: true, childList: true, characterData: true});
  read();
}"""

_RUN_OUTPUT_TOKENS_JS = """([n]) => {
  const out = document.querySelector('[data-testid=hermes-run-output]');
  if (!out || out.dataset.followState !== 'live') return false;
  const msg = out.querySelector('.jp-HermesMessage[data-role=assistant] .jp-HermesMessage-content');
  const text = msg ? msg.innerText.trim() : '';
  return !!text && text.split(/\\s+/).length >= n;
}"""


_RUN_OUTPUT_STATES_JS = """() => [...document.querySelectorAll('[data-testid=hermes-run-output]')].map(out => ({
  status: out.dataset.status, follow: out.dataset.followState, run: out.dataset.runId,
  visible: out.getClientRects().length > 0, words: out.innerText.trim().split(/\\s+/).length,
}))"""


# Installed before any page script: remember every WebSocket the page opens, so a test can
# drop the run streams as a flaky network would (the server side stays up).
_TRACK_SOCKETS_JS = """(() => {
  const Native = window.WebSocket;
  const open = window.__hermesSockets = [];
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); open.push(this); }
  };
})();"""

_DROP_RUN_SOCKETS_JS = """() => {
  const live = (window.__hermesSockets || []).filter(
    ws => ws.url.includes('/hermes/api/runs/') && ws.readyState === WebSocket.OPEN);
  live.forEach(ws => ws.close(4000, 'test: network drop'));
  return live.length;
}"""


class LabPage:
    """One browser tab on one JupyterLab served by a `JupyterServerProcess`."""

    def __init__(self, page: Page, server: JupyterServerProcess, artifacts: Path) -> None:
        self.page = page
        self.server = server
        self.artifacts = artifacts
        self.console: list[str] = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        page.add_init_script(_TRACK_SOCKETS_JS)

    # -- the application -------------------------------------------------------------------------
    def open(self, path: str = "lab") -> float:
        """Load JupyterLab at `path` (a fresh workspace) and wait until its layout is restored.

        Returns the seconds from navigation to a restored shell.
        """
        started = time.monotonic()
        sep = "&" if "?" in path else "?"
        self.page.goto(f"{self.server.url}{path}{sep}reset&token={TOKEN}")
        self._wait_app()
        return time.monotonic() - started

    def reload(self) -> float:
        started = time.monotonic()
        self.page.reload()
        self._wait_app()
        return time.monotonic() - started

    def _wait_app(self) -> None:
        # expose_app_in_browser gives window.jupyterapp; `restored` resolves after the layout
        # restorer ran. Opening the sidebar earlier gets undone by the restore.
        self.page.wait_for_function(
            "window.jupyterapp && window.jupyterapp.commands.hasCommand('hermes-jupyter:open-sidebar')",
            timeout=APP_TIMEOUT_MS,
        )
        self.page.evaluate("async () => { await window.jupyterapp.restored; }")

    def execute(self, command: str, args: dict[str, Any] | None = None, *, wait: bool = True) -> Any:
        """Run a JupyterLab command; with wait=False, do not wait for its promise (e.g. Run All
        resolves only when every cell has finished)."""
        script = "([command, args]) => window.jupyterapp.commands.execute(command, args)"
        if not wait:
            script = "([command, args]) => { void window.jupyterapp.commands.execute(command, args); }"
        return self.page.evaluate(script, [command, args or {}])

    def screenshot(self, name: str) -> Path:
        self.artifacts.mkdir(parents=True, exist_ok=True)
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    def set_theme(self, theme: str) -> None:
        """Switch JupyterLab's theme ("light" or "dark") and wait until it is painted (the theme is a
        setting of the server, so a scene that switches it switches it back)."""
        name = THEMES[theme]
        self.execute("apputils:change-theme", {"theme": name})
        self.page.wait_for_function("(name) => document.body.dataset.jpThemeName === name", arg=name,
                                    timeout=APP_TIMEOUT_MS)
        self.page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=APP_TIMEOUT_MS)
        self.page.evaluate(TWO_FRAMES)

    def screenshot_dark(self, name: str) -> Path:
        """A screenshot of the same moment in the dark theme, then back to light."""
        self.set_theme("dark")
        try:
            return self.screenshot(name)
        finally:
            self.set_theme("light")

    # -- the sidebar -----------------------------------------------------------------------------
    def open_sidebar(self) -> None:
        """Show the Hermes sidebar and wait until its composer can take text."""
        self.execute("hermes-jupyter:open-sidebar")
        self.page.wait_for_selector(COMPOSER, state="visible")
        self.page.wait_for_function(
            f"document.querySelector('{CHAT}') && document.querySelector('{CHAT}').dataset.status !== 'loading'"
        )

    def new_session(self) -> str:
        """Click New; returns the id of the new, selected session."""
        before = self.selected_session_id()
        self.page.click(f"{SIDEBAR} [data-testid=hermes-new-session]")
        self.page.wait_for_function(
            "([sel, before]) => { const e = document.querySelector(sel);"
            " return !!e && e.dataset.sessionId !== before; }",
            arg=[SELECTED_SESSION, before],
        )
        return self.selected_session_id() or ""

    def selected_session_id(self) -> str | None:
        item = self.page.query_selector(SELECTED_SESSION)
        return item.get_attribute("data-session-id") if item else None

    def send(self, text: str) -> None:
        """Type `text` into the composer, press Enter, and wait until the turn shows up."""
        rows = self._row_count()
        self.page.fill(COMPOSER, text)
        self.page.press(COMPOSER, "Enter")
        if self.page.input_value(COMPOSER) == text:
            # The composer keeps the text when a keypress races a re-render right after a turn
            # ended (nothing was sent); a person presses Enter again, and so do we, once.
            self.page.wait_for_timeout(500)
            self.page.press(COMPOSER, "Enter")
        # data-row-count counts every row, mounted or not (long transcripts are windowed).
        self.page.wait_for_function(
            "([sel, n]) => { const t = document.querySelector(sel);"
            " return !!t && Number(t.dataset.rowCount) > n; }",
            arg=[TRANSCRIPT, rows],
        )

    def _row_count(self) -> int:
        value = self.page.get_attribute(TRANSCRIPT, "data-row-count") if self.page.query_selector(TRANSCRIPT) else None
        return int(value or 0)

    def wait_streaming(self, tokens: int = 1, timeout_s: float = 30) -> str:
        """Wait until the live reply shows at least `tokens` words; returns its text then."""
        self.page.wait_for_function(_STREAMING_JS, arg=[SIDEBAR, tokens], timeout=timeout_s * 1000)
        return self.last_message_text()

    def wait_idle(self, timeout_s: float = 30) -> None:
        """Wait until no turn streams: the chat is idle, Send is back in place of Stop, and every
        reply shows its last text (markdown renders asynchronously)."""
        self.page.wait_for_selector(f"{CHAT}[data-status=idle]", timeout=timeout_s * 1000)
        self.page.wait_for_selector(SEND, timeout=timeout_s * 1000)
        self.page.wait_for_function(
            "(sel) => !document.querySelector(sel)", arg=f"{TRANSCRIPT} [data-rendering=true]", timeout=timeout_s * 1000,
        )

    def chat_status(self) -> str | None:
        return self.page.get_attribute(CHAT, "data-status")

    def record_reply_texts(self) -> None:
        """From now on (until the next reload), remember every text the last reply shows."""
        self.page.evaluate(_RECORD_JS, SIDEBAR)

    def recorded_reply_texts(self) -> list[str]:
        return list(self.page.evaluate("window.__hermesSeen || []"))

    def drop_run_sockets(self) -> int:
        """Close the page's open run-stream WebSockets; returns how many were open."""
        return int(self.page.evaluate(_DROP_RUN_SOCKETS_JS))

    def click_stop(self) -> None:
        self.page.click(STOP)

    def composer_usable(self) -> bool:
        return self.page.is_editable(COMPOSER) and self.page.is_visible(SEND)

    def assistant_rows(self) -> Locator:
        return self.page.locator(ASSISTANT)

    def user_texts(self) -> list[str]:
        return [t.strip() for t in self.page.locator(f"{USER} .jp-HermesMessage-content").all_inner_texts()]

    def assistant_texts(self) -> list[str]:
        return [t.strip() for t in self.page.locator(f"{ASSISTANT} .jp-HermesMessage-content").all_inner_texts()]

    def last_message_text(self) -> str:
        """The text of the last assistant reply (markers are not replies)."""
        texts = self.assistant_texts()
        return texts[-1] if texts else ""

    def markers(self) -> list[MarkerView]:
        """The sidebar's markers (interrupted, cancelled, error), in order."""
        return _marker_views(self.page.locator(MARKER))

    def wait_marker(self, kind: str, timeout_s: float = 30) -> MarkerView:
        self.page.wait_for_selector(f"{MARKER}[data-kind={kind}]", timeout=timeout_s * 1000)
        return [m for m in self.markers() if m.kind == kind][-1]

    def open_session(self, session_id: str) -> None:
        """Click a session in the list and wait until its transcript is shown."""
        self.page.click(f"{SIDEBAR} .jp-HermesSessionItem[data-session-id='{session_id}']")
        self.page.wait_for_selector(f"{CHAT}[data-status=idle] [data-testid=hermes-transcript]")

    def wait_transcript_rendered(self) -> None:
        """Wait until every mounted reply has rendered its markdown, plus two frames for the
        resize and scroll handlers that follow a render."""
        self.page.wait_for_function(
            "(sel) => [...document.querySelectorAll(sel)].every(c => c.innerText.trim() !== '')",
            arg=f"{ASSISTANT} .jp-HermesMessage-content",
        )
        self.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    def transcript_rows(self) -> tuple[int, int]:
        """(rows in the transcript, rows mounted in the DOM)."""
        mounted = self.page.locator(f"{TRANSCRIPT} .jp-HermesTranscript-rows > *").count()
        return self._row_count(), mounted

    def transcript_distance_from_bottom(self) -> float:
        return float(self.page.evaluate(
            "(sel) => { const n = document.querySelector(sel); return n.scrollHeight - n.scrollTop - n.clientHeight; }",
            TRANSCRIPT,
        ))

    def recovery_banner(self) -> Locator:
        return self.page.locator(f"{SIDEBAR} [data-testid=hermes-recovery-banner]")

    # -- notebooks -------------------------------------------------------------------------------
    def open_notebook(self, path: str, *, kernel: bool = True) -> None:
        """Open `path` (relative to the server root) in a fresh workspace and wait for an idle
        kernel; with kernel=False (a notebook without kernelspec), answer "No Kernel"."""
        self.open(f"lab/tree/{path}")
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=APP_TIMEOUT_MS)
        if kernel:
            self.wait_kernel_idle()
        else:
            self.page.click(".jp-Dialog button:has-text('No Kernel')", timeout=APP_TIMEOUT_MS)

    def wait_kernel_idle(self, timeout_s: float = 60) -> None:
        self.page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
            " return !!k && k.status === 'idle'; }",
            timeout=timeout_s * 1000,
        )

    def run_all_cells(self) -> None:
        self.execute("notebook:run-all-cells", wait=False)

    def write_notebook(self, path: str, *sources: str) -> None:
        """A notebook of these code cells with the Python kernelspec, under the server's root."""
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, self.server.notebooks / path)

    def wait_cells_ran(self, n: int, timeout_s: float = 60) -> None:
        """The notebook in front ran its first `n` code cells in a fresh kernel (cell n has count n)."""
        self.page.wait_for_function(
            "(n) => { const w = window.jupyterapp.shell.currentWidget;"
            " return !!w && !!w.content && w.content.widgets[n - 1].model.executionCount === n; }",
            arg=n, timeout=timeout_s * 1000,
        )

    def open_and_run(self, path: str, *sources: str) -> None:
        """Write the notebook, open it, Run All (not awaited: it resolves only when cells finish), and
        wait until every cell ran and the kernel is idle."""
        self.write_notebook(path, *sources)
        self.open_notebook(path)
        self.run_all_cells()
        self.wait_cells_ran(len(sources))
        self.wait_kernel_idle()

    def restart_kernel(self) -> None:
        """Kernel ▸ Restart Kernel…, confirmed in its dialog, as a user does."""
        self.execute("kernelmenu:restart", wait=False)
        self.page.click(".jp-Dialog .jp-mod-accept")

    def wait_run_output_streaming(self, tokens: int, timeout_s: float = 60) -> None:
        """Wait until the cell's hermes output follows a live run and shows ≥ `tokens` words."""
        self.page.wait_for_function(_RUN_OUTPUT_TOKENS_JS, arg=[tokens], timeout=timeout_s * 1000)

    def run_output(self) -> Locator:
        return self.page.locator(RUN_OUTPUT).first

    def wait_run_output_status(self, status: str, timeout_s: float = 30) -> None:
        """Wait for a hermes output with `status`; on timeout, say what every output shows instead."""
        try:
            self.page.wait_for_selector(f"{RUN_OUTPUT}[data-status={status}]", timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            raise AssertionError(f"no hermes output became {status}; the outputs show {self.run_output_states()}") from None

    def run_output_states(self) -> list[dict[str, Any]]:
        """What each hermes output of the page shows: status, follow state, run id, visibility, words."""
        return list(self.page.evaluate(_RUN_OUTPUT_STATES_JS))

    def wait_run_output_marker(self, kind: str, timeout_s: float = 30) -> None:
        self.page.wait_for_selector(f"{RUN_OUTPUT} .jp-HermesMarker[data-kind={kind}]", timeout=timeout_s * 1000)

    def click_run_output_stop(self) -> None:
        """Click Stop in the cell's hermes output (the Lab renderer's, not the kernel widget's)."""
        self.page.click(f"{RUN_OUTPUT} [data-testid=hermes-run-stop]")

    def run_output_text(self) -> str:
        """The reply text shown in the cell's hermes output (markers excluded)."""
        parts = self.run_output().locator(".jp-HermesMessage[data-role=assistant] .jp-HermesMessage-content")
        return " ".join(t.strip() for t in parts.all_inner_texts())

    def run_output_markers(self) -> list[MarkerView]:
        return _marker_views(self.run_output().locator(".jp-HermesMarker"))

    def notebook_dirty(self) -> bool:
        return bool(self.page.evaluate("window.jupyterapp.shell.currentWidget.context.model.dirty"))

    def save_notebook(self) -> None:
        self.execute("docmanager:save")
        self.page.wait_for_function("!window.jupyterapp.shell.currentWidget.context.model.dirty")
