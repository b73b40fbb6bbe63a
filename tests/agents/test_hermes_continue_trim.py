"""Hermes' continuation never repeats what the user already sees: the translator trims a re-sent opening."""

from __future__ import annotations

from hermes_jupyter.agents.hermes.protocol import TurnTranslator, merge_continuations
from tests.fakes.recording_sink import RecordingSink

KEPT = "Once upon a time there was a friendly dragon named E"


def _fed(kept: str | None, *deltas: str, final: str = "") -> tuple[RecordingSink, str]:
    sink = RecordingSink()
    translator = TurnTranslator(sink, kept=kept)
    for text in deltas:
        translator.feed({"ev": "delta", "text": text})
    result = translator.finish({"ev": "result", "completed": True, "final_response": final})
    return sink, result.final_text


def test_a_restarted_answer_shows_only_the_rest() -> None:
    words = (KEPT + "mber who loved tea.").split(" ")
    sink, text = _fed(KEPT, *[w if i == 0 else " " + w for i, w in enumerate(words)])
    assert sink.text() == text == "mber who loved tea."


def test_a_continuation_that_only_repeats_shows_nothing_and_is_not_re_sent_from_the_final() -> None:
    sink, text = _fed(KEPT, KEPT, final=KEPT)
    assert sink.text() == text == ""


def test_new_text_passes_and_an_ordinary_turn_is_untouched() -> None:
    assert _fed(KEPT, "mber", " who loved tea.")[1] == "mber who loved tea."
    assert _fed(None, "Hello", " there")[1] == "Hello there"
    assert _fed(None, final="Hi")[1] == "Hi"


# -- Hermes' own continuations (the runner's `call` / `call_end` messages) ---------------------------

def _hermes_continues(*answers: str, cut_last: bool = False) -> tuple[RecordingSink, str]:
    """One turn in which Hermes asks the model len(answers) times, each answer but the last cut by `length`."""
    sink = RecordingSink()
    translator = TurnTranslator(sink)
    for i, answer in enumerate(answers):
        translator.feed({"ev": "call"})
        for word in answer.split(" "):
            translator.feed({"ev": "delta", "text": word + " "})
        cut = i < len(answers) - 1 or cut_last
        translator.feed({"ev": "call_end", "ok": True, "finish": "length" if cut else "stop", "stub": False})
    failed = {"completed": False, "error": "Response remained truncated after 4 continuation attempts"}
    result = translator.finish({"ev": "result", **(failed if cut_last else {"completed": True})})
    return sink, result.final_text


def test_a_continuation_hermes_asked_for_shows_only_what_is_new() -> None:
    sink, text = _hermes_continues("Once upon a time there", "Once upon a time there was a dragon")
    assert sink.text() == text == "Once upon a time there was a dragon "


def test_an_answer_that_stays_cut_is_shown_once() -> None:
    sink, text = _hermes_continues(*["Once upon a time there"] * 4, cut_last=True)
    assert sink.text() == text == "Once upon a time there "


def test_a_new_request_after_a_normal_answer_is_not_trimmed() -> None:
    sink = RecordingSink()
    translator = TurnTranslator(sink)
    for _ in range(2):  # e.g. the model answers, calls a tool, then says the same words again
        translator.feed({"ev": "call"})
        translator.feed({"ev": "delta", "text": "I will check the file now. "})
        translator.feed({"ev": "call_end", "ok": True, "finish": "stop", "stub": False})
    assert translator.finish({"ev": "result", "completed": True}).final_text == "I will check the file now. " * 2


def test_the_history_joins_hermes_continuations_into_one_answer() -> None:
    context = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t1"}], "finish_reason": "tool_calls"},
        {"role": "tool", "content": "42", "tool_call_id": "t1"},
        {"role": "assistant", "content": "The answer is 4", "finish_reason": "length"},
        {"role": "user", "content": "[System: Your previous response was truncated by the output length limit.]"},
        {"role": "assistant", "content": "The answer is 42.", "finish_reason": "stop"},
    ]
    merged = merge_continuations(context)
    assert [m["role"] for m in merged] == ["assistant", "tool", "assistant"]
    assert merged[-1]["content"] == "The answer is 42." and merged[-1]["finish_reason"] == "stop"
    assert merge_continuations(context[:2]) == context[:2]
