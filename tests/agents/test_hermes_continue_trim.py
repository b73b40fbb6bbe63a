"""Hermes' continuation never repeats what the user already sees: the translator trims a re-sent opening."""

from __future__ import annotations

from hermes_jupyter.agents.hermes.protocol import TurnTranslator
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
