"""Recovery where we do better than the peer: tid pairing, same-run dedupe, causes, restarts, sealed journals."""

from __future__ import annotations

import copy
import time
from pathlib import Path

from hermes_jupyter import markers
from hermes_jupyter.sessions.store import Session

from ..hermes_fixtures import Core, build_core, make_session, save_pending_session


def _pending(core: Core, sid: str, stream: str, *, started: float | None, messages: list | None = None) -> Session:
    return save_pending_session(
        core, stream, "Current question", started_at=started, session_id=sid,
        messages=messages or [{"role": "user", "content": "earlier"}],
    )


def test_tool_complete_pairs_by_tid_for_parallel_same_name_tools(hermes_core: Core) -> None:
    s = _pending(hermes_core, "tid_sid", "tid_run", started=time.time() - 120)
    for tid, cmd in (("call_a", "ls a"), ("call_b", "ls b")):
        hermes_core.append("tid_sid", "tid_run", "tool", {"tid": tid, "name": "terminal", "args": {"command": cmd}, "preview": None})
    hermes_core.append("tid_sid", "tid_run", "tool_complete", {"tid": "call_a", "name": "terminal", "preview": "A", "is_error": False})
    assert hermes_core.recovery.repair_stale_pending(s)
    cards = {c["tid"]: c for c in s.tool_calls}
    assert cards["call_a"]["done"] is True and cards["call_a"]["preview"] == "A"
    # call_a's completion must not complete call_b (the peer completed the newest card of that name);
    # call_b, which never completed, ends with the interrupted run as not finished, not running forever
    assert cards["call_b"]["preview"] != "A" and cards["call_b"]["is_error"] is True, cards["call_b"]


def test_dedupe_never_matches_an_earlier_turns_identical_answer(hermes_core: Core) -> None:
    history = [
        {"role": "user", "content": "say ok"},
        {"role": "assistant", "content": "OK, the deployment finished without errors."},
    ]
    s = make_session(session_id="dup_sid", messages=list(history))
    s.messages.append({"role": "user", "content": "again", "_recovered": True})
    marker = markers.arm_retry(markers.interrupted_marker(pending_retry=True), "dup_run")
    s.messages.append(marker)
    hermes_core.store.save(s)
    hermes_core.append("dup_sid", "dup_run", "token", {"text": "OK, the deployment finished without errors."})
    assert hermes_core.recovery.retry_journal_recovery_in_place(s)
    same = [m for m in s.messages if m.get("content") == "OK, the deployment finished without errors."]
    assert len(same) == 2, "the repeated answer of this run must not be swallowed by the earlier one"
    assert same[1].get("_recovered_stream_id") == "dup_run"


def test_promote_and_demote_keep_the_cause_sentence() -> None:
    for outcome, phrase in (("recovered", "partial output above was recovered"), ("lost", "Partial output may have been lost")):
        marker = markers.arm_retry(markers.interrupted_marker("kernel_restart", pending_retry=True), "r")
        markers.settle_marker(marker, outcome)  # type: ignore[arg-type]
        assert markers.CAUSE_SENTENCES["kernel_restart"] in marker["content"]
        assert phrase in marker["content"]
        assert marker["content"].startswith(markers.HEAD)


def test_turn_from_before_a_server_restart_is_repaired_on_first_read(tmp_path: Path) -> None:
    core = build_core(tmp_path, process_started_at=time.time())
    s = _pending(core, "restart_sid", "restart_run", started=time.time() - 5)  # 5 s old: inside the grace period
    core.append("restart_sid", "restart_run", "token", {"text": "1 2 3"})
    core.store.evict("restart_sid")
    core.recovery.process_started_at = time.time()  # this process started after the turn began
    repaired = core.recovery.get_session("restart_sid")
    assert repaired.pending_user_message is None
    marker = repaired.messages[-1]
    assert marker["interruption_cause"] == "server_restart"
    assert markers.CAUSE_SENTENCES["server_restart"] in marker["content"]
    assert repaired.messages[-2]["content"] == "1 2 3"
    del s


