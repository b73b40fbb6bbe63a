"""The cell bundle built from journal rows: text, tools, reasoning, markers, live vs final."""

from __future__ import annotations

from hermes_jupyter import markers
from hermes_jupyter.notebook.outputs import (
    OUTPUT_MAX_BYTES,
    RUN_MIME,
    SHORTENED_NOTE,
    WIDGET_MIME,
    RunOutput,
    bundle_for,
    final_bundle,
    fold_rows,
    live_bundle,
    render_markdown,
    run_ref_of,
    view_state,
)

from hermes_jupyter.transcript.rows import ToolRow

from ..hermes_fixtures import Core
from .journal_writer import CANCEL, DONE, ERROR, KERNEL_RESTART, count_events, huge_answer_events, tool_events, write_run


def _rows(core: Core, events: list, sid: str = "s1", run_id: str = "r1") -> list:
    write_run(core.journals, sid, run_id, events)
    return core.journals.read(sid, run_id).rows


def test_completed_count_renders_text_and_final_ref(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(5) + [DONE]), "s1", "r1")
    bundle = final_bundle(snap)
    assert bundle["text/markdown"].startswith("1 2 3 4 5")
    assert bundle["text/plain"].startswith("1 2 3 4 5")
    assert bundle[RUN_MIME] == {"run_id": "r1", "session_id": "s1", "seq": 6, "status": "completed"}
    assert WIDGET_MIME not in bundle
    assert "Response interrupted" not in bundle["text/markdown"]


def test_live_bundle_carries_widget_view_and_running_status(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(3)), "s1", "r1")
    bundle = bundle_for(snap, "model-1")
    assert bundle[WIDGET_MIME]["model_id"] == "model-1"
    assert bundle[RUN_MIME]["status"] == "running"
    assert bundle["text/markdown"].startswith("1 2 3")
    assert "streaming" in bundle["text/markdown"]


def test_final_status_drops_the_widget_view(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(3) + [DONE]), "s1", "r1")
    assert WIDGET_MIME not in bundle_for(snap, "model-1")


def test_tool_card_between_segments(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, tool_events() + [DONE]), "s1", "r1")
    assert [(type(r).__struct_config__.tag, getattr(r, "text", None)) for r in snap.rows] == [
        ("reasoning", "The user wants to see a tool call."), ("assistant", "Let me look."), ("tool", None),
        ("assistant", "There are two files."),
    ]
    tool = snap.rows[2]
    assert (tool.name, tool.status, tool.duration_s, tool.preview) == ("terminal", "done", 0.01, "data.csv\nnotes.md")
    md = render_markdown(snap)
    assert md.index("Let me look.") < md.index("**terminal**") < md.index("There are two files.")
    assert "`command=ls demo/`" in md and "0.01 s" in md and "data.csv" in md
    assert md.index("<details><summary>Reasoning</summary>") < md.index("Let me look.")


def test_open_tool_shows_running(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, tool_events()[:3]), "s1", "r1")
    assert [r.status for r in snap.rows if isinstance(r, ToolRow)] == ["running"]


def test_kernel_restart_gets_recovered_marker_with_its_cause(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(3) + [KERNEL_RESTART]), "s1", "r1")
    assert snap.status == "interrupted"
    expected = markers.interrupted_content("kernel_restart", "recovered")
    assert snap.marker is not None and snap.marker.text == expected and snap.marker.cause == "kernel_restart"
    md = final_bundle(snap)["text/markdown"]
    assert md.startswith("1 2 3")
    assert "partial output above was recovered from the run journal" in md
    assert "> **Response interrupted.**" in md


def test_dead_run_without_output_says_nothing_was_recovered(hermes_core: Core) -> None:
    hermes_core.journals.writer("s1", "r1")  # journal exists, empty
    hermes_core.journals.close_writer("s1", "r1")
    snap = fold_rows([], "s1", "r1", status="interrupted")
    assert snap.marker is not None and "no agent output was recovered" in snap.marker.text
    assert "WebUI" not in snap.marker.text and "draft" not in snap.marker.text


