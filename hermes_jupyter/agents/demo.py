"""The offline demo agent (CONTRACT §7): deterministic, no network, the default backend.

It exists so that Binder, a laptop with no network and the tests all exercise
the real run machinery (journal, fan-out, cancel, recovery) without a model.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Iterator

from traitlets import Float, Int
from traitlets.config import Configurable

from .approvals import ApprovalBroker, ApprovalRequest, pending_payload, resolved_payload
from .base import EventSink, TurnRequest, TurnResult

_COUNT_RE = re.compile(r"count to (\d+)", re.IGNORECASE)

DEMO_REPLY = (
    "Hello! I am the **offline demo agent** of hermes-jupyter: I run without a network and "
    "without a model, so everything here is canned.\n\n"
    "Try `count to 20` to watch a stream, or `use a tool` to see a tool card.\n\n"
    "To talk to a real model, start Jupyter with `--HermesJupyter.backend=openai` and set "
    "`OPENAI_BASE_URL`, `OPENAI_MODEL` and `OPENAI_API_KEY` (any OpenAI-compatible server, "
    "such as llama.cpp or vLLM), or use `--HermesJupyter.backend=hermes` to drive Hermes Agent."
)

Step = tuple[str, dict[str, Any]]
#: A script step that asks for approval instead of emitting an event.
APPROVAL_STEP = "_approval"
DANGEROUS = "rm -rf ./scratch"


def _words(text: str) -> Iterator[Step]:
    for word in re.findall(r"\S+\s*|\s+", text):
        yield "token", {"text": word}


def demo_script(message: str, max_count: int) -> Iterator[Step]:
    """The events the demo agent emits for a prompt, in order (without the terminal event)."""
    match = _COUNT_RE.search(message)
    if match:
        n = min(int(match.group(1)), max_count)
        for i in range(1, n + 1):
            yield "token", {"text": str(i) if i == 1 else f" {i}"}
        return
    if "use a tool" in message.lower():
        yield "reasoning", {"text": "The user wants to see a tool call; I will list the demo files."}
        for word in ["Let", " me", " look", " at", " the", " files", " first."]:
            yield "token", {"text": word}
        args = {"command": "ls demo/"}
        yield "tool", {"tid": "demo-tool-1", "name": "terminal", "args": args, "preview": "ls demo/"}
        yield "tool_complete", {
            "tid": "demo-tool-1", "name": "terminal", "preview": "data.csv\nnotes.md",
            "duration": 0.01, "is_error": False,
        }
        for word in ["There", " are", " two", " files:", " `data.csv`", " and", " `notes.md`."]:
            yield "token", {"text": word}
        return
    if "ask for approval" in message.lower():
        yield from _words("I would like to clean the scratch folder; that needs your approval.")
        yield "tool", {"tid": "demo-tool-2", "name": "terminal", "args": {"command": DANGEROUS},
                       "preview": DANGEROUS}
        yield APPROVAL_STEP, {}
        return
    for word in re.findall(r"\S+\s*|\s+", DEMO_REPLY):
        yield "token", {"text": word}


class DemoAgent(Configurable):
    """Offline, deterministic agent; `token_delay` paces its events."""

    name = "demo"

    token_delay = Float(
        0.02, config=True, help="Seconds between two demo events (default 0.02; 0 streams as fast as possible)."
    )
    max_count = Int(1_000_000, config=True, help="Largest N that `count to N` honours.")

    approval_timeout = Float(300.0, config=True, help="Seconds the demo waits for an approval before it counts as a deny.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stops: dict[str, asyncio.Event] = {}
        #: Set by the server; without it every approval is denied.
        self.approvals: ApprovalBroker | None = None

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult:
        stop = self._stops.setdefault(request.run_id, asyncio.Event())
        text: list[str] = []
        try:
            for i, (event, payload) in enumerate(demo_script(request.message, self.max_count)):
                if await self._paused(stop, i):
                    return _result("".join(text), interrupted=True)
                if event == APPROVAL_STEP:
                    text.append(await self._approve(request, sink))
                    continue
                sink.emit(event, payload)
                if event == "token":
                    text.append(payload["text"])
            return _result("".join(text))
        finally:
            self._stops.pop(request.run_id, None)

    async def _approve(self, request: TurnRequest, sink: EventSink) -> str:
        """Ask for approval (journaled), then report what the demo would have done; nothing ever runs."""
        approval = ApprovalRequest(
            run_id=request.run_id, session_id=request.session_id, approval_id="demo-approval-1",
            command=DANGEROUS, description="Delete the scratch folder", timeout_s=self.approval_timeout,
        )
        if self.approvals is not None:
            choice = await self.approvals.request(sink, approval)
        else:
            sink.emit("approval", pending_payload(approval))
            choice = "deny"
            sink.emit("approval", resolved_payload(approval.approval_id, choice, "no approval handler"))
        allowed = choice == "allow_once"
        sink.emit("tool_complete", {
            "tid": "demo-tool-2", "name": "terminal", "duration": 0.0, "is_error": not allowed,
            "preview": "approved (the demo agent never runs anything)" if allowed else "denied: nothing was run",
        })
        reply = " Approved, so I would have cleaned it." if allowed else " You said no, so I left it alone."
        sink.emit("token", {"text": reply})
        return reply

    async def _paused(self, stop: asyncio.Event, index: int) -> bool:
        """Wait one `token_delay` (or yield now and then at 0); True if interrupted meanwhile."""
        if self.token_delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), self.token_delay)
            except TimeoutError:
                pass
        elif index % 64 == 0:
            await asyncio.sleep(0)
        return stop.is_set()

    async def interrupt(self, run_id: str) -> None:
        self._stops.setdefault(run_id, asyncio.Event()).set()

    async def aclose(self) -> None:
        for stop in self._stops.values():
            stop.set()


def _result(text: str, *, interrupted: bool = False) -> TurnResult:
    context = [{"role": "assistant", "content": text}] if text else []
    return TurnResult(final_text=text, context=context, outcome="interrupted" if interrupted else "completed")
