"""Property-based fuzzing of stored state: sidecars, index rows and journal rows planted by Hypothesis.

Whatever is planted, reading through the engine (listing, pages, the full read
with its repair) raises nothing a handler would answer with a 500, and a valid
session next to the planted file is neither lost nor rewritten.

`HERMES_FUZZ_EXAMPLES` (default 40 per property) scales the search.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_jupyter.server.errors import mapped
from hermes_jupyter.sessions.store import INDEX_NAME, Session, SessionStore

from .hermes_fixtures import Core, build_core

EXAMPLES = int(os.environ.get("HERMES_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
TEMP_ROOT = "/dev/shm" if os.path.isdir("/dev/shm") else None  # fsyncs on a RAM disk keep examples cheap

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
SIDECAR_KEYS = [
    "session_id", "title", "created_at", "updated_at", "backend", "model", "messages", "context_messages",
    "tool_calls", "active_stream_id", "pending_user_message", "pending_attachments", "pending_started_at",
    "notebook_path", "cell_id", "kernel_id", "last_run_id", "input_tokens", "estimated_cost", "message_count",
]
INDEX_KEYS = ["session_id", "title", "updated_at", "created_at", "mtime_ns", "message_count", "active_stream_id",
              "corrupt", "notebook_path"]
ROW_KEYS = ["version", "event_id", "seq", "run_id", "session_id", "event", "type", "created_at", "terminal",
            "terminal_state", "payload"]


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], keys: list[str]) -> Any:
    """`base` with some keys set to arbitrary JSON or removed; sometimes a different JSON value altogether."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    data = dict(base)
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            data[key] = draw(json_values)
        else:
            data.pop(key, None)
    return data


