"""Sidecars are encoded a piece at a time: the same JSON, in bounded pieces, long texts in slices."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter import jsonstream
from hermes_jupyter.sessions.store import Session, SessionStore


@pytest.mark.parametrize("data", [
    {},
    {"empty": [], "none": None, "nested": {"a": [1, {"b": "c"}]}},
    {"messages": [{"role": "user", "content": "hi \"there\"\n\\"}, 3, [1, 2]], "n": 1.5},
])
def test_the_pieces_are_the_json_of_the_object(data: dict[str, Any]) -> None:
    assert json.loads(b"".join(jsonstream.iter_object(data))) == data


def test_a_long_text_is_encoded_in_slices_that_join_to_the_same_string() -> None:
    long = ("é\"\\\n\t\u2028 x" * (jsonstream.LONG_TEXT // 3))[: jsonstream.LONG_TEXT * 3 + 7]
    data = {"messages": [{"role": "assistant", "content": long, "reasoning": "r" * (jsonstream.LONG_TEXT + 1)}]}
    pieces = list(jsonstream.iter_object(data, ("content", "reasoning")))
    assert len(pieces) > 2
    assert json.loads(b"".join(pieces)) == data


def test_no_piece_grows_far_past_the_flush_size() -> None:
    items = [{"role": "assistant", "content": f"segment {i} " * 30} for i in range(20_000)]
    pieces = list(jsonstream.iter_object({"messages": items, "context_messages": items}))
    assert len(pieces) > 10
    assert max(len(p) for p in pieces) < jsonstream.FLUSH_BYTES + jsonstream.BATCH * 512  # items of < 512 bytes


def test_values_json_has_no_type_for_are_written_as_text() -> None:
    assert json.loads(b"".join(jsonstream.iter_object({"when": Path("/x"), "items": [{"p": Path("y")}]}))) == {
        "when": "/x", "items": [{"p": "y"}],
    }


def test_a_small_object_is_encoded_whole_and_a_large_one_in_pieces() -> None:
    small = {"title": "t", "messages": [{"role": "user", "content": "x" * 100}] * 10}
    assert isinstance(jsonstream.encode(small, ("content",)), bytes)
    assert json.loads(jsonstream.encode(small, ("content",))) == small  # type: ignore[arg-type]
    texts = jsonstream.WHOLE_BYTES // (jsonstream.ITEM_BYTES + 100) + 1  # just past the estimate's bound
    large = {"messages": [{"role": "assistant", "content": "y" * 100}] * texts}
    pieces = jsonstream.encode(large, ("content",))
    assert not isinstance(pieces, bytes)
    assert json.loads(b"".join(pieces)) == large
    one_long = {"messages": [{"role": "assistant", "content": "z" * (jsonstream.WHOLE_BYTES + 1)}]}
    assert not isinstance(jsonstream.encode(one_long, ("content",)), bytes)  # one long text is enough


@pytest.mark.parametrize("messages", [10_000, 10])
def test_a_save_that_fails_while_encoding_leaves_the_old_sidecar_and_no_temp_file(
    tmp_path: Path, messages: int
) -> None:
    """In pieces (10,000 messages: several pieces are written before the error) and whole (10)."""
    store = SessionStore(tmp_path / "sessions")
    try:
        session = store.create(title="before")
        path = store.path(session.session_id)
        before = path.read_bytes()
        many = [{"role": "assistant", "content": "x" * 100} for _ in range(messages)]
        broken = Session(session_id=session.session_id, title="after", messages=[*many, {"content": "\ud800"}])
        with pytest.raises(TypeError):
            store.save(broken)
        assert path.read_bytes() == before
        assert [n for n in os.listdir(store.root) if ".tmp." in n] == []
        assert store.load(session.session_id).title == "before"
    finally:
        store.close()


@pytest.mark.parametrize("long_at", [(), (0,), (63, 64), (5, 130, 199), (199,)])
def test_long_items_anywhere_in_a_list_keep_the_order_and_every_other_item(long_at: tuple[int, ...]) -> None:
    """Batches end at each long item, which is encoded alone; the JSON is the list as it was."""
    long = "y" * (jsonstream.LONG_TEXT + 1)
    items: list[Any] = [{"role": "assistant", "content": long if i in long_at else f"m{i}"} for i in range(200)]
    items[7] = "not a dict"
    data = {"messages": items, "n": 1}
    pieces = list(jsonstream.iter_object(data, ("content",)))
    assert json.loads(b"".join(pieces)) == data
    assert max(len(p) for p in pieces) < 2 * jsonstream.FLUSH_BYTES  # pieces stay about one flush long
