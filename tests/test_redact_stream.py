"""A secret split across stream deltas is masked as if it came whole (redact_stream.py, docs/journal.md).

The property: for any split of a text into deltas, the joined text the stream releases equals the
redaction of the joined text. Each example test fails on the old per-delta redaction.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_jupyter.redact import Redactor
from hermes_jupyter.redact_stream import StreamRedactor, safe_cut

KEY = "sk-proj-AbCdEf0123456789GhIjKlMn"
KNOWN = Redactor.from_values(["correct horse battery staple", "pässwort-Geheim9", "plantedKEY-4f1c9e0a77b2-hj"])

PIECES = [
    "Your key is ", KEY, " and ", "password = hunter2hunter2", ' {"api_key": "zzYYxx998877"} ',
    "Bearer abcdefghijklmnop1234 ", "token abcdefghijklmnopqrstuv", " https://bob:s3cr3tpw@example.com/x ",
    "correct horse battery staple", " 密码pässwort-Geheim9好 ", "plantedKEY-4f1c9e0a77b2-hj", "\n",
    "AKIAABCDEFGHIJKLMNOP", " eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f ", "ghp_abcdefghijklmnopqrstuvwxyz0123",
    "the token is here. ", "中文没有空格的句子", "é", " ", "password:", "'xyz12345abc'", "ab", "-", "=", ":",
]


def streamed(text: str, cuts: list[int], redactor: Redactor = KNOWN) -> str:
    stream = StreamRedactor(redactor)
    out: list[str] = []
    points = sorted({c for c in cuts if 0 < c < len(text)})
    for start, end in zip([0, *points], [*points, len(text)]):
        out += [piece for _, piece in stream.feed("token", text[start:end])]
    held = stream.flush()
    return "".join(out) + (held[1] if held else "")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=10), st.lists(st.integers(0, 400), max_size=60))
def test_any_split_of_a_text_is_released_as_the_redaction_of_the_whole(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    assert streamed(text, cuts) == KNOWN.text(text)


def test_a_key_in_1_4_and_400_character_deltas_is_masked_whole() -> None:
    text = f"Here it is: {KEY}. Use it well. " * 3
    for size in (1, 4, 400):
        out = streamed(text, list(range(size, len(text), size)))
        assert out == KNOWN.text(text) and KEY not in out and KEY[:12] not in out, size


def test_ordinary_words_hold_only_the_current_word() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("token", "Hello there, wor") == [("token", "Hello there, ")]
    assert stream.held == "wor"
    assert stream.feed("token", "ld. ") == [("token", "world. ")] and stream.held == ""


def test_text_without_spaces_holds_only_its_ascii_tail() -> None:
    assert safe_cut("中文没有空格的句子") == len("中文没有空格的句子")
    assert safe_cut("中文abc") == 2


def test_an_open_assignment_and_a_bearer_are_held_until_their_value_ends() -> None:
    assert safe_cut("ok. password = ") == len("ok. ")
    assert safe_cut('ok. "api_key": "zz') == len("ok. ")
    assert safe_cut("send Bearer ") == len("send ")
    assert safe_cut("Authorization: Bearer ") == 0  # the header name is a secret name too


def test_another_stream_or_a_flush_releases_the_held_text_in_order() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("reasoning", "think") == []
    assert stream.feed("token", "Answer") == [("reasoning", "think")]
    assert stream.flush() == ("token", "Answer") and stream.flush() is None


def test_a_word_longer_than_the_hold_cap_is_released_in_pieces() -> None:
    stream = StreamRedactor(Redactor())
    rows = [row for _ in range(3000) for row in stream.feed("token", "abcd")]
    assert rows and len(stream.held) <= 4096
    held = stream.flush()
    assert "".join(t for _, t in rows) + (held[1] if held else "") == "abcd" * 3000
