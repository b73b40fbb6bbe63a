"""Port of the peer's sidecar-repair regression suite (repair branches), seed names kept verbatim.

The seed drove module globals of the peer; here the same assertions run against
`Recovery`, `SessionStore`, `Journals` and `LiveRuns` built over a temp state dir.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter import paths
from hermes_jupyter.runs.settle import settle_error
from hermes_jupyter.sessions.store import SessionStore
from hermes_jupyter.transcript import Verdict, fold

from ..hermes_fixtures import Core, make_session, make_stale_session


class _FailingStore(SessionStore):
    """A store whose save fails, as a full disk would fail the error path's save."""

    def save(self, session: Any, *, touch: bool = True) -> None:
        raise OSError("forced gateway terminal error save failure")


def _journal_gateway_terminal_save_failure(
    core: Core, stale_session: Any, *, live_messages: list[dict[str, Any]],
    partial_text: str = "Current partial output.", terminal_error: str = "gateway exploded",
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Compose the real error-settle payload (its save failing) and journal it through the real journal."""
    stream_id = stale_session.active_stream_id
    live = make_session(
        session_id=stale_session.session_id,
        messages=[dict(m) for m in live_messages],
        context_messages=[dict(m) for m in live_messages],
    )
    live.pending_user_message = stale_session.pending_user_message
    live.pending_started_at = stale_session.pending_started_at
    live.pending_attachments = list(stale_session.pending_attachments)
    live.active_stream_id = stream_id
    if partial_text:
        core.append(live.session_id, stream_id, "token", {"text": partial_text})
    transcript = fold(
        core.journals.iter_rows(live.session_id, stream_id), run_id=stream_id, session_id=live.session_id,
        verdict=Verdict(),
    )
    payload = settle_error(
        _FailingStore(core.state_dir / "sessions"), live, stream_id, transcript,
        message=terminal_error, error_type="gateway_error",
    )
    assert payload["terminal_session_persisted"] is False
    terminal_event = core.append(live.session_id, stream_id, "apperror", payload)
    terminal_message = next(
        m for m in reversed(payload["session"]["messages"])
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("_error") is True
    )
    return payload, terminal_event, terminal_message


class TestRepairStalePendingNoDeadlock:
    """Repair takes the session lock non-blocking, so holders of the lock cannot deadlock on a read."""

    def test_returns_false_when_lock_already_held(self, hermes_core: Core) -> None:
        s = make_stale_session()
        hermes_core.store.save(s)
        lock = hermes_core.store.lock(s.session_id)
        assert lock.acquire(blocking=False)
        try:
            assert hermes_core.recovery.repair_stale_pending(s) is False, "Should bail out when lock is contended"
        finally:
            lock.release()

    def test_no_deadlock_when_get_session_triggers_repair(self, hermes_core: Core) -> None:
        s = make_stale_session()
        hermes_core.store.save(s)
        sid = s.session_id
        completed = threading.Event()
        worker_exc: list[BaseException] = []

        def _worker() -> None:
            try:
                with hermes_core.store.lock(sid):
                    hermes_core.store.evict(sid)
                    result = hermes_core.recovery.get_session(sid)
                    assert result is not None
                    assert result.pending_user_message is not None, "pending kept when the lock is held"
                    assert hermes_core.store.cached(sid) is None, "a still-stale session must not stay cached"
            except BaseException as exc:  # noqa: BLE001 - reported to the main thread
                worker_exc.append(exc)
            finally:
                completed.set()

        worker = threading.Thread(target=_worker, daemon=True)
        worker.start()
        assert completed.wait(timeout=5), "get_session deadlocked in the repair path"
        worker.join(timeout=1)
        assert not worker_exc, f"Worker raised exception: {worker_exc[0] if worker_exc else 'none'}"

    def test_lock_contended_skip_retries_on_next_cache_miss(self, hermes_core: Core) -> None:
        sid = "stale_retry_sid"
        s = make_stale_session(session_id=sid, pending_msg="Recover me")
        hermes_core.store.save(s)
        hermes_core.write_core_transcript(
            sid, [{"role": "user", "content": "Recover me"}, {"role": "assistant", "content": "Recovered answer"}]
        )
        hermes_core.store.evict(sid)
        lock = hermes_core.store.lock(sid)
        assert lock.acquire(blocking=False)
        try:
            skipped = hermes_core.recovery.get_session(sid)
            assert skipped.pending_user_message == "Recover me"
            assert hermes_core.store.cached(sid) is None
        finally:
            lock.release()
        repaired = hermes_core.recovery.get_session(sid)
        assert repaired.pending_user_message is None
        assert repaired.active_stream_id is None
        assert [m["content"] for m in repaired.messages] == ["Recover me", "Recovered answer"]
        assert hermes_core.store.cached(sid) is repaired


def _apply(core: Core, s: Any, stream: str | None, **kwargs: Any) -> bool:
    """Run the repair core as its callers do: holding the session lock."""
    with core.store.lock(s.session_id):
        return core.recovery.apply_core_sync_or_error_marker(s, stream, core_path=core.core_path(s.session_id), **kwargs)


class TestDraftRecovery:
    """Without a core transcript the pending prompt comes back as a `_recovered` user turn plus a marker."""

    def test_pending_message_recovered_as_user_turn(self, hermes_core: Core) -> None:
        ts = time.time() - 60
        s = make_stale_session(pending_msg="My important question")
        s.pending_started_at = ts
        assert _apply(hermes_core, s, "stream_1") is True
        users = [m for m in s.messages if m.get("role") == "user"]
        assert len(users) == 1
        assert users[0]["content"] == "My important question"
        assert users[0].get("_recovered") is True
        assert users[0]["timestamp"] == int(ts)

    def test_pending_message_recovered_into_context_messages(self, hermes_core: Core) -> None:
        s = make_session(
            messages=[{"role": "user", "content": "older visible turn"}],
            context_messages=[
                {"role": "user", "content": "older context turn"},
                {"role": "assistant", "content": "older context answer"},
            ],
        )
        s.pending_user_message = "Clip this article https://example.com/post"
        s.active_stream_id = "stream_1"
        assert _apply(hermes_core, s, "stream_1") is True
        assert any(
            m.get("role") == "user" and m.get("content") == "Clip this article https://example.com/post"
            and m.get("_recovered") is True
            for m in s.messages
        )
        assert any(
            m.get("role") == "user" and m.get("content") == "Clip this article https://example.com/post"
            for m in s.context_messages
        ), "Recovered pending user turn must be included in model context."

    def test_error_marker_no_preserved_as_draft(self, hermes_core: Core) -> None:
        s = make_stale_session()
        _apply(hermes_core, s, "stream_1")
        errors = [m for m in s.messages if m.get("_error")]
        assert len(errors) == 1
        content = errors[0]["content"]
        assert "preserved as a draft" not in content
        assert "Response interrupted" in content
        assert "live response stream stopped" in content
        assert "WebUI process restarted" not in content
        assert "user message above was preserved" in content or "Recovering the partial output" in content
        assert errors[0].get("type") == "interrupted"

    def test_pending_attachments_recovered(self, hermes_core: Core) -> None:
        s = make_stale_session()
        s.pending_attachments = [{"type": "image", "name": "photo.png"}]
        _apply(hermes_core, s, "stream_1")
        users = [m for m in s.messages if m.get("role") == "user"]
        assert len(users) == 1
        assert users[0].get("attachments") == [{"type": "image", "name": "photo.png"}]

    def test_pending_fields_cleared_after_recovery(self, hermes_core: Core) -> None:
        s = make_stale_session()
        s.pending_attachments = [{"type": "image", "name": "photo.png"}]
        s.pending_started_at = time.time()
        _apply(hermes_core, s, "stream_1")
        assert s.pending_user_message is None
        assert s.pending_attachments == []
        assert s.pending_started_at is None
        assert s.active_stream_id is None


class TestStreamIdRecheck:
    """The under-lock re-check bails when the stream id rotated or the stream is alive again."""

    def test_bails_when_stream_id_rotated(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="stream_old")
        s.active_stream_id = "stream_new"
        assert _apply(hermes_core, s, "stream_old") is False, "Should bail when stream_id rotated"

    def test_bails_when_stream_came_alive(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="stream_alive")
        hermes_core.live.register_stream("stream_alive")
        try:
            assert _apply(hermes_core, s, "stream_alive") is False, "Should bail when stream is still alive"
        finally:
            hermes_core.live.unregister_stream("stream_alive")

    def test_proceeds_when_stream_is_dead(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="stream_dead")
        assert _apply(hermes_core, s, "stream_dead") is True


class TestGetProfileHome:
    """`paths.hermes_home` expands `~` in HERMES_HOME and in its default."""

    def test_expands_tilde_when_profiles_unavailable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("HERMES_HOME", raising=False)
        result = paths.hermes_home()
        assert "~" not in str(result), f"Path should have ~ expanded, got: {result}"
        assert str(result) == str(Path.home() / ".hermes")

    def test_uses_hermes_home_env_var(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("HERMES_HOME", "/custom/hermes")
        assert paths.hermes_home() == Path("/custom/hermes").expanduser()

    def test_expands_tilde_in_hermes_home(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("HERMES_HOME", "~/my-hermes")
        result = paths.hermes_home()
        assert "~" not in str(result)
        assert str(result) == str(Path.home() / "my-hermes")


class TestCancelInProgressGuard:
    """The last-resort settle does nothing while a cancel is in progress (the cancel path settles)."""

    def test_bails_when_cancel_flag_set(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="cancel_stream")
        hermes_core.store.save(s)
        cancel = threading.Event()
        cancel.set()
        before = len(s.messages)
        hermes_core.recovery.settle_last_resort(s, "cancel_stream", cancelling=cancel.is_set())
        assert len(s.messages) == before, "Should not append messages when cancel is in progress"
        assert s.pending_user_message is not None

    def test_proceeds_when_cancel_flag_not_set(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="normal_stream")
        hermes_core.store.save(s)
        cancel = threading.Event()
        hermes_core.live.register_stream("normal_stream")
        hermes_core.recovery.settle_last_resort(s, "normal_stream", cancelling=cancel.is_set())
        assert len(s.messages) > 0, "Should have appended messages"

    def test_proceeds_when_cancel_flag_absent(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="no_flag_stream")
        hermes_core.store.save(s)
        hermes_core.live.register_stream("no_flag_stream")
        hermes_core.recovery.settle_last_resort(s, "no_flag_stream", cancelling=False)
        assert len(s.messages) > 0