def test_grace_period_applies_within_one_process_lifetime(tmp_path: Path) -> None:
    core = build_core(tmp_path, process_started_at=time.time() - 60)
    s = _pending(core, "fresh_sid", "fresh_run", started=time.time() - 5)
    assert core.recovery.repair_stale_pending(s) is False
    s.pending_started_at = time.time() - 31
    assert core.recovery.repair_stale_pending(s) is True


def test_sealed_journal_without_output_settles_at_once(hermes_core: Core) -> None:
    s = _pending(hermes_core, "sealed_sid", "sealed_run", started=time.time() - 120)
    hermes_core.append("sealed_sid", "sealed_run", "plan", {"entries": []})  # a row, but nothing visible
    assert hermes_core.recovery.repair_stale_pending(s)
    marker = s.messages[-1]
    assert "_pending_journal_recovery" not in marker
    assert "no agent output was recovered" in marker["content"]


def test_journal_still_arriving_is_not_charged_an_attempt(hermes_core: Core) -> None:
    """Empty or held by a live writer: the journal may still grow, so no attempt is spent."""
    s = make_session(session_id="held_sid", messages=[{"role": "user", "content": "u", "_recovered": True}])
    s.messages.append(markers.arm_retry(markers.interrupted_marker(pending_retry=True), "held_run"))
    hermes_core.store.save(s)
    writer = hermes_core.journals.writer("held_sid", "held_run")
    assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
    assert s.messages[-1]["_journal_retry_attempts"] == 0
    writer.append("plan", {"entries": []})  # a row, nothing visible, writer still alive
    assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
    assert s.messages[-1]["_journal_retry_attempts"] == 0
    hermes_core.journals.close_writer("held_sid", "held_run")  # sealed, and it showed nothing
    assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
    assert s.messages[-1]["_journal_retry_attempts"] == 1


def test_repair_is_idempotent(hermes_core: Core) -> None:
    s = _pending(hermes_core, "idem_sid", "idem_run", started=time.time() - 120)
    hermes_core.append("idem_sid", "idem_run", "token", {"text": "partial"})
    hermes_core.append("idem_sid", "idem_run", "tool", {"tid": "t1", "name": "read_file", "args": {"path": "a"}})
    first = hermes_core.recovery.get_session("idem_sid")
    snapshot = copy.deepcopy(first.to_json())
    hermes_core.store.evict("idem_sid")
    second = hermes_core.recovery.get_session("idem_sid")
    assert second.to_json() == snapshot
    del s


def test_recovered_text_reaches_the_model_context_but_reasoning_and_markers_do_not(hermes_core: Core) -> None:
    s = _pending(hermes_core, "ctx_sid", "ctx_run", started=time.time() - 120)
    hermes_core.append("ctx_sid", "ctx_run", "reasoning", {"text": "secret thoughts"})
    hermes_core.append("ctx_sid", "ctx_run", "token", {"text": "visible answer"})
    assert hermes_core.recovery.repair_stale_pending(s)
    roles = [(m["role"], m.get("content")) for m in s.context_messages]
    assert ("user", "Current question") in roles
    assert ("assistant", "visible answer") in roles
    assert "secret thoughts" not in str(s.context_messages)
    assert not any(m.get("_error") for m in s.context_messages)


def test_an_approval_left_pending_by_a_restart_is_settled_as_not_answered(hermes_core: Core) -> None:
    s = _pending(hermes_core, "appr_sid", "appr_run", started=time.time() - 120)
    hermes_core.append("appr_sid", "appr_run", "token", {"text": "I need to delete it."})
    hermes_core.append("appr_sid", "appr_run", "approval", {
        "approval_id": "a1", "status": "pending", "command": "rm -rf x", "description": "delete x",
        "options": ["allow_once", "deny"],
    })
    assert hermes_core.recovery.repair_stale_pending(s)
    [card] = [c for c in s.tool_calls if c["name"] == "approval"]
    assert card["done"] is True and card["choice"] == "deny"
    assert card["reason"] == "not answered before the run ended"
    assert s.messages[card["assistant_msg_idx"]]["content"] == "I need to delete it."
