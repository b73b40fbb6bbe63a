"""A stored turn's long answer written once in the sidecar: a text row that *is* its message row's text.

The sidecar keeps `messages` (the display rows other tools read, docs/transcript.md) beside the
typed `turns`, and a long answer lives in both. In memory they are one string (the merge puts an
assistant row's text into its message row's `content`, a reasoning row's into `reasoning`), so on
disk it is written once: such a row is left out of the turn's `rows`, and the turn's `shared_text`
says where it goes back, `[row index, message index, kind, row id, …]` (four values a row, flat: a
turn of thousands of rows costs no list a row, and the writer writes it in batches, as it does
rows). Reading puts that very string back. Written out twice, a 100k-event answer made the sidecar
half as large again and its save a third slower (benchmarks/bench_core.py, recovery).

Only identity counts, never equality: a row is left out only while its text is the same object as
its message's, so an edited message can never change a turn. Short texts are written out: a
pointer saves little there and reads worse.
"""

from __future__ import annotations

from typing import Any, Final

#: Texts shorter than this (chars) are always written out.
MIN_SHARED: Final = 512
#: The key of a packed turn's table of shared texts.
TABLE: Final = "shared_text"
#: The row kinds that may share their text, and the message key that holds it. Such rows have
#: exactly the fields `id` and `text`, so the table rebuilds them whole.
KEY_OF: Final = {"assistant": "content", "reasoning": "reasoning"}
_FIELDS: Final = ("id", "text")


def pack(turns: list[Any], messages: list[Any]) -> list[Any]:
    """The turns as the sidecar writes them: a turn with shared texts as a mapping of its fields, those
    rows left out and listed in `shared_text`; every other turn as it is."""
    where = _long_texts(messages)
    if not where:
        return turns
    return [_packed(turn, where) for turn in turns]


def _long_texts(messages: list[Any]) -> dict[int, int]:
    """`id(text) → message index` for the messages' long texts (they stay referenced by `messages`
    while the ids are in use, so none is reused meanwhile)."""
    where: dict[int, int] = {}
    for at, message in enumerate(messages):
        if message.__class__ is not dict:
            continue
        for key in KEY_OF.values():
            text = message.get(key)
            if text.__class__ is str and len(text) >= MIN_SHARED:
                where.setdefault(id(text), at)
    return where


def _packed(turn: Any, where: dict[int, int]) -> Any:
    """The turn itself if no row shares its text, else a mapping of its fields with those rows out."""
    kept: list[Any] = []
    table: list[Any] = []
    for at, row in enumerate(turn.rows):
        message = where.get(id(getattr(row, "text", None)))  # a tool row has no text: one miss
        if message is not None and row.__struct_fields__ == _FIELDS and (tag := row.__struct_config__.tag) in KEY_OF:
            table.extend((at, message, tag, row.id))
        else:
            kept.append(row)
    if not table:
        return turn
    data = {name: getattr(turn, name) for name in turn.__struct_fields__}
    data["rows"] = kept
    data[TABLE] = table
    return data


def unpack(data: dict[str, Any]) -> None:
    """Put the shared rows back into a parsed sidecar's turns, in place; ValueError for a table that
    does not fit its turn or points at no text."""
    turns, messages = data.get("turns"), data.get("messages")
    if turns.__class__ is not list:
        return  # the type check that follows says what is wrong
    for turn in turns:
        table = turn.pop(TABLE, None) if turn.__class__ is dict else None
        if table is not None:
            turn["rows"] = _merged(turn.get("rows"), _shared_rows(table, messages))


def _shared_rows(table: Any, messages: Any) -> list[tuple[int, dict[str, Any]]]:
    """The table's rows, rebuilt with their messages' texts, by position."""
    if table.__class__ is not list or len(table) % 4:
        raise ValueError("a stored turn's shared texts are not [row, message, kind, id, …]")
    out: list[tuple[int, dict[str, Any]]] = []
    for i in range(0, len(table), 4):
        at, message, kind, row_id = table[i:i + 4]
        key = KEY_OF.get(kind) if kind.__class__ is str else None
        if key is None:
            raise ValueError(f"a stored turn's shared text is of kind {kind!r}, which shares none")
        out.append((at, {"kind": kind, "id": row_id, "text": _text(messages, message, key)}))
    out.sort(key=lambda entry: entry[0] if entry[0].__class__ is int else -1)
    return out


def _text(messages: Any, at: Any, key: str) -> str:
    if (at.__class__ is int and messages.__class__ is list and 0 <= at < len(messages)
            and messages[at].__class__ is dict and (text := messages[at].get(key)).__class__ is str):
        return text
    raise ValueError(f"a stored turn's text points at message {at!r}, which holds no {key}")


def _merged(rows: Any, shared: list[tuple[int, dict[str, Any]]]) -> list[Any]:
    """The kept rows with the shared ones back at their positions (each position once, in range)."""
    if rows.__class__ is not list:
        raise ValueError("a stored turn's rows are not a list")
    out: list[Any] = []
    kept = iter(rows)
    for at, row in shared:
        if at.__class__ is not int or at < len(out):
            raise ValueError(f"a shared text's row position {at!r} is not a new place in the turn")
        while len(out) < at:
            nxt = next(kept, None)
            if nxt is None:
                raise ValueError(f"a shared text's row position {at!r} is past the turn's end")
            out.append(nxt)
        out.append(row)
    out.extend(kept)
    return out
