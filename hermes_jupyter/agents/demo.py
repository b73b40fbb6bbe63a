"""The offline demo agent (docs/demo-agent.md): deterministic, no network, the default backend.

It exists so that Binder, a laptop with no network and the tests all exercise
the real run machinery (journal, fan-out, cancel, recovery) without a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from itertools import chain
from typing import Any, AsyncGenerator, Iterator

from traitlets import Float, Int
from traitlets.config import Configurable

from ..events import PLAN, TOKEN, TOOL, TOOL_COMPLETE
from .answered import POLICY
from .approvals import ApprovalBroker, ApprovalRequest, pending_payload, resolved_payload
from .base import EventSink, TurnRequest, TurnResult
from .clarify import ClarifyBroker, ClarifyRequest, ask_journaled
from .models import model_entry
from .demo_analysis import analysis_steps, asks_for_analysis
from .demo_notebook import asks_for_the_notebook, notebook_steps
from .tools_registry import ToolsFactory
from .propose import PROPOSE_CELL, propose_cell
from .demo_edit import EDIT_PREFIX_RE, edit_request

_COUNT_RE = re.compile(r"count to (\d+)", re.IGNORECASE)

DEMO_REPLY = (
    "Hello! I am the **offline demo agent** of hermes-jupyter: I run without a network and "
    "without a model, so everything here is canned.\n\n"
    "Try `count to 20` to watch a stream, `use a tool` to see a tool card, `use the notebook` "
    "to have me look at your kernel's variables, or `analyse the sales data` to watch me edit and run cells.\n\n"
    "To talk to a real model, start Jupyter with `--HermesJupyter.backend=openai` and set "
    "`OPENAI_BASE_URL`, `OPENAI_MODEL` and `OPENAI_API_KEY` (any OpenAI-compatible server, "
    "such as llama.cpp or vLLM), or use `--HermesJupyter.backend=hermes` to drive Hermes Agent."
)

#: What the demo adds when it continues a reply that is not a count (it has nothing more to say).
CONTINUED_REPLY = "(The offline demo agent continues only `count to N`; that is all it had to say.)"

Step = tuple[str, dict[str, Any]]
#: A script step that asks for approval instead of emitting an event.
APPROVAL_STEP = "_approval"
#: A script step that asks the user a question (`clarify`) and replies quoting the answer.
CLARIFY_STEP = "_clarify"
DANGEROUS = "rm -rf ./scratch"
DEMO_QUESTION = "Shall I go on with the demo?"
#: The demo's models (`GET models`): names only, so the model picker has something to choose from.
DEMO_MODELS = (("demo", "Offline demo agent (no model)"), ("demo-large", "Offline demo agent, pretend large model"))
PLAN_STEPS = ("Read the question", "Sketch an answer", "Write it down")

CODE_REPLY = (
    "Here is the mean of a list in Python:\n\n"
    "```python\n"
    "def mean(xs: list[float]) -> float:\n"
    "    return sum(xs) / len(xs)\n"
    "\n"
    "print(mean([1.0, 2.0, 3.0]))\n"
    "```\n\n"
    "| input | mean |\n"
    "|---|---|\n"
    "| `[1, 2, 3]` | 2.0 |\n"
    "| `[4, 8]` | 6.0 |\n\n"
    "It computes $\\bar{x} = \\frac{1}{n}\\sum_i x_i$."
)


def _words(text: str) -> Iterator[Step]:
    for word in re.findall(r"\S+\s*|\s+", text):
        yield "token", {"text": word}


def demo_script(message: str, max_count: int, partial: str | None = None) -> Iterator[Step]:
    """The events the demo agent emits for a prompt, in order (without the terminal event).

    `partial` is the answer so far of a turn being continued (docs/demo-agent.md): `count to N`
    resumes from the last number in it + 1; any other prompt says there is nothing to add.
    """
    match = _COUNT_RE.search(message)
    if match:
        n = min(int(match.group(1)), max_count)
        start = _last_number(partial) + 1 if partial is not None else 1
        for i in range(start, n + 1):
            yield "token", {"text": str(i) if i == 1 else f" {i}"}
        return
    if partial is not None:
        yield from _words(CONTINUED_REPLY)
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
    if "ask me a question" in message.lower():
        yield from _words("I have a question for you first.")
        yield CLARIFY_STEP, {}
        return
    if "make a plan" in message.lower():
        yield from _plan()
        return
    if "write some code" in message.lower():
        yield from _words(CODE_REPLY)
        return
    if "ask for approval" in message.lower():
        yield from _words("I would like to clean the scratch folder; that needs your approval.")
        yield "tool", {"tid": "demo-tool-2", "name": "terminal", "args": {"command": DANGEROUS},
                       "preview": DANGEROUS}
        yield APPROVAL_STEP, {}
        return
    for word in re.findall(r"\S+\s*|\s+", DEMO_REPLY):
        yield "token", {"text": word}


def _last_number(text: str | None) -> int:
    """The last whole number in `text`, or 0 when it has none."""
    numbers = re.findall(r"\d+", text or "")
    return int(numbers[-1]) if numbers else 0


#: The cell `propose a cell` proposes (inserted at the end of the bound notebook once accepted; never run).
DEMO_PROPOSAL = 'print("Hello from the Hermes demo agent")'


def _acknowledged(attachments: list[dict[str, Any]]) -> Iterator[Step]:
    """A sentence naming what the user attached, so an offline turn shows the attachments reached the agent."""
    if attachments:
        counts = [len(str(a.get("text") or "").splitlines()) for a in attachments]
        names = ", ".join(f"{a.get('kind')} {a.get('label')} ({n} line{'' if n == 1 else 's'})"
                          for a, n in zip(attachments, counts))
        yield from _words(f"You attached {names}. ")


def _plan() -> Iterator[Step]:
    """A plan of three items, each completed in turn (the latest `plan` event replaces the items)."""
    for done in range(len(PLAN_STEPS) + 1):
        items = [{"text": text, "status": "completed" if i < done else "in_progress" if i == done else "pending"}
                 for i, text in enumerate(PLAN_STEPS)]
        yield PLAN, {"items": items}
        if done < len(PLAN_STEPS):
            yield from _words(f"{PLAN_STEPS[done]}: done. ")
    yield from _words("All three steps are complete.")


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
        #: Set by the server; without them every approval is denied and every question unanswered.
        self.approvals: ApprovalBroker | None = None
        self.clarify: ClarifyBroker | None = None
        #: The notebook tools (the server's one registry); without them `use the notebook` says how to bind.
        self.tools_factory: ToolsFactory | None = None

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult:
        if EDIT_PREFIX_RE.match(request.message):
            return await self._propose(request, sink, edit_request(request))
        if "propose a cell" in request.message.lower():
            return await self._propose(request, sink)
        stop = self._stops.setdefault(request.run_id, asyncio.Event())
        text: list[str] = []
        steps = self._steps(request, sink)
        try:
            async with contextlib.aclosing(steps):
                index = 0
                async for event, payload in steps:
                    if await self._paused(stop, index):
                        return _result("".join(text), request.message, interrupted=True)
                    index += 1
                    if event == APPROVAL_STEP:
                        text.append(await self._approve(request, sink))
                    elif event == CLARIFY_STEP:
                        text.append(await self._ask(request, sink))
                    else:
                        sink.emit(event, payload)
                        if event == TOKEN:
                            text.append(payload["text"])
            return _result("".join(text), request.message, model=request.model)
        finally:
            self._stops.pop(request.run_id, None)

    async def _steps(self, request: TurnRequest, sink: EventSink) -> AsyncGenerator[Step, None]:
        scene = (notebook_steps if asks_for_the_notebook(request.message)
                 else analysis_steps if asks_for_analysis(request.message) else None)
        if scene is not None:
            registry = self.tools_factory(request, sink) if self.tools_factory is not None else None
            async for step in scene(request, registry, _words):
                yield step
            return
        partial = request.continues.partial if request.continues is not None else None
        for step in chain(_acknowledged(request.attachments), demo_script(request.message, self.max_count, partial)):
            yield step

    async def _propose(self, request: TurnRequest, sink: EventSink, edit: Any = None) -> TurnResult:
        """`propose a cell` (a cell at the end of the bound notebook) or an edit-this-cell request (a new
        source for the attached cell, agents/demo_edit.py): one propose_cell call, deterministic."""
        path = request.notebook.notebook_path if request.notebook else None
        if not path:
            reply = "I can propose cells only for a notebook: bind this session to one first, then ask again."
        elif edit is not None and edit.args is None:
            reply = edit.reply
        else:
            args = edit.args if edit is not None else {"action": "insert_end", "source": DEMO_PROPOSAL,
                                                        "cell_type": "code"}
            sink.emit(TOOL, {"tid": "demo-propose-1", "name": PROPOSE_CELL, "args": args, "preview": args["source"]})
            result, is_error = await propose_cell(sink, args, notebook_path=path,
                                                  reader=edit.reader if edit is not None else None)
            sink.emit(TOOL_COMPLETE, {"tid": "demo-propose-1", "name": PROPOSE_CELL, "preview": result,
                                      "duration": 0.0, "is_error": is_error})
            reply = edit.reply if edit is not None else (
                "I proposed a cell at the end of the notebook. Accept it to insert it; it will not run.")
        for _, payload in _words(reply):
            sink.emit(TOKEN, payload)
        return _result(reply, request.message, model=request.model)

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
            sink.emit("approval", resolved_payload(approval.approval_id, choice, "no approval handler", POLICY))
        allowed = choice == "allow_once"
        sink.emit("tool_complete", {
            "tid": "demo-tool-2", "name": "terminal", "duration": 0.0, "is_error": not allowed,
            "preview": "approved (the demo agent never runs anything)" if allowed else "denied: nothing was run",
        })
        reply = " Approved, so I would have cleaned it." if allowed else " You said no, so I left it alone."
        sink.emit("token", {"text": reply})
        return reply

    async def _ask(self, request: TurnRequest, sink: EventSink) -> str:
        """Ask the demo question (journaled, choices yes/no) and reply quoting the answer."""
        question = ClarifyRequest(
            run_id=request.run_id, session_id=request.session_id, clarify_id="demo-clarify-1",
            question=DEMO_QUESTION, choices=("yes", "no"), timeout_s=self.approval_timeout,
        )
        answer = await ask_journaled(sink, self.clarify.ask if self.clarify else None, question)
        reply = f" You answered \u201c{answer}\u201d." if answer is not None else " Nobody answered, so I stopped there."
        sink.emit(TOKEN, {"text": reply})
        return reply

    async def list_models(self) -> tuple[str | None, list[dict[str, str]]]:
        return "demo", [model_entry(m, label) for m, label in DEMO_MODELS]

    async def _paused(self, stop: asyncio.Event, index: int) -> bool:
        """Wait one `token_delay` (or yield now and then at 0); True if interrupted meanwhile.

        A plain sleep, not `wait_for(stop.wait())`: that builds a task and a timer handle per
        token, a fifth of the server's CPU at 100 streams. A stop is seen within one delay.
        """
        if self.token_delay > 0:
            await asyncio.sleep(self.token_delay)
        elif index % 64 == 0:
            await asyncio.sleep(0)
        return stop.is_set()

    async def interrupt(self, run_id: str) -> None:
        self._stops.setdefault(run_id, asyncio.Event()).set()

    async def aclose(self) -> None:
        for stop in self._stops.values():
            stop.set()


def _result(text: str, message: str, *, interrupted: bool = False, model: str | None = None) -> TurnResult:
    """The demo's result; its usage counts words, so every demo turn has a `usage` event with numbers,
    naming the session's model (the demo answers the same whichever is chosen)."""
    context = [{"role": "assistant", "content": text}] if text else []
    usage = {"input_tokens": len(message.split()), "output_tokens": len(text.split()), "model": model or "demo",
             "our_count": True}
    return TurnResult(final_text=text, context=context, usage=usage,
                      outcome="interrupted" if interrupted else "completed")