def file_bytes(values: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """JSON text of the values, and now and then raw bytes (torn, binary, empty)."""
    return st.one_of(values.map(lambda v: json.dumps(v).encode()), st.binary(max_size=64))  # json: big ints too


@st.composite
def journal_lines(draw: st.DrawFn, sid: str, run_id: str) -> list[bytes]:
    """A real-looking journal of tokens with planted lines: wrong types, wrong ids, repeats, junk."""
    lines = []
    for seq in range(1, draw(st.integers(0, 6)) + 1):
        row = {"version": 1, "event_id": f"{run_id}:{seq}", "seq": seq, "run_id": run_id, "session_id": sid,
               "event": "token", "type": "token", "created_at": time.time(), "terminal": False,
               "terminal_state": None, "payload": {"text": f" {seq}"}}
        lines.append(orjson.dumps(row))
        if draw(st.integers(0, 3)) == 0:
            lines.append(draw(file_bytes(mutated(row, ROW_KEYS))).replace(b"\n", b" "))
    return lines


class State:
    """A state dir with one valid, settled session (`keep`) whose sidecar must survive everything."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.core = build_core(root, process_started_at=time.time())
        keep = Session(session_id="keep", title="kept", messages=[
            {"role": "user", "content": "count to 2", "timestamp": 1},
            {"role": "assistant", "content": "1 2", "timestamp": 2},
        ])
        self.core.store.save(keep)
        self.core.store.flush_index()
        self.keep_bytes = self.sidecar("keep").read_bytes()

    def sidecar(self, sid: str) -> Path:
        return self.core.store.root / f"{sid}.json"

    def restarted(self) -> Core:
        """The same state dir read by a fresh process (new store, new recovery)."""
        self.core.store.close()
        self.core.journals.close()
        self.core = build_core(self.root, process_started_at=time.time())
        return self.core

    def close(self) -> None:
        self.core.journals.close()
        self.core.store.close()


def fresh_state() -> Iterator[State]:
    with tempfile.TemporaryDirectory(dir=TEMP_ROOT) as tmp:
        state = State(Path(tmp))
        try:
            yield state
        finally:
            state.close()


def read_everything(core: Core, sids: list[str]) -> list[str]:
    """Read the way clients do; returns the failures a handler would turn into a 500."""
    failures = []
    for call in (lambda: core.store.list(), lambda: _walk_pages(core.store),
                 *[(lambda sid=sid: core.recovery.get_session(sid)) for sid in sids]):
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - what we are looking for
            error = mapped(exc)
            if error is None or error.status_code >= 500:
                failures.append(f"{type(exc).__name__}: {exc}")
    return failures


def _walk_pages(store: SessionStore) -> list[str]:
    sids, cursor = [], None
    while True:
        page = store.page(2, cursor)
        sids += [r["session_id"] for r in page.rows]
        if page.next is None:
            return sids
        cursor = page.next


def assert_keep_intact(state: State) -> None:
    core = state.restarted()
    core.store.list()
    assert core.store.wait_reconciled()
    listed = {r["session_id"]: r for r in core.store.list()}
    assert listed["keep"]["title"] == "kept" and "keep" in _walk_pages(core.store)
    session = core.recovery.get_session("keep")
    assert [m["content"] for m in session.messages] == ["count to 2", "1 2"]
    assert state.sidecar("keep").read_bytes() == state.keep_bytes, "the valid session was rewritten"


BASE_SIDECAR = Session(session_id="planted", title="p", active_stream_id="r1", pending_user_message="hi",
                       pending_started_at=1.0).to_json()


@FUZZ
@given(content=file_bytes(mutated(BASE_SIDECAR, SIDECAR_KEYS)))
def test_any_planted_sidecar_never_breaks_reading_nor_the_valid_session(content: bytes) -> None:
    for state in fresh_state():
        state.sidecar("planted").write_bytes(content)
        core = state.restarted()
        assert read_everything(core, ["planted", "keep"]) == []
        assert_keep_intact(state)


@FUZZ
@given(data=st.data())
def test_any_planted_index_never_hides_or_rewrites_a_valid_session(data: st.DataObject) -> None:
    for state in fresh_state():
        index_path = state.core.store.root / INDEX_NAME
        index = json.loads(index_path.read_text())
        if data.draw(st.booleans()):
            planted = data.draw(mutated(index, ["keep", "other"]))
        else:
            planted = {**index, "keep": data.draw(mutated(index["keep"], INDEX_KEYS))}
        index_path.write_bytes(data.draw(file_bytes(st.just(planted))))
        core = state.restarted()
        assert read_everything(core, ["keep"]) == []
        assert_keep_intact(state)


@FUZZ
@given(data=st.data())
def test_any_planted_journal_rows_never_break_the_repair_of_a_pending_turn(data: st.DataObject) -> None:
    for state in fresh_state():
        pending = Session(session_id="pending", title="p", active_stream_id="r1", pending_user_message="count to 6",
                          pending_started_at=1.0)
        state.core.store.save(pending)
        path = state.core.journals.path("pending", "r1")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(data.draw(journal_lines("pending", "r1"))) + b"\n")
        core = state.restarted()
        assert read_everything(core, ["pending", "keep"]) == []
        repaired = core.recovery.get_session("pending")
        assert repaired.pending_user_message is None, "the dead turn is settled whatever its journal holds"
        assert repaired.messages[0]["content"] == "count to 6"
        assert_keep_intact(state)


# -- file kinds: what is planted need not be a file at all (docs/journal.md, "Hostile files") ---------------
FILE_KINDS = ["fifo", "folder", "link", "sparse", "bytes"]
#: Sizes just over each default cap (fsio.ReadCaps): sparse files, so they cost no disk.
OVER_CAP = {"sidecar": (256 << 20) + 1, "index": (128 << 20) + 1, "journal": (8 << 20) + 1, "sealed": (8 << 20) + 1}


def plant(path: Path, kind: str, content: bytes, over_cap: int) -> None:
    """Put a file of `kind` at `path`: a FIFO, a folder, a link to a file elsewhere, a sparse file over
    its cap, or plain bytes (replacing whatever is there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "inside").write_bytes(content)
    elif kind == "link":
        target = path.parent.parent / f"elsewhere-{path.name}"
        target.write_bytes(content)
        path.symlink_to(target)
    else:
        path.write_bytes(content)
        if kind == "sparse":
            os.truncate(path, over_cap)


def release(path: Path) -> None:
    """A FIFO gets a writer for a moment, so a reader a regression left blocked ends (the test still fails)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@FUZZ
@given(where=st.sampled_from(sorted(OVER_CAP)), kind=st.sampled_from(FILE_KINDS), content=st.binary(max_size=64))
def test_any_kind_of_file_planted_anywhere_never_blocks_nor_breaks_reading(where: str, kind: str, content: bytes) -> None:
    from .test_hostile_files import within

    for state in fresh_state():
        pending = Session(session_id="pending", title="p", active_stream_id="r1", pending_user_message="count to 3",
                          pending_started_at=1.0)
        state.core.store.save(pending)
        state.core.store.flush_index()
        live = state.core.journals.path("pending", "r1")
        path = {"sidecar": state.sidecar("planted"), "index": state.core.store.root / INDEX_NAME,
                "journal": live, "sealed": live.with_name(live.name + ".gz")}[where]
        plant(path, kind, content, OVER_CAP[where])
        try:
            core = state.restarted()
            assert within(lambda: read_everything(core, ["planted", "pending", "keep"]), 20) == []
            for call in (lambda: core.journals.read("pending", "r1"), lambda: core.journals.summary("pending", "r1")):
                try:
                    within(call, 20)
                except Exception as exc:  # noqa: BLE001 - a plain 4xx is the answer wanted
                    error = mapped(exc)
                    assert error is not None and error.status_code < 500, f"{type(exc).__name__}: {exc}"
            assert_keep_intact(state)
        finally:
            release(path)
