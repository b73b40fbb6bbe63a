"""Port of the peer's sidecar-repair suite: last-resort settle and the cold-read repair path (seed names kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..hermes_fixtures import Core, make_session, make_stale_session
from .test_sidecar_repair_seed import _apply


class TestLastResortSyncDelegation:
    """The worker's last-resort settle goes through the same core-path lookup and repair as a cold read."""

    def test_uses_shared_get_profile_home(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        s = make_stale_session()
        hermes_core.store.save(s)
        called: list[str] = []
        original = hermes_core.recovery.core_transcript_path

        def tracking(session: Any) -> Path | None:
            called.append(session.session_id)
            return original(session)

        monkeypatch.setattr(hermes_core.recovery, "core_transcript_path", tracking)
        hermes_core.live.register_stream("stream_1")
        hermes_core.recovery.settle_last_resort(s, "stream_1", cancelling=False)
        assert len(called) == 1, "the core transcript path should be resolved once"
        assert called[0] == s.session_id

    def test_uses_shared_apply_core_sync_or_error_marker(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        s = make_stale_session()
        hermes_core.store.save(s)
        called: list[tuple[str, str | None, dict[str, Any]]] = []
        original = hermes_core.recovery.apply_core_sync_or_error_marker

        def tracking(session: Any, stream_id_for_recheck: str | None = None, **kwargs: Any) -> bool:
            called.append((session.session_id, stream_id_for_recheck, kwargs))
            return original(session, stream_id_for_recheck, **kwargs)

        monkeypatch.setattr(hermes_core.recovery, "apply_core_sync_or_error_marker", tracking)
        hermes_core.live.register_stream("stream_1")
        hermes_core.recovery.settle_last_resort(s, "stream_1", cancelling=False)
        assert len(called) == 1
        assert called[0][0] == s.session_id
        assert called[0][1] == "stream_1"
        assert called[0][2]["require_stream_dead"] is False

    def test_core_sync_from_last_resort(self, hermes_core: Core) -> None:
        s = make_stale_session(pending_msg="My question")
        hermes_core.store.save(s)
        hermes_core.write_core_transcript(s.session_id, [
            {"role": "user", "content": "My question"}, {"role": "assistant", "content": "Here is the answer"},
        ])
        hermes_core.live.register_stream("stream_1")
        hermes_core.recovery.settle_last_resort(s, "stream_1", cancelling=False)
        assert len(s.messages) == 2
        assert s.messages[0]["content"] == "My question"
        assert s.messages[1]["content"] == "Here is the answer"
        assert s.pending_user_message is None
        assert s.active_stream_id is None


class TestRepairStalePendingIntegration:
    """End to end through `repair_stale_pending` (the cold-read path)."""

    def test_repairs_when_core_exists(self, hermes_core: Core) -> None:
        s = make_stale_session()
        hermes_core.store.save(s)
        hermes_core.write_core_transcript(s.session_id, [
            {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "World"},
        ])
        assert hermes_core.recovery.repair_stale_pending(s) is True
        assert len(s.messages) == 2
        assert s.pending_user_message is None

    def test_repairs_when_core_missing(self, hermes_core: Core) -> None:
        s = make_stale_session(pending_msg="Lost message")
        hermes_core.store.save(s)
        assert hermes_core.recovery.repair_stale_pending(s) is True
        assert len(s.messages) == 2
        users = [m for m in s.messages if m["role"] == "user"]
        assert len(users) == 1
        assert users[0]["content"] == "Lost message"
        assert users[0].get("_recovered") is True
        assert len([m for m in s.messages if m.get("_error")]) == 1

    def test_recovers_when_messages_nonempty(self, hermes_core: Core) -> None:
        s = make_session(messages=[{"role": "user", "content": "hi"}])
        s.pending_user_message = "more"
        s.active_stream_id = "stream_1"
        assert hermes_core.recovery.repair_stale_pending(s) is True
        assert [m["content"] for m in s.messages if m["role"] == "user"] == ["hi", "more"]
        assert s.messages[1].get("_recovered") is True
        assert any(m.get("_error") for m in s.messages)

    def test_skips_when_stream_alive(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="live_stream")
        hermes_core.store.save(s)
        hermes_core.live.register_stream("live_stream")
        try:
            assert hermes_core.recovery.repair_stale_pending(s) is False
        finally:
            hermes_core.live.unregister_stream("live_stream")

    def test_skips_when_worker_alive_without_sse_stream(self, hermes_core: Core) -> None:
        s = make_stale_session(stream_id="detached_stream")
        hermes_core.store.save(s)
        hermes_core.live.register_worker("detached_stream", "stale_sid")
        assert "detached_stream" in hermes_core.live.active_ids()
        assert hermes_core.recovery.repair_stale_pending(s) is False
        assert s.pending_user_message == "Hello hermes"
        assert s.active_stream_id == "detached_stream"
        assert s.messages == []

    def test_skips_when_no_pending(self, hermes_core: Core) -> None:
        s = make_session(messages=[])
        s.pending_user_message = None
        s.active_stream_id = "stream_1"
        assert hermes_core.recovery.repair_stale_pending(s) is False


class TestCoreSyncMetadata:
    """Core-transcript sync carries token and cost counters over."""

    def test_syncs_token_and_cost_fields(self, hermes_core: Core) -> None:
        s = make_stale_session()
        hermes_core.write_core_transcript(
            s.session_id, [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "World"}],
            input_tokens=100, output_tokens=50, estimated_cost=0.05,
        )
        assert _apply(hermes_core, s, "stream_1") is True
        assert s.input_tokens == 100
        assert s.output_tokens == 50
        assert s.estimated_cost == 0.05

    def test_core_empty_messages_falls_through_to_recovery(self, hermes_core: Core) -> None:
        s = make_stale_session(pending_msg="My question")
        hermes_core.write_core_transcript(s.session_id, [])
        assert _apply(hermes_core, s, "stream_1") is True
        users = [m for m in s.messages if m["role"] == "user"]
        assert len(users) == 1
        assert users[0]["content"] == "My question"
        assert users[0].get("_recovered") is True
