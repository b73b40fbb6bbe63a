"""A stored turn's long answer is written once in the sidecar (it is its message row's text), and read back whole."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_jupyter import jsonstream
from hermes_jupyter.sessions.shared_text import MIN_SHARED, TABLE
from hermes_jupyter.sessions.store import LONG_TEXT_KEYS, NESTED_LIST_KEYS, CorruptSession, Session, SessionStore
from hermes_jupyter.transcript.rows import AssistantRow, ReasoningRow, ToolRow
from hermes_jupyter.transcript.turns import StoredTurn

ANSWER = "The mean of the sample is 4.2; the median is 3.9. " * 40  # ~2 kB, past MIN_SHARED
THOUGHT = "First look at the column types, then at the outliers. " * 20


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "sessions")
    yield s
    s.close()


def session_with(answer: str, thought: str = "", *, message_answer: str | None = None) -> Session:
    """A settled turn as the merge leaves it: the message row holds the row's very text objects."""
    rows: list[Any] = []
    message: dict[str, Any] = {"role": "assistant", "content": answer if message_answer is None else message_answer}
    if thought:
        rows.append(ReasoningRow(id="r1:r:0", text=thought))
        message["reasoning"] = thought
    rows += [AssistantRow(id="r1:a:0", text=answer),
             ToolRow(id="r1:tool:t1", tid="t1", name="terminal", args={"command": "ls"}, preview="ok", status="done")]
    return Session("s1", messages=[{"role": "user", "content": "describe the sample"}, message],
                   turns=[StoredTurn(run_id="r1", status="completed", rows=rows)])


def written(store: SessionStore, session: Session) -> bytes:
    store.save(session)
    return store.path(session.session_id).read_bytes()


def test_a_long_answer_and_its_reasoning_are_written_once_and_read_back_as_the_same_turn(store: SessionStore) -> None:
    session = session_with(ANSWER, THOUGHT)
    raw = written(store, session)
    assert raw.count(ANSWER.encode()) == 1 and raw.count(THOUGHT.encode()) == 1
    loaded = store.load("s1", use_cache=False)
    assert loaded.turns == session.turns
    assert loaded.to_json()["turns"] == session.to_json()["turns"]  # what GET sessions/{sid} shows
    answer_row = loaded.turns[0].rows[1]
    assert isinstance(answer_row, AssistantRow) and answer_row.text is loaded.messages[1]["content"]
    assert written(store, loaded).count(ANSWER.encode()) == 1  # and so written once again


def test_an_edited_message_never_changes_the_turn(store: SessionStore) -> None:
    """Only the same string object is shared: a message whose text was replaced (even by equal words) leaves
    the turn's own text written out."""
    equal_copy = "".join(list(ANSWER))
    session = session_with(ANSWER, message_answer="An edited answer. " * 60)
    assert written(store, session).count(ANSWER.encode()) == 1
    assert store.load("s1", use_cache=False).turns == session.turns
    session = session_with(ANSWER, message_answer=equal_copy)
    assert written(store, session).count(ANSWER.encode()) == 2


def test_a_short_answer_is_written_out_in_its_row(store: SessionStore) -> None:
    short = "Four."
    assert len(short) < MIN_SHARED
    raw = written(store, session_with(short))
    assert TABLE.encode() not in raw
    assert store.load("s1", use_cache=False).turns[0].rows[0] == AssistantRow(id="r1:a:0", text=short)


def planted(store: SessionStore, change: Any) -> None:
    """The written sidecar of a shared answer, its first turn changed by `change`, written back."""
    written(store, session_with(ANSWER, THOUGHT))
    path = store.path("s1")
    data = json.loads(path.read_bytes())
    change(data["turns"][0])
    path.write_bytes(orjson.dumps(data))


def _set(key: str, value: Any) -> Any:
    return lambda turn: turn.__setitem__(key, value)


@pytest.mark.parametrize("change", [
    _set(TABLE, {"assistant": [1, 1, "r1:a:0"]}),  # not a flat list
    _set(TABLE, [1, 1, "assistant"]),  # not four values a row
    _set(TABLE, [1, 1, "tool", "r1:a:0"]),  # a kind that shares nothing
    _set(TABLE, [1, 7, "assistant", "r1:a:0"]),  # no such message
    _set(TABLE, [1, 0, "reasoning", "r1:a:0"]),  # a message without reasoning
    _set(TABLE, [1, "1", "assistant", "r1:a:0"]),
    _set(TABLE, [9, 1, "assistant", "r1:a:0"]),  # past the turn's end
    _set(TABLE, [0, 1, "assistant", "r1:a:0", 0, 1, "reasoning", "r1:r:0"]),  # one place twice
    _set(TABLE, [-1, 1, "assistant", "r1:a:0"]),
    _set("rows", {"not": "a list"}),
])
def test_a_table_that_does_not_fit_its_turn_is_a_corrupt_sidecar_left_in_place(
    store: SessionStore, change: Any
) -> None:
    planted(store, change)
    before = store.path("s1").read_bytes()
    with pytest.raises(CorruptSession):
        store.load("s1", use_cache=False)
    assert store.path("s1").read_bytes() == before


SCALARS = st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from(["assistant", "reasoning", "tool", ""])
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=9) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(table=JSON)
def test_any_table_either_reads_back_or_is_a_corrupt_sidecar(
    tmp_path_factory: pytest.TempPathFactory, table: Any
) -> None:
    store = SessionStore(tmp_path_factory.mktemp("fuzz") / "sessions")
    try:
        planted(store, _set(TABLE, table))
        try:
            loaded = store.load("s1", use_cache=False)
        except CorruptSession:
            return
        assert all(isinstance(row, msgspec.Struct) for turn in loaded.turns for row in turn.rows)
    finally:
        store.close()


# -- the writer ----------------------------------------------------------------------------------------

def test_rows_encoded_in_c_are_the_json_of_their_builtins() -> None:
    rows = [ToolRow(id=f"r:tool:{n}", tid=str(n), name="terminal", args={"path": Path("/x")}, status="done")
            for n in range(200)]
    data = {"turns": [{"run_id": "r", "rows": rows}], "n": 1}
    pieces = jsonstream.iter_object(data, LONG_TEXT_KEYS, NESTED_LIST_KEYS)
    decoded = orjson.loads(b"".join(pieces))
    assert decoded["turns"][0]["rows"] == [msgspec.to_builtins(r, enc_hook=str) for r in rows]


def test_a_flush_of_many_small_items_holds_about_their_size_not_orjsons_spare_room() -> None:
    """orjson's result keeps the buffer it wrote into (~16 kB for 64 small numbers): held as they came,
    a flush of small items cost ~50× their size (16 MB for a turn's table of 20,000 shared rows)."""
    turn = {"run_id": "r", "rows": [], TABLE: [n for n in range(80_000)]}
    tracemalloc.start()
    try:
        for _ in jsonstream.iter_object({"turns": [turn]}, LONG_TEXT_KEYS, NESTED_LIST_KEYS):
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * jsonstream.FLUSH_BYTES + (1 << 20)


def test_an_object_of_many_small_values_holds_about_their_size_too() -> None:
    """The same for members written one by one (`_Buffer.add`): a slice of a whole result is that very
    result, so only a copy gives orjson's spare room back."""
    data = {f"key{n}": {"n": n} for n in range(5_000)}
    tracemalloc.start()
    try:
        for _ in jsonstream.iter_object(data):
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20  # a flush's small pieces cost their object headers; held as orjson left them, 21 MB