def test_cancel_keeps_partial_output_and_cancel_marker(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(4) + [CANCEL]), "s1", "r1")
    assert snap.status == "cancelled"
    assert snap.text == "1 2 3 4"
    assert snap.marker is not None and snap.marker.text == markers.CANCEL_CONTENT


def test_error_shows_message(hermes_core: Core) -> None:
    snap = fold_rows(_rows(hermes_core, count_events(2) + [ERROR]), "s1", "r1")
    assert snap.status == "errored"
    assert "the model is unreachable" in final_bundle(snap)["text/markdown"]


def test_incremental_snapshots_match_one_fold(hermes_core: Core) -> None:
    """A live snapshot never splits text where it was taken, and a resumed stream's repeats are ignored."""
    rows = _rows(hermes_core, count_events(3) + tool_events() + count_events(2) + [DONE])
    live = RunOutput("s1", "r1")
    for i, row in enumerate(rows):
        live.feed(rows[max(0, i - 2): i + 1])  # overlapping batches, like a reconnect with an old cursor
        live.snapshot()
    assert live.snapshot() == fold_rows(rows, "s1", "r1")
    assert live.seq == rows[-1].seq


def test_live_snapshot_prefix_equals_final_text_prefix(hermes_core: Core) -> None:
    rows = _rows(hermes_core, count_events(10) + [DONE])
    live = RunOutput("s1", "r1")
    live.feed(rows[:5])
    assert live.snapshot().text == "1 2 3 4 5"
    assert live.snapshot().status == "running"
    live.feed(rows[5:])
    assert live.snapshot().text == "1 2 3 4 5 6 7 8 9 10"


def test_markdown_escapes_reasoning_html(hermes_core: Core) -> None:
    rows = _rows(hermes_core, [("reasoning", {"text": "<script>alert(1)</script>"}), ("token", {"text": "ok"}), DONE])
    md = render_markdown(fold_rows(rows, "s1", "r1"))
    assert "<script>" not in md and "&lt;script&gt;" in md


def test_run_ref_of_reads_only_hermes_outputs() -> None:
    assert run_ref_of({"output_type": "stream", "text": "x"}) is None
    assert run_ref_of({"data": {"text/plain": "x"}}) is None
    assert run_ref_of({"data": {RUN_MIME: {"run_id": 1, "session_id": "s"}}}) is None
    ref = run_ref_of({"data": {RUN_MIME: {"run_id": "r", "session_id": "s", "seq": True}}})
    assert ref == {"run_id": "r", "session_id": "s", "seq": 0, "status": "unknown"}


def test_view_state_is_json_for_the_widget(hermes_core: Core) -> None:
    import json

    snap = fold_rows(_rows(hermes_core, tool_events()), "s1", "r1")
    state = json.loads(json.dumps(view_state(snap)))
    assert state["status"] == "running"
    assert state["segments"][0]["tools"][0]["args"] == "command=ls demo/"
    assert live_bundle(snap)[RUN_MIME]["seq"] == state["seq"] == 5


def test_pending_approval_reaches_the_widget_with_its_id(hermes_core: Core) -> None:
    """The cell widget answers approvals by id, so a pending one must carry it (and a resolved one must not ask)."""
    pending = [
        ("token", {"text": "May I? "}),
        ("approval", {"approval_id": "a1", "status": "pending", "command": "rm -rf x", "description": "delete x",
                      "options": ["allow_once", "deny"]}),
    ]
    snap = fold_rows(_rows(hermes_core, pending), "s1", "r1")
    [tool] = view_state(snap)["segments"][0]["tools"]
    assert (tool["name"], tool["status"], tool["tid"]) == ("approval", "running", "a1")
    answered = pending + [("approval", {"approval_id": "a1", "status": "resolved", "choice": "deny", "reason": "answered"})]
    snap = fold_rows(_rows(hermes_core, answered, run_id="r2"), "s1", "r2")
    [tool] = view_state(snap)["segments"][0]["tools"]
    assert tool["status"] == "error"


