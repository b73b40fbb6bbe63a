"""The live cell of a hermes run: one display (one display_id) plus an anywidget view, both throttled.

The display bundle is the durable record in the saved notebook (markdown,
plain text, run+json, and while streaming the widget view); the widget is the
pleasant live view. Both always carry the whole run so far, so coalescing
updates never loses a token: a skipped update is superseded by the next one.
The Stop button calls the server from the browser, because the kernel is busy
inside the magic and cannot answer comm messages until the run ends.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from ..events import JournalRow
from ..notebook.outputs import DEFAULT_DEAD_CAUSE, RunOutput, final_bundle, live_bundle, view_state
from ..transcript import Transcript
from ..wording import RUN_CONTROLS

STATIC = Path(__file__).with_name("static")
#: Seconds between two widget updates: at most 10 comm messages a second per cell.
WIDGET_INTERVAL_S = 0.1
#: Seconds between two refreshes of the display bundle. JupyterLab re-creates the widget view
#: on every display update, so this stays slow; the saved notebook is at most this far behind.
DISPLAY_INTERVAL_S = 1.0

Display = Callable[..., Any]


def _make_widget_class() -> type[Any] | None:
    """The anywidget class, or None when anywidget is not installed (the markdown display still streams)."""
    try:
        import anywidget
        from traitlets import Dict, Unicode
    except ImportError:
        return None

    class RunWidget(anywidget.AnyWidget):
        """Front end: static/view.js. `state` is `outputs.view_state` of the run so far."""

        _esm = STATIC / "view.js"
        _css = STATIC / "view.css"
        run_id = Unicode("").tag(sync=True)
        session_id = Unicode("").tag(sync=True)
        base_path = Unicode("/").tag(sync=True)
        state = Dict().tag(sync=True)
        #: The button words every client shares (hermes_jupyter/wording.py).
        words = Dict(default_value=dict(RUN_CONTROLS)).tag(sync=True)

    return RunWidget


@functools.cache
def widget_class() -> type[Any] | None:
    """Created once per process, so every cell shares one front-end module."""
    return _make_widget_class()


@dataclass
class Throttle:
    """At most one action per `interval_s`."""

    interval_s: float
    last: float = -math.inf

    def due_in(self, now: float) -> float:
        return max(0.0, self.last + self.interval_s - now)

    def ready(self, now: float) -> bool:
        return now - self.last >= self.interval_s


class LiveCell:
    """Shows one run in the current cell: `show()`, then `feed()` + `tick()` while streaming, then `finish()`."""

    def __init__(
        self,
        session_id: str,
        run_id: str,
        *,
        base_path: str = "/",
        use_widget: bool = True,
        widget_interval_s: float = WIDGET_INTERVAL_S,
        display_interval_s: float = DISPLAY_INTERVAL_S,
        display: Display | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.output = RunOutput(session_id, run_id)
        self._display = display or _ipython_display
        self._clock = clock
        self._widget_throttle = Throttle(widget_interval_s)
        self._display_throttle = Throttle(display_interval_s)
        self._widget_dirty = self._display_dirty = False
        self._handle: Any = None
        self.widget_updates = 0
        self.display_updates = 0
        cls = widget_class() if use_widget else None
        self.widget: Any = None
        if cls is not None:
            self.widget = cls(run_id=run_id, session_id=session_id, base_path=base_path)

    @property
    def model_id(self) -> str | None:
        return self.widget.model_id if self.widget is not None else None

    def show(self, *, queued: bool = False) -> None:
        """Display the run; a `queued` one says so (and its Stop takes it off the queue) until `started()`."""
        snap = self.output.snapshot()
        if self.widget is not None:
            self.widget.state = {**view_state(snap), "queued": queued}
        self._handle = self._display(live_bundle(snap, self.model_id), raw=True, display_id=True)

    def started(self) -> None:
        """The queued turn runs now: the view streams it."""
        if self.widget is not None:
            self.widget.state = view_state(self.output.snapshot())

    def feed(self, rows: Iterable[JournalRow]) -> None:
        before = self.output.seq
        self.output.feed(rows)
        if self.output.seq != before:
            self._widget_dirty = self._display_dirty = True

    def tick(self) -> float:
        """Push what is due; returns the seconds until the next push could be due."""
        now = self._clock()
        snap: Transcript | None = None
        if self._widget_dirty and self.widget is not None and self._widget_throttle.ready(now):
            snap = self.output.snapshot()
            self.widget.state = view_state(snap)
            self.widget_updates += 1
            self._widget_throttle.last = now
            self._widget_dirty = False
        if self._display_dirty and self._display_throttle.ready(now):
            snap = snap or self.output.snapshot()
            self._update(live_bundle(snap, self.model_id))
            self._display_throttle.last = now
            self._display_dirty = False
        waits = [self._display_throttle.due_in(now)] if self._display_dirty else []
        if self._widget_dirty and self.widget is not None:
            waits.append(self._widget_throttle.due_in(now))
        return min(waits, default=self._widget_throttle.interval_s)

    def finish(
        self, status: str | None = None, *, cause: str = DEFAULT_DEAD_CAUSE, bundle: dict[str, Any] | None = None
    ) -> Transcript:
        """Replace the live bundle with the static one (no widget view) and close the widget.

        `bundle` is the server's (`GET runs/{id}/bundle`), used as it is. Otherwise the
        bundle is rendered from the rows: without a terminal row and with `status=None`
        it keeps status `running`, so `jupyter hermes recover` can finish the cell later.
        """
        snap = self.output.snapshot(status, cause=cause)
        self._update(bundle if bundle is not None else final_bundle(snap))
        if self.widget is not None:
            self.widget.close()
        return snap

    def _update(self, bundle: dict[str, Any]) -> None:
        if self._handle is None:
            self._handle = self._display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)
        self.display_updates += 1


def _ipython_display(bundle: dict[str, Any], **kwargs: Any) -> Any:
    from IPython.display import display

    return display(bundle, **kwargs)
