"""Port of the peer's sidecar-repair suite: the four outcomes, journal recovery, core sync (seed names kept)."""

from __future__ import annotations

import json
import time

import pytest

from hermes_jupyter import markers, transcript
from hermes_jupyter.recovery.repair import can_supersede_recovery_marker

from ..hermes_fixtures import Core, make_session, make_stale_session, save_pending_session
from .test_sidecar_repair_seed import _apply, _journal_gateway_terminal_save_failure


class TestEmptyMessagesGuard:
    """A non-empty transcript is preserved; the pending turn is recovered before the fields are cleared."""

    def test_pending_cleared_when_messages_nonempty_direct(self, hermes_core: Core) -> None:
        s = make_session(messages=[{"role": "user", "content": "hello"}])
        s.pending_user_message = "Another question"
        s.active_stream_id = "stream_1"
        assert _apply(hermes_core, s, "stream_1") is True
        assert len(s.messages) == 3
        assert s.messages[0]["content"] == "hello"
        assert s.messages[1]["role"] == "user"
        assert s.messages[1]["content"] == "Another question"
        assert s.messages[1].get("_recovered") is True
        assert s.messages[2].get("_error") is True
        assert s.pending_user_message is None
        assert s.active_stream_id is None

    def test_repeated_pending_prompt_uses_current_checkpoint_identity(self, hermes_core: Core) -> None:
        old_turn = {"role": "user", "content": "repeat this", "timestamp": 111, "attachments": [{"name": "old.png"}]}
        s = make_session(
            messages=[dict(old_turn), {"role": "assistant", "content": "Earlier answer"}],
            context_messages=[dict(old_turn), {"role": "assistant", "content": "Earlier answer"}],
        )
        s.pending_user_message = "repeat this"
        s.pending_started_at = 222.0
        s.pending_attachments = [{"name": "current.png"}]
        s.active_stream_id = "stream_1"
        assert _apply(hermes_core, s, "stream_1") is True
        users = [m for m in s.messages if m.get("role") == "user"]
        assert len(users) == 2
        assert users[-1]["timestamp"] == 222
        assert users[-1]["attachments"] == [{"name": "current.png"}]
        context_users = [m for m in s.context_messages if m.get("role") == "user"]
        assert len(context_users) == 2
        assert context_users[-1]["timestamp"] == 222
        assert context_users[-1]["attachments"] == [{"name": "current.png"}]

    def test_recovered_assistant_context_row_still_deduplicates(self) -> None:
        s = make_session(context_messages=[{"role": "assistant", "content": "Recovered answer"}])
        transcript.append_to_context(s, {"role": "assistant", "content": "Recovered answer", "timestamp": 222})
        assert s.context_messages == [{"role": "assistant", "content": "Recovered answer"}]

    def test_recovered_user_context_row_requires_tail_checkpoint(self) -> None:
        s = make_session(
            context_messages=[
                {"role": "user", "content": "repeat this", "timestamp": 222, "attachments": [{"name": "same.png"}]},
                {"role": "assistant", "content": "Earlier answer"},
            ],
        )
        recovered = {
            "role": "user", "content": "repeat this", "timestamp": 222,
            "attachments": [{"name": "same.png"}], "_recovered": True,
        }
        transcript.append_to_context(s, recovered)
        context_users = [m for m in s.context_messages if m.get("role") == "user"]
        assert len(context_users) == 2
        assert context_users[-1]["timestamp"] == 222

    def test_bails_when_pending_user_message_none(self, hermes_core: Core) -> None:
        s = make_session(messages=[])
        s.pending_user_message = None
        s.active_stream_id = "stream_1"
        assert _apply(hermes_core, s, "stream_1") is False

    def test_proceeds_when_messages_empty(self, hermes_core: Core) -> None:
        assert _apply(hermes_core, make_stale_session(), "stream_1") is True


def _journal_check_run(core: Core, sid: str, stream: str) -> None:
    core.append(sid, stream, "token", {"text": "I will check GitHub first."})
    core.append(sid, stream, "tool", {
        "name": "terminal", "preview": "gh pr list --repo nesquena/hermes-webui",
        "args": {"command": "gh pr list --repo nesquena/hermes-webui"},
    })
    core.append(sid, stream, "tool_complete", {"name": "terminal", "duration": 1.2, "is_error": False})
    core.append(sid, stream, "token", {"text": "The first check finished before the restart."})


def _stale_gateway_session(core: Core, sid: str, stream_id: str) -> Any:
    """A saved session with one earlier turn and a gateway request pending on a dead stream."""
    return save_pending_session(
        core, stream_id, "Current gateway request", started_at=time.time() - 120, session_id=sid, messages=[
            {"role": "user", "content": "Earlier request"}, {"role": "assistant", "content": "Earlier answer"},
        ],
    )