def test_huge_answer_keeps_its_head_and_says_it_was_shortened(hermes_core: Core) -> None:
    bundle = final_bundle(fold_rows(_rows(hermes_core, huge_answer_events() + [DONE]), "s1", "r1"))
    for mime in ("text/markdown", "text/plain"):
        text = bundle[mime]
        assert len(text.encode()) <= OUTPUT_MAX_BYTES
        assert text.startswith("line 0 lorem ipsum")
        assert SHORTENED_NOTE in text
        assert "completed" in text.rsplit(SHORTENED_NOTE, 1)[1]  # the status line still closes the cell
    assert bundle[RUN_MIME]["status"] == "completed"


def test_a_cut_inside_a_code_block_or_reasoning_is_closed_before_the_note(hermes_core: Core) -> None:
    code = [("token", {"text": "Here is the file:\n\n```python\n"})] + huge_answer_events()
    md = render_markdown(fold_rows(_rows(hermes_core, code + [DONE]), "s1", "r1"))
    assert len(md.encode()) <= OUTPUT_MAX_BYTES
    assert md.rsplit(SHORTENED_NOTE, 1)[0].rstrip().endswith("\n```\n\n*")

    thinking = [("reasoning", {"text": e[1]["text"]}) for e in huge_answer_events()]
    md = render_markdown(fold_rows(_rows(hermes_core, thinking + [DONE], run_id="r2"), "s1", "r2"))
    assert len(md.encode()) <= OUTPUT_MAX_BYTES
    assert md.rsplit(SHORTENED_NOTE, 1)[0].rstrip().endswith("</details>\n\n*")


def test_ordinary_answer_is_not_shortened(hermes_core: Core) -> None:
    bundle = final_bundle(fold_rows(_rows(hermes_core, tool_events() + [DONE]), "s1", "r1"))
    assert SHORTENED_NOTE not in bundle["text/markdown"] and SHORTENED_NOTE not in bundle["text/plain"]


def test_a_continuation_shows_the_parts_it_continues_live_as_once_it_ended() -> None:
    """`%hermes continue` live: the earlier part and its marker first, before and after the first row."""
    from hermes_jupyter import events as ev
    from hermes_jupyter.notebook.outputs import RunOutput, final_bundle, live_bundle
    from hermes_jupyter.transcript.chain import whole_answer

    from ..transcript.test_fold import rows

    first = RunOutput("s", "a")
    first.feed(rows((ev.TOKEN, {"text": "1 2 3"}), (ev.CANCEL, {"message": "Cancelled by user"})))
    part = first.snapshot()
    cont = RunOutput("s", "b")
    cont.earlier = [part]
    assert live_bundle(cont.snapshot())["text/markdown"].startswith("1 2 3")  # shown before any row arrived
    cont.feed([r for r in rows((ev.CONTINUATION, {"continues": "a"}), (ev.TOKEN, {"text": " 4 5"}))])
    live = live_bundle(cont.snapshot())["text/markdown"]
    assert live.startswith("1 2 3") and "**Task cancelled.**" in live and "\n\n4 5" in live
    alone = RunOutput("s", "b")
    alone.feed(rows((ev.CONTINUATION, {"continues": "a"}), (ev.TOKEN, {"text": " 4 5"}), (ev.DONE, {})))
    cont.feed(rows((ev.CONTINUATION, {"continues": "a"}), (ev.TOKEN, {"text": " 4 5"}), (ev.DONE, {})))
    assert final_bundle(cont.snapshot()) == final_bundle(whole_answer(alone.snapshot(), {"a": part}.get))
