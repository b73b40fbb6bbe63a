"""How an answer ends, said truly (docs/api.md "How an answer ends"), against LLMock, a third-party mock.

Each test scripts one ending — a length stop, a content filter, an empty stream, a refused request of
each kind, a long Retry-After, a silent provider, missing usage, a continuation that re-sends what is
kept — and checks the turn's kind, that the user's sentence is the table's (the provider's words only in
the detail), and that the part that arrived is kept.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hermes_jupyter.agents.base import Continuation, TurnRequest, TurnResult
from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.agents.usage import usage_payload
from hermes_jupyter.events import JournalRow
from hermes_jupyter.transcript import fold
from hermes_jupyter.transcript.rows import NoteRow
from tests.fakes.openai_stub_server import OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink

llmock_testing = pytest.importorskip("llmock.testing")
from llmock.scenarios import Match, Reply, SlowFirstToken  # noqa: E402

STORY = "Once upon a time there was a friendly dragon named Ember who loved tea."
KEPT = "Once upon a time there was a friendly dragon named E"
#: A continuation first asks the server's `models` list (whether it can prefill): script only the chat request.
CHAT = Match(stream=True)


def _turn(base_url: str, request: TurnRequest | None = None, **traits: Any) -> tuple[TurnResult, RecordingSink]:
    traits.setdefault("retry_backoff", 0.05)
    traits.setdefault("model", "gpt-4o-mini")
    agent = OpenAIAgent(base_url=base_url, api_key="sk-test", **traits)
    sink = RecordingSink()
    request = request or TurnRequest(session_id="s", run_id="r", message="Tell me a story.", history=[])

    async def go() -> TurnResult:
        try:
            return await agent.run_turn(request, sink)
        finally:
            await agent.aclose()

    return asyncio.run(go()), sink


def _continuing(partial: str = KEPT) -> TurnRequest:
    history = [{"role": "user", "content": "Tell me a story."}, {"role": "assistant", "content": partial}]
    return TurnRequest(session_id="s", run_id="r2", message="Tell me a story.", history=history,
                       continues=Continuation(run_id="r1", partial=partial))


def _failed(result: TurnResult, kind: str) -> str:
    assert result.outcome == "errored" and result.error is not None, result
    assert result.error.kind == kind and result.error.message == ERRORS[kind].message  # type: ignore[index]
    return result.error.detail or ""


def test_a_length_stop_is_length_limit_with_the_partial_kept(llmock: Any) -> None:
    llmock.add(Reply(text=KEPT, finish_reason="length"))
    result, sink = _turn(llmock.base_url("openai"))

    assert "finish_reason=length" in _failed(result, "length_limit")
    assert result.final_text == KEPT == sink.text() and result.context[-1]["content"] == KEPT
    assert "length limit" in result.error.message and "Continue" in result.error.message  # type: ignore[union-attr]


def test_a_content_filter_stop_is_its_own_ending_without_continue(llmock: Any) -> None:
    llmock.add(Reply(text="I can tell you that", finish_reason="content_filter"))
    result, sink = _turn(llmock.base_url("openai"))

    _failed(result, "content_filter")
    assert result.final_text == "I can tell you that" == sink.text()
    assert "Continue" not in result.error.message  # type: ignore[union-attr]


def test_an_empty_stream_is_empty_answer_not_a_cut(llmock: Any) -> None:
    llmock.add(Reply(text=""))
    result, sink = _turn(llmock.base_url("openai"))

    assert "no text and no tool call" in _failed(result, "empty_answer")
    assert result.final_text == "" and sink.payloads("token") == []
    assert "too long" in result.error.message and "kept" not in result.error.message  # type: ignore[union-attr]


@pytest.mark.parametrize(("message", "code", "kind"), [
    ("/chat/completions: Invalid model name passed in model=gpt-9. Call `/v1/models` to view available models",
     None, "model_not_found"),
    ("The model `gpt-9` does not exist or you do not have access to it.", "model_not_found", "model_not_found"),
    ("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
     "context_length_exceeded", "context_too_long"),
    ("temperature: Input should be less than or equal to 2", "invalid_request_error", "bad_request"),
])
def test_a_400_is_classified_by_what_it_says(llmock: Any, message: str, code: str | None, kind: str) -> None:
    llmock.fail(400, message=message, code=code)
    result, sink = _turn(llmock.base_url("openai"))

    detail = _failed(result, kind)
    assert detail.startswith("HTTP 400") and message[:40] in detail
    assert message[:20] not in result.error.message  # type: ignore[union-attr]
    assert "OpenAI-compatible" not in result.error.message and sink.payloads("status") == []  # type: ignore[union-attr]


def test_a_retry_after_longer_than_we_wait_says_the_time(llmock: Any) -> None:
    llmock.fail(503, retry_after=120, times=1)
    result, sink = _turn(llmock.base_url("openai"), retry_max_wait=5)

    assert result.error is not None and result.error.kind == "provider_error"
    assert "asked to wait 2 minutes" in result.error.message and "retrying" not in result.error.message
    assert sink.payloads("status") == [] and len(llmock.requests) == 1


def test_a_silent_provider_shows_that_the_model_is_being_waited_for(llmock: Any) -> None:
    llmock.add(SlowFirstToken(1.2))
    result, sink = _turn(llmock.base_url("openai"), waiting_note_after=0.3)

    assert result.outcome == "completed" and result.final_text == sink.text()
    notes = sink.payloads("status")
    assert len(notes) >= 2 and all(n["level"] == "info" and n["kind"] == "waiting" for n in notes)
    assert {n["wait_id"] for n in notes} == {"wait-1"}, "one wait, one note"
    assert all(n["text"].startswith("Waiting for the model (") for n in notes[:-1])
    assert notes[-1]["text"].startswith("The model took ") and notes[-1]["text"].endswith(" s to start answering.")
    first_token = sink.names().index("token")
    assert all(i < first_token for i, name in enumerate(sink.names()) if name == "status")
    shown = [row for row in _folded(sink).rows if isinstance(row, NoteRow)]
    assert [row.text for row in shown] == [notes[-1]["text"]]


class _SlowRefusal(BaseHTTPRequestHandler):
    """Answers every POST with a 400 after 0.8 s (LLMock answers its scripted errors at once)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        time.sleep(0.8)
        body = json.dumps({"error": {"message": "temperature must be at most 2"}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def test_a_refusal_after_a_wait_leaves_the_note_as_it_last_read() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowRefusal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result, sink = _turn(f"http://127.0.0.1:{server.server_port}/v1", waiting_note_after=0.3)
    finally:
        server.shutdown()
        server.server_close()

    _failed(result, "bad_request")
    notes = sink.payloads("status")
    assert notes and all(n["text"].startswith("Waiting for the model (") for n in notes), "no 'took' note"
    assert {(n["kind"], n["wait_id"]) for n in notes} == {("waiting", "wait-1")}


def _folded(sink: RecordingSink) -> Any:
    """What the user sees of the events the backend emitted (the journal's one fold)."""
    rows = [JournalRow(event_id=f"r:{seq}", seq=seq, run_id="r", session_id="s", event=name, payload=payload)
            for seq, (name, payload) in enumerate(sink.events, start=1)]
    return fold(rows, run_id="r", session_id="s")


def test_a_stalled_stream_fails_after_the_idle_limit_keeping_the_partial(llmock: Any) -> None:
    llmock.stall(after_chunks=2, seconds=5)
    result, sink = _turn(llmock.base_url("openai"), idle_timeout=0.5, waiting_note_after=0)

    _failed(result, "timeout")
    assert result.final_text and result.final_text == sink.text()


def test_usage_a_provider_did_not_report_is_null_not_zero(llmock: Any) -> None:
    result, _ = _turn(llmock.base_url("openai"), stream_usage=False)

    assert result.outcome == "completed" and "prompt_tokens" not in result.usage
    payload = usage_payload(result.usage, duration_s=1.0, model=None)
    assert payload["input_tokens"] is None and payload["output_tokens"] is None
    assert payload["model"] == "gpt-4o-mini"


def test_a_failed_turn_after_words_does_not_claim_zero_tokens(llmock: Any) -> None:
    llmock.disconnect(after_chunks=3)
    result, _ = _turn(llmock.base_url("openai"))

    assert result.final_text and result.error is not None and result.error.kind == "stream_cut"
    payload = usage_payload(result.usage, duration_s=1.0, model=None)
    assert payload["input_tokens"] is None and payload["output_tokens"] is None


def test_continue_after_a_length_stop_does_not_repeat_the_kept_text(llmock: Any) -> None:
    llmock.add(Reply(text=STORY, match=CHAT))  # the model restarts its answer, as small models do
    result, sink = _turn(llmock.base_url("openai"), _continuing())

    assert result.outcome == "completed"
    assert result.final_text == "mber who loved tea." == sink.text()
    sent = llmock.last_request.body["messages"]
    assert sent[-2] == {"role": "assistant", "content": KEPT} and sent[-1]["role"] == "user"


def test_continue_with_prefill_ends_the_request_with_the_partial_answer(llmock: Any) -> None:
    llmock.add(Reply(text="mber who loved tea.", match=CHAT))
    result, sink = _turn(llmock.base_url("openai"), _continuing(), continue_prefill="on")

    assert result.final_text == "mber who loved tea." == sink.text()
    assert llmock.last_request.body["messages"][-1] == {"role": "assistant", "content": KEPT}


def test_continue_after_a_cut_keeps_new_text_that_only_looks_like_the_end(llmock: Any) -> None:
    llmock.add(Reply(text=" named Ember.", match=CHAT))  # two words of overlap: too few to call a repeat
    result, sink = _turn(llmock.base_url("openai"), _continuing("The dragon was named"))

    assert result.final_text == " named Ember." == sink.text()


def test_an_error_chunk_mid_stream_is_classified_by_its_words() -> None:
    """A proxy's "Connection error" chunk: its upstream failed; the provider itself was reached."""
    with OpenAIStubServer() as stub:
        request = TurnRequest(session_id="s", run_id="r", message="error chunk: Connection error.", history=[])
        result, sink = _turn(stub.base_url, request, model="stub-model")

    assert "error reported mid-stream: Connection error." in _failed(result, "provider_error")
    assert result.final_text == "Almost" == sink.text()
