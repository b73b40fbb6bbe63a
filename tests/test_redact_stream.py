"""A secret split across stream deltas is masked as if it came whole (redact_stream.py, docs/journal.md).

The property: for any split of a text into deltas, the joined text the stream releases equals the
redaction of the joined text. Only what could still become a secret part is held: ordinary words
are released in the delta they come in, a secret's name is released and its value masked when it
comes (matching sees the released text before it).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_jupyter.redact import MASK, Redactor
from hermes_jupyter.redact_stream import StreamRedactor, hold_start

KEY = "sk-proj-AbCdEf0123456789GhIjKlMn"
KNOWN = Redactor.from_values(["correct horse battery staple", "pässwort-Geheim9", "plantedKEY-4f1c9e0a77b2-hj"])

PIECES = [
    "Your key is ", KEY, " and ", "password = hunter2hunter2", ' {"api_key": "zzYYxx998877"} ',
    "Bearer abcdefghijklmnop1234 ", "token abcdefghijklmnopqrstuv", " https://bob:s3cr3tpw@example.com/x ",
    "correct horse battery staple", " 密码pässwort-Geheim9好 ", "plantedKEY-4f1c9e0a77b2-hj", "\n",
    "AKIAABCDEFGHIJKLMNOP", " eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f ", "ghp_abcdefghijklmnopqrstuvwxyz0123",
    "the token is here. ", "中文没有空格的句子", "é", " ", "password:", "'xyz12345abc'", "ab", "-", "=", ":",
    # pieces that glue to what came before: a name, then its value; a key's start after a word
    "api_key", "secret", "Bearer", "token", "pass", "word", "hf_abcdefghijklmnopqrstuvwxyz0123456", "xoxb-1234567890ab",
    "correct ", "horse", "planted", "x", "s", "k-", "@", "/", "https:", "//", "The ", "is ", "==", ".", "中",
    "AKIA", "ABCDEFGHIJKLMNOP", "eyJ", "hjk_", "_", '"', "'", "; ", "Authorization: ", "AIza", "0123456789", "\t",
]


def streamed(text: str, cuts: list[int], redactor: Redactor = KNOWN) -> str:
    stream = StreamRedactor(redactor)
    out: list[str] = []
    points = sorted({c for c in cuts if 0 < c < len(text)})
    for start, end in zip([0, *points], [*points, len(text)]):
        out += [piece for _, piece in stream.feed("token", text[start:end])]
    held = stream.flush()
    return "".join(out) + (held[1] if held else "")


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12), st.lists(st.integers(0, 400), max_size=60))
def test_any_split_of_a_text_is_released_as_the_redaction_of_the_whole(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    assert streamed(text, cuts) == KNOWN.text(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12))
def test_delta_by_delta_as_the_pieces_come(pieces: list[str]) -> None:
    text = "".join(pieces)
    cuts = [sum(len(p) for p in pieces[:i]) for i in range(1, len(pieces))]
    assert streamed(text, cuts) == KNOWN.text(text)


FRAGMENTS = [*"abcsk-_=:'\" \n.@/AKIAhfeyJ中é12;", "password", "token ", "Bearer ", "api_key", "://", "sk-", "correct ",
             "horse ", "plantedKEY-4f1c9e0a77b2-hj", "hjk_"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=40), st.integers(1, 6))
def test_any_text_of_small_fragments_in_deltas_of_any_size(fragments: list[str], size: int) -> None:
    text = "".join(fragments)
    assert streamed(text, list(range(size, len(text), size))) == KNOWN.text(text)


def test_a_name_inside_the_value_of_bearer_is_no_name() -> None:
    text = " = passworde'Aba server'Bearer yapi_keyABearer :.céapi_key\n:Ktoken cIBearer a serverh"
    assert streamed(text, list(range(1, len(text)))) == KNOWN.text(text)


def test_a_key_in_1_4_and_400_character_deltas_is_masked_whole() -> None:
    text = f"Here it is: {KEY}. Use it well. " * 3
    for size in (1, 4, 400):
        out = streamed(text, list(range(size, len(text), size)))
        assert out == KNOWN.text(text) and KEY not in out and KEY[:12] not in out, size


def test_ordinary_words_are_released_in_the_delta_they_come_in() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("token", "Hello there, wor") == [("token", "Hello there, wor")]
    assert stream.held == ""
    assert stream.feed("token", "ld. The") == [("token", "ld. The")] and stream.held == ""


def test_text_without_spaces_is_released_whole() -> None:
    assert hold_start("中文没有空格的句子", 0) == len("中文没有空格的句子")
    assert hold_start("中文abc", 0) == len("中文abc")


def test_a_name_is_released_and_its_value_in_the_next_delta_masked() -> None:
    for name, value in (("api_key", "=zzYYxx998877 and"), ('"api_key": ', '"zzYYxx998877"}'), ("password = ", "hunter2hunter2 ok")):
        stream = StreamRedactor(KNOWN)
        assert stream.feed("token", f"set {name}") == [("token", f"set {name}")], name
        rows = stream.feed("token", value)
        assert "zzYY" not in "".join(t for _, t in rows) and "hunter2" not in "".join(t for _, t in rows)
        held = stream.flush()
        out = f"set {name}" + "".join(t for _, t in rows) + (held[1] if held else "")
        assert out == KNOWN.text(f"set {name}{value}") and MASK in out, name


def test_an_open_value_is_held_from_its_start_and_masked_when_it_ends() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("token", "ok. password = hun") == [("token", "ok. password = ")]
    assert stream.held == "hun"
    assert stream.feed("token", "ter2hunter2, done") == [("token", f"{MASK}, done")]


def test_bearer_is_released_and_the_token_after_it_held_then_masked() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("token", "send Bearer") == [("token", "send Bearer")]
    assert stream.feed("token", " abcdefgh") == [("token", " ")] and stream.held == "abcdefgh"
    assert stream.feed("token", "ijklmnop1234 now") == [("token", f"{MASK} now")]


def test_a_tail_that_begins_a_known_secret_or_a_key_is_held() -> None:
    stream = StreamRedactor(KNOWN)
    # held from the start of its word: a crash never leaves half a word in the journal
    assert stream.feed("token", "it is xyplanted") == [("token", "it is ")] and stream.held == "xyplanted"
    assert stream.feed("token", "KEY-4f1c9e0a77b2-hjs") == [("token", f"xy{MASK}")]  # `s` may begin a key
    assert stream.feed("token", "k-proj-AbCdEf0123456789GhIjKlMn ") == [("token", f"{MASK} ")]
    assert hold_start("the key: sk-pr", 0) == len("the key: ")
    assert hold_start("say correct horse", 0, tuple(KNOWN.known)) == len("say ")  # a known secret with spaces, begun
    assert hold_start("use https:/", 0) == len("use https:/")  # no `://` yet: nothing secret begun


def test_another_stream_or_a_flush_releases_the_held_text_in_order() -> None:
    stream = StreamRedactor(KNOWN)
    assert stream.feed("reasoning", "think sk") == [("reasoning", "think ")]
    assert stream.feed("token", "Answer") == [("reasoning", "sk"), ("token", "Answer")]
    assert stream.feed("token", " hjk_") == [("token", " ")]
    assert stream.flush() == ("token", "hjk_") and stream.flush() is None


def test_a_held_run_longer_than_the_hold_cap_is_released_in_pieces() -> None:
    stream = StreamRedactor(Redactor())
    rows = [row for piece in ["sk-", *["abcd"] * 3000] for row in stream.feed("token", piece)]
    assert rows and len(stream.held) <= 4096
    assert rows[0] == ("token", MASK)  # what is let go is still redacted, as far as it goes


def test_a_number_that_ends_in_a_known_secrets_first_character_is_held_whole() -> None:
    """Counting past a number whose last digit begins a known secret: the number is held whole, so
    the journal (and a partial answer recovered after a crash) never ends in half a number."""
    stream = StreamRedactor(Redactor.from_values(["1234abcd9876"]))
    assert stream.feed("token", " 40") == [("token", " 40")]
    assert stream.feed("token", " 41") == [("token", " ")] and stream.held == "41"
    assert stream.feed("token", " 42") == [("token", "41 42")]