class TestNonEmptyMessagesPendingCleared:
    """A stuck turn on a non-empty session: the pending turn, the journal's output, exactly one marker."""

    def test_pending_cleared_when_messages_nonempty(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "stale_stream", "Stuck draft", started_at=time.time() - 120,
            messages=[{"role": "user", "content": "existing turn"}],
            pending_attachments=[{"type": "image", "name": "screenshot.png"}],
        )
        hermes_core.write_core_transcript(s.session_id, [
            {"role": "user", "content": "Core user msg"}, {"role": "assistant", "content": "Core assistant msg"},
        ])
        hermes_core.live.register_stream("stale_stream")
        hermes_core.recovery.settle_last_resort(s, "stale_stream", cancelling=False)
        assert len(s.messages) == 3, f"Expected 3 messages, got {len(s.messages)}"
        assert s.messages[0]["role"] == "user"
        assert s.messages[0]["content"] == "existing turn"
        assert "Core user msg" not in [m["content"] for m in s.messages]
        recovered = [m for m in s.messages if m.get("_recovered")]
        assert len(recovered) == 1
        assert recovered[0]["role"] == "user"
        assert recovered[0]["content"] == "Stuck draft"
        assert recovered[0]["attachments"] == [{"type": "image", "name": "screenshot.png"}]
        errors = [m for m in s.messages if m.get("_error")]
        assert len(errors) == 1
        assert "Response interrupted" in errors[0]["content"]
        assert "live response stream stopped" in errors[0]["content"]
        assert "WebUI process restarted" not in errors[0]["content"]
        assert errors[0].get("type") == "interrupted"
        assert s.pending_user_message is None
        assert s.pending_attachments == []
        assert s.pending_started_at is None
        assert s.active_stream_id is None

    def test_journaled_partial_output_is_recovered_before_interrupted_marker(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "journaled_stream", "Check maintainer activity", started_at=time.time() - 120,
            messages=[{"role": "user", "content": "existing turn"}],
        )
        _journal_check_run(hermes_core, s.session_id, "journaled_stream")
        assert _apply(hermes_core, s, "journaled_stream") is True
        contents = [m.get("content", "") for m in s.messages]
        assert any("I will check GitHub first." in c for c in contents)
        assert any("The first check finished before the restart." in c for c in contents)
        assert s.tool_calls, "journaled tool starts should become visible settled tool cards"
        assert s.tool_calls[0]["name"] == "terminal"
        assert s.tool_calls[0]["done"] is True
        assert s.tool_calls[0]["assistant_msg_idx"] < len(s.messages)
        errors = [m for m in s.messages if m.get("_error")]
        assert len(errors) == 1
        assert "partial output above was recovered" in errors[0]["content"]
        assert "no agent output was recovered" not in errors[0]["content"]

    @pytest.mark.parametrize("sidecar_shape", ["non_empty", "core", "empty"])
    def test_gateway_terminal_error_cold_recovery_keeps_turn_identity_and_order(
        self, hermes_core: Core, sidecar_shape: str
    ) -> None:
        sid = f"gateway_terminal_cold_{sidecar_shape}"
        stream_id = f"{sid}_stream"
        repeated_error = {
            "role": "assistant", "content": "**Error:** gateway exploded",
            "timestamp": int(time.time()) - 300, "_error": True,
        }
        history = [{"role": "user", "content": "Earlier gateway request"}, repeated_error] if sidecar_shape != "empty" else []
        stale = save_pending_session(
            hermes_core, stream_id, "Current gateway request", started_at=time.time() - 120, session_id=sid,
            messages=history if sidecar_shape == "non_empty" else [],
        )
        if sidecar_shape == "core":
            hermes_core.write_core_transcript(sid, history)
        _payload, terminal_event, terminal_message = _journal_gateway_terminal_save_failure(
            hermes_core, stale, live_messages=history
        )
        hermes_core.store.evict(sid)
        recovered = hermes_core.recovery.get_session(sid)
        current_errors = [m for m in recovered.messages if m.get("_recovered_event_id") == terminal_event.event_id]
        assert [m["content"] for m in current_errors] == [terminal_message["content"]]
        current_error_idx = recovered.messages.index(current_errors[0])
        current_user_idx = max(
            i for i, m in enumerate(recovered.messages)
            if m.get("role") == "user" and m.get("content") == "Current gateway request"
        )
        partial_idx = next(
            i for i, m in enumerate(recovered.messages)
            if m.get("_recovered_stream_id") == stream_id and m.get("content") == "Current partial output."
        )
        assert current_user_idx < partial_idx < current_error_idx
        assert current_error_idx == len(recovered.messages) - 1
        same_text = [m for m in recovered.messages if m.get("_error") is True and m.get("content") == terminal_message["content"]]
        assert len(same_text) == (1 if sidecar_shape == "empty" else 2)

    @pytest.mark.parametrize("malformed_field", [
        "session_id", "run_id", "seq", "event_id", "payload_session_id", "embedded_session_id", "later_done_event_id",
    ])
    def test_gateway_terminal_error_rejects_foreign_or_malformed_identity(
        self, hermes_core: Core, malformed_field: str
    ) -> None:
        sid = f"gateway_terminal_bad_{malformed_field}"
        stream_id = f"{sid}_stream"
        stale = _stale_gateway_session(hermes_core, sid, stream_id)
        _payload, _event, terminal_message = _journal_gateway_terminal_save_failure(
            hermes_core, stale, live_messages=stale.messages
        )
        if malformed_field == "later_done_event_id":
            hermes_core.append(sid, stream_id, "done", {"session_id": sid})
        journal_path = hermes_core.journals.path(sid, stream_id)
        rows = [json.loads(line) for line in journal_path.read_text(encoding="utf-8").splitlines()]
        terminal = rows[-1]
        if malformed_field == "session_id":
            terminal["session_id"] = "foreign_session"
        elif malformed_field == "run_id":
            terminal["run_id"] = "foreign_run"
        elif malformed_field == "seq":
            terminal["seq"] = str(terminal["seq"])
        elif malformed_field == "event_id":
            terminal["event_id"] = "foreign_run:999"
        elif malformed_field == "payload_session_id":
            terminal["payload"].pop("session_id", None)
        elif malformed_field == "embedded_session_id":
            terminal["payload"]["session"].pop("session_id", None)
        else:
            terminal["event_id"] = "foreign_run:999"
        journal_path.write_text(
            "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8"
        )
        hermes_core.store.evict(sid)
        recovered = hermes_core.recovery.get_session(sid)
        assert terminal_message["content"] not in [m.get("content") for m in recovered.messages]
        assert any(m.get("type") == "interrupted" for m in recovered.messages)

    @pytest.mark.parametrize(("later_event_name", "expected_error"), [
        ("apperror", "**Error:** later gateway failure"),
        ("done", None),
        ("cancel", None),
        ("stream_end", "**Error:** gateway exploded"),
    ])
    def test_gateway_terminal_error_uses_authoritative_latest_terminal_event(
        self, hermes_core: Core, later_event_name: str, expected_error: str | None
    ) -> None:
        sid = f"gateway_terminal_latest_{later_event_name}"
        stream_id = f"{sid}_stream"
        stale = _stale_gateway_session(hermes_core, sid, stream_id)
        payload, first_terminal, first_message = _journal_gateway_terminal_save_failure(
            hermes_core, stale, live_messages=stale.messages
        )
        later_terminal = None
        if later_event_name == "apperror":
            later_payload = json.loads(json.dumps(payload))
            later_message = next(m for m in reversed(later_payload["session"]["messages"]) if m.get("_error") is True)
            later_message["content"] = expected_error
            later_terminal = hermes_core.append(sid, stream_id, "apperror", later_payload)
        else:
            hermes_core.append(sid, stream_id, later_event_name, {"session_id": sid})
        hermes_core.store.evict(sid)
        recovered = hermes_core.recovery.get_session(sid)
        error_contents = [
            m.get("content") for m in recovered.messages if m.get("_error") is True and m.get("type") != "interrupted"
        ]
        if expected_error is None:
            assert first_message["content"] not in error_contents
        else:
            assert error_contents == [expected_error]
            expected_event_id = later_terminal.event_id if later_terminal is not None else first_terminal.event_id
            assert recovered.messages[-1].get("_recovered_event_id") == expected_event_id

    def test_late_gateway_terminal_journal_replaces_pending_retry_marker(self, hermes_core: Core) -> None:
        sid = "gateway_terminal_late_journal"
        stream_id = f"{sid}_stream"
        stale = _stale_gateway_session(hermes_core, sid, stream_id)
        hermes_core.store.evict(sid)
        first = hermes_core.recovery.get_session(sid)
        assert any(m.get("_pending_journal_recovery") is True for m in first.messages)
        _payload, terminal_event, terminal_message = _journal_gateway_terminal_save_failure(
            hermes_core, stale, live_messages=stale.messages
        )
        recovered = hermes_core.recovery.get_session(sid)
        assert all(m.get("_pending_journal_recovery") is not True for m in recovered.messages)
        assert all(m.get("type") != "interrupted" for m in recovered.messages)
        assert recovered.messages[-1].get("_recovered_event_id") == terminal_event.event_id
        assert recovered.messages[-1]["content"] == terminal_message["content"]

    def test_journal_recovery_restores_reasoning_only_as_display_metadata(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "reasoning_only_stream", "Keep going", started_at=time.time() - 120,
            messages=[{"role": "user", "content": "existing turn"}],
        )
        hermes_core.append(s.session_id, "reasoning_only_stream", "reasoning", {"text": "private scratchpad text"})
        assert _apply(hermes_core, s, "reasoning_only_stream") is True
        assert not any("private scratchpad text" in m.get("content", "") for m in s.messages)
        assert [m.get("reasoning") for m in s.messages if m.get("reasoning")] == ["private scratchpad text"]
        errors = [m for m in s.messages if m.get("_error")]
        assert len(errors) == 1
        assert errors[0].get("_pending_journal_recovery") is not True
        assert "partial output above was recovered" in errors[0]["content"]
        assert "private scratchpad text" not in json.dumps(transcript.api_messages(s.messages))

    def test_journal_recovery_keeps_consecutive_tools_on_one_anchor(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "tool_burst_stream", "Inspect files", started_at=time.time() - 120,
            messages=[{"role": "user", "content": "existing turn"}],
        )
        hermes_core.append(s.session_id, "tool_burst_stream", "token", {"text": "I will inspect the relevant files first."})
        for name in ("search_files", "read_file"):
            hermes_core.append(s.session_id, "tool_burst_stream", "tool",
                               {"name": name, "preview": name, "args": {"query": "stream recovery"}})
        assert _apply(hermes_core, s, "tool_burst_stream") is True
        assert len(s.tool_calls) == 2
        assert s.tool_calls[0]["assistant_msg_idx"] == s.tool_calls[1]["assistant_msg_idx"]

    def test_core_sync_branch_recovers_visible_journal_output(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "core_journal_stream", "Check maintainer activity", started_at=time.time() - 120,
            messages=[],
        )
        core_messages = [{"role": "user", "content": "Earlier question"}, {"role": "assistant", "content": "Earlier answer"}]
        hermes_core.write_core_transcript(s.session_id, core_messages)
        _journal_check_run(hermes_core, s.session_id, "core_journal_stream")
        assert _apply(hermes_core, s, "core_journal_stream") is True
        contents = [m.get("content", "") for m in s.messages]
        assert contents[:2] == [m["content"] for m in core_messages]
        recovered_users = [m for m in s.messages if m.get("_recovered")]
        assert len(recovered_users) == 1
        assert recovered_users[0]["role"] == "user"
        assert recovered_users[0]["content"] == "Check maintainer activity"
        assert any("I will check GitHub first." in c for c in contents)
        assert any("The first check finished before the restart." in c for c in contents)
        assert s.tool_calls and s.tool_calls[0]["name"] == "terminal"
        errors = [m for m in s.messages if m.get("_error")]
        assert len(errors) == 1
        assert "partial output above was recovered" in errors[0]["content"]
        assert s.pending_user_message is None
        assert s.active_stream_id is None

    def test_finished_worker_can_supersede_its_own_interrupted_marker(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "deploy"}, markers.interrupted_marker()])
        assert can_supersede_recovery_marker(s, "deploy")

    def test_finished_worker_does_not_supersede_after_newer_turn_appended(self) -> None:
        s = make_session(messages=[
            {"role": "user", "content": "deploy"}, markers.interrupted_marker(),
            {"role": "user", "content": "what happened?"},
            {"role": "assistant", "content": "I checked the deployment status."},
        ])
        assert not can_supersede_recovery_marker(s, "deploy")

    def test_finished_worker_does_not_supersede_different_user_turn(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "deploy"}, markers.interrupted_marker()])
        assert not can_supersede_recovery_marker(s, "ship it")

    def test_core_sync_branch_does_not_duplicate_journal_output_already_in_core(self, hermes_core: Core) -> None:
        s = save_pending_session(
            hermes_core, "duplicate_core_journal_stream", "Check maintainer activity", started_at=time.time() - 120,
            messages=[],
        )
        hermes_core.write_core_transcript(
            s.session_id,
            [{"role": "user", "content": "Check maintainer activity"},
             {"role": "assistant", "content": "I will check GitHub first."}],
            tool_calls=[{
                "name": "terminal", "preview": "gh pr list --repo nesquena/hermes-webui",
                "snippet": "gh pr list --repo nesquena/hermes-webui", "assistant_msg_idx": 1, "done": True,
            }],
        )
        stream = "duplicate_core_journal_stream"
        hermes_core.append(s.session_id, stream, "token", {"text": "I will check GitHub first."})
        hermes_core.append(s.session_id, stream, "tool", {
            "name": "terminal", "preview": "gh pr list --repo nesquena/hermes-webui",
            "args": {"command": "gh pr list --repo nesquena/hermes-webui"},
        })
        assert _apply(hermes_core, s, stream) is True
        contents = [m.get("content", "") for m in s.messages]
        assert contents.count("I will check GitHub first.") == 1
        assert len(s.tool_calls) == 1
        assert s.tool_calls[0]["name"] == "terminal"
        assert not [m for m in s.messages if m.get("_error")]
