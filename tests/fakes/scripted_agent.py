"""A backend whose turn is a script, for engine tests: events, delays, threads, failures, stubbornness.

Why: the demo agent is deterministic but cannot misbehave; these scripts raise,
ignore interrupts, emit from foreign threads and rotate their session id, which
is what the run engine must survive.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from hermes_jupyter.agents.base import EventSink, TurnRequest, TurnResult

Step = tuple[str, dict[str, Any]]


@dataclass
class Script:
    steps: list[Step] = field(default_factory=list)
    delay_s: float = 0.0
    result: TurnResult | None = None
    raise_after: Exception | None = None
    ignore_interrupt: bool = False
    from_thread: bool = False
    #: Awaited before returning (lets a test change the world mid-turn).
    before_return: Callable[[], Any] | None = None


class ScriptedAgent:
    """Plays the script registered for a prompt (or the default script)."""

    name = "scripted"

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.default = Script(steps=[("token", {"text": "ok"})])
        self.requests: list[TurnRequest] = []
        self._stops: dict[str, asyncio.Event] = {}

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult:
        self.requests.append(request)
        script = self.scripts.get(request.message, self.default)
        stop = self._stops.setdefault(request.run_id, asyncio.Event())
        if script.from_thread:
            await asyncio.to_thread(self._emit_all, script, sink)
        else:
            for event, payload in script.steps:
                if stop.is_set() and not script.ignore_interrupt:
                    return TurnResult(final_text="", outcome="interrupted")
                if script.delay_s:
                    await asyncio.sleep(script.delay_s)
                sink.emit(event, payload)
        if script.ignore_interrupt:
            await asyncio.sleep(3600)
        if script.raise_after is not None:
            raise script.raise_after
        if script.before_return is not None:
            outcome = script.before_return()
            if asyncio.iscoroutine(outcome):
                await outcome
        text = "".join(p.get("text", "") for e, p in script.steps if e == "token")
        return script.result or TurnResult(final_text=text, context=[{"role": "assistant", "content": text}])

    def _emit_all(self, script: Script, sink: EventSink) -> None:
        assert threading.current_thread() is not threading.main_thread()
        for event, payload in script.steps:
            sink.emit(event, payload)

    async def interrupt(self, run_id: str) -> None:
        self._stops.setdefault(run_id, asyncio.Event()).set()

    async def aclose(self) -> None:
        pass
