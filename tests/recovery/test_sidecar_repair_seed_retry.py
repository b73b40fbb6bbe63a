"""Port of the peer's sidecar-repair suite: markers, lazy journal retry, dedupe scoping (seed names kept)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from hermes_jupyter import markers, transcript
from hermes_jupyter.runs import settle
from hermes_jupyter.recovery.repair import has_pending_journal_retry
from hermes_jupyter.sessions.store import Session

from ..hermes_fixtures import Core, make_session
from .test_sidecar_repair_seed import _apply


def _pending_marker(stream_id: str, attempts: int = 0, first_seen_ts: int | None = None) -> dict[str, Any]:
    marker = markers.interrupted_marker(pending_retry=True)
    marker["_journal_retry_stream_id"] = stream_id
    marker["_journal_retry_attempts"] = attempts
    marker["_journal_retry_first_seen_ts"] = first_seen_ts if first_seen_ts is not None else int(time.time())
    return marker


class TestInterruptedRecoveryMarker:
    """The marker builder: recovered output, pending retry, or neither."""

    def test_marker_recovered_output_excludes_pending_retry_flag(self) -> None:
        marker = markers.interrupted_marker(recovered_output=True)
        assert marker["_error"] is True
        assert marker["type"] == "interrupted"
        assert "_pending_journal_recovery" not in marker
        assert "recovered from the run journal" in marker["content"]

    def test_marker_pending_retry_sets_flag_and_wording(self) -> None:
        marker = markers.interrupted_marker(pending_retry=True)
        assert marker.get("_pending_journal_recovery") is True
        assert "Recovering the partial output" in marker["content"]
        assert "no agent output was recovered" not in marker["content"]

    def test_marker_recovered_output_beats_pending_retry(self) -> None:
        marker = markers.interrupted_marker(recovered_output=True, pending_retry=True)
        assert "_pending_journal_recovery" not in marker
        assert "recovered from the run journal" in marker["content"]

    def test_marker_default_wording_unchanged_for_no_output_no_retry(self) -> None:
        marker = markers.interrupted_marker()
        assert "_pending_journal_recovery" not in marker
        assert "no agent output was recovered" in marker["content"]


class TestRetryJournalRecoveryInPlace:
    """The lazy retry: promote, charge an attempt, or give up."""

    def _make_pending_session(
        self, core: Core, stream_id: str = "lazy_stream", attempts: int = 0, first_seen_ts: int | None = None
    ) -> Session:
        s = make_session(messages=[
            {"role": "user", "content": "earlier turn"},
            {"role": "assistant", "content": "earlier reply"},
            {"role": "user", "content": "Stuck draft", "_recovered": True},
        ])
        s.messages.append(_pending_marker(stream_id, attempts, first_seen_ts))
        core.store.save(s)
        return s

    def test_promotes_marker_when_journal_now_available(self, hermes_core: Core) -> None:
        stream_id = "lazy_stream_promote"
        s = self._make_pending_session(hermes_core, stream_id=stream_id)
        marker_before = s.messages[-1]
        hermes_core.append(s.session_id, stream_id, "token", {"text": "Late tokens."})
        hermes_core.append(s.session_id, stream_id, "tool", {"name": "terminal", "preview": "echo", "args": {"cmd": "echo"}})
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is True
        marker_idx = next(i for i, m in enumerate(s.messages) if m.get("type") == "interrupted" and m.get("_error"))
        promoted = s.messages[marker_idx]
        assert promoted is marker_before
        assert "recovered from the run journal" in promoted["content"]
        for key in markers.RETRY_KEYS:
            assert key not in promoted
        recovered = [m for m in s.messages[:marker_idx] if m.get("_recovered_from_run_journal")]
        assert recovered, "journaled assistant rows must sit above the marker"
        assert any("Late tokens." in m.get("content", "") for m in recovered)
        for tc in s.tool_calls:
            idx = tc.get("assistant_msg_idx")
            if isinstance(idx, int):
                assert 0 <= idx < len(s.messages)

    def test_increments_attempts_when_journal_still_empty(self, hermes_core: Core) -> None:
        s = self._make_pending_session(hermes_core, stream_id="lazy_stream_increment")
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
        marker = s.messages[-1]
        assert marker.get("_pending_journal_recovery") is True
        assert marker.get("_journal_retry_attempts") == 1
        assert "Recovering the partial output" in marker["content"]

    def test_demotes_to_neutral_after_max_attempts(self, hermes_core: Core) -> None:
        s = self._make_pending_session(
            hermes_core, stream_id="lazy_stream_giveup_attempts",
            attempts=hermes_core.recovery.policy.retry_max_attempts,
        )
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
        marker = s.messages[-1]
        for key in markers.RETRY_KEYS:
            assert key not in marker
        assert "Partial output may have been lost" in marker["content"]
        assert "Recovering the partial output" not in marker["content"]

    def test_demotes_to_neutral_after_giveup_seconds(self, hermes_core: Core) -> None:
        first_seen = int(time.time()) - int(hermes_core.recovery.policy.retry_giveup_s + 60)
        s = self._make_pending_session(hermes_core, stream_id="lazy_stream_giveup_age", first_seen_ts=first_seen)
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
        marker = s.messages[-1]
        assert "_pending_journal_recovery" not in marker
        assert "Partial output may have been lost" in marker["content"]

    def test_noop_when_no_pending_marker(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        s = make_session(messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])
        hermes_core.store.save(s)
        spy: list[int] = []
        original = settle.recover_output
        monkeypatch.setattr(settle, "recover_output", lambda *a, **kw: spy.append(1) or original(*a, **kw))
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is False
        assert spy == [], "no pending marker → must not call recovery"

    def test_short_circuit_helper_detects_pending_marker(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])
        assert has_pending_journal_retry(s) is False
        s.messages.append(_pending_marker("abc"))
        assert has_pending_journal_retry(s) is True

    def test_short_circuit_helper_stops_at_normal_assistant(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "x"}])
        s.messages.append(_pending_marker("abc"))
        s.messages.append({"role": "user", "content": "later"})
        s.messages.append({"role": "assistant", "content": "later reply"})
        assert has_pending_journal_retry(s) is False


class TestGetSessionLazyRetryHook:
    """Every full read retries a pending marker, on cache hits and cold loads alike."""

    def _make_session_with_pending_marker(self, sid: str, stream_id: str) -> Session:
        s = make_session(session_id=sid, messages=[
            {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"},
            {"role": "user", "content": "u2", "_recovered": True},
        ])
        s.messages.append(_pending_marker(stream_id))
        return s

    def test_triggers_retry_on_cache_hit(self, hermes_core: Core) -> None:
        sid, stream_id = "lazy_get_cache", "stream_cache"
        s = self._make_session_with_pending_marker(sid, stream_id)
        hermes_core.store.save(s)
        hermes_core.append(sid, stream_id, "token", {"text": "Late."})
        reloaded = hermes_core.recovery.get_session(sid)
        assert reloaded is s
        marker = next(m for m in s.messages if m.get("type") == "interrupted" and m.get("_error"))
        assert "recovered from the run journal" in marker["content"]
        assert "_pending_journal_recovery" not in marker

    def test_triggers_retry_on_cold_load(self, hermes_core: Core) -> None:
        sid, stream_id = "lazy_get_cold", "stream_cold"
        s = self._make_session_with_pending_marker(sid, stream_id)
        hermes_core.store.save(s)
        hermes_core.store.evict(sid)
        hermes_core.append(sid, stream_id, "token", {"text": "Late."})
        reloaded = hermes_core.recovery.get_session(sid)
        marker = next(m for m in reloaded.messages if m.get("type") == "interrupted" and m.get("_error"))
        assert "recovered from the run journal" in marker["content"]
        assert "_pending_journal_recovery" not in marker

    def test_short_circuit_when_no_pending_marker(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        sid = "lazy_get_no_pending"
        hermes_core.store.save(make_session(session_id=sid, messages=[
            {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
        ]))
        spy: list[int] = []
        monkeypatch.setattr(hermes_core.recovery, "retry_journal_recovery_in_place", lambda s: spy.append(1) or False)
        hermes_core.recovery.get_session(sid)
        assert spy == []

    def test_metadata_only_skips_retry(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        sid = "lazy_get_meta"
        hermes_core.store.save(self._make_session_with_pending_marker(sid, "stream_meta"))
        spy: list[int] = []
        monkeypatch.setattr(hermes_core.recovery, "retry_journal_recovery_in_place", lambda s: spy.append(1) or False)
        hermes_core.recovery.get_session(sid, metadata_only=True)
        assert spy == [], "metadata_only must skip the lazy-retry helper"


class TestLazyRetryBackwardsCompat:
    """Markers written before the retry hook existed keep working."""

    def test_legacy_marker_without_flag_unchanged(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        sid = "legacy_marker_sid"
        s = make_session(session_id=sid, messages=[
            {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
            {"role": "user", "content": "later", "_recovered": True},
        ])
        s.messages.append(markers.interrupted_marker(recovered_output=False))
        hermes_core.store.save(s)
        hermes_core.store.evict(sid)
        spy: list[int] = []
        original = settle.recover_output
        monkeypatch.setattr(settle, "recover_output", lambda *a, **kw: spy.append(1) or original(*a, **kw))
        hermes_core.recovery.get_session(sid)
        assert spy == [], "legacy marker (no flag) must not re-trigger recovery"

    def test_pending_retry_marker_round_trips_through_session_save_and_load(self, hermes_core: Core) -> None:
        sid = "round_trip_sid"
        s = make_session(session_id=sid, messages=[{"role": "user", "content": "x"}])
        s.messages.append(_pending_marker("abc", attempts=3, first_seen_ts=1779200000))
        hermes_core.store.save(s)
        hermes_core.store.evict(sid)
        last = hermes_core.store.load(sid, use_cache=False).messages[-1]
        assert last.get("_pending_journal_recovery") is True
        assert last.get("_journal_retry_stream_id") == "abc"
        assert last.get("_journal_retry_attempts") == 3
        assert last.get("_journal_retry_first_seen_ts") == 1779200000


class TestJournalToolDedupeScoping:
    """Tool dedupe only collapses against cards of the same run, never an earlier turn's identical call."""

    def test_repeated_tool_in_earlier_turn_does_not_block_recovery(self, hermes_core: Core) -> None:
        sid, stream_id = "dedupe_scope_sid", "dedupe_scope_stream"
        s = make_session(session_id=sid, messages=[
            {"role": "user", "content": "earlier turn"}, {"role": "assistant", "content": "earlier reply"},
            {"role": "user", "content": "later turn", "_recovered": True},
        ])
        s.tool_calls = [{
            "name": "terminal", "preview": "ls", "snippet": "ls", "tid": "old-1",
            "_recovered_from_run_journal": True, "_recovered_stream_id": "earlier_stream", "done": True,
        }]
        s.messages.append(_pending_marker(stream_id))
        hermes_core.store.save(s)
        hermes_core.append(sid, stream_id, "token", {"text": "Listing."})
        hermes_core.append(sid, stream_id, "tool", {"name": "terminal", "preview": "ls", "args": {"cmd": "ls"}})
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is True
        scoped = [tc for tc in s.tool_calls if tc.get("_recovered_stream_id") == stream_id]
        assert len(scoped) == 1
        assert scoped[0]["name"] == "terminal"
        assert scoped[0]["preview"] == "ls"
        assert any(tc.get("_recovered_stream_id") == "earlier_stream" for tc in s.tool_calls)

    def test_untagged_tool_still_matches_for_core_transcript_invariant(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])
        s.tool_calls = [{"name": "terminal", "preview": "ls", "snippet": "ls"}]
        assert transcript.tool_already_present(s, "terminal", "ls") is True
        assert transcript.tool_already_present(s, "terminal", "ls", stream_id="some_stream") is True

    def test_tagged_tool_with_different_stream_does_not_match(self) -> None:
        s = make_session(messages=[{"role": "user", "content": "x"}])
        s.tool_calls = [{"name": "terminal", "preview": "ls", "snippet": "ls", "_recovered_stream_id": "other_stream"}]
        assert transcript.tool_already_present(s, "terminal", "ls", stream_id="this_stream") is False
        assert transcript.tool_already_present(s, "terminal", "ls", stream_id="other_stream") is True


class TestWslPageCacheRace:
    """A journal that cannot be read at first (or is still growing) is recovered by a later read."""

    def test_first_read_raises_oserror_second_read_succeeds(self, hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
        sid, stream_id = "wsl_race_sid", "wsl_race_stream"
        s = make_session(session_id=sid, messages=[{"role": "user", "content": "x"}])
        s.pending_user_message = "Keep going"
        s.pending_started_at = time.time() - 120
        s.active_stream_id = stream_id
        real = hermes_core.journals.read_rows
        attempts = {"n": 0}

        def flaky(*args: Any, **kwargs: Any) -> Any:
            attempts["n"] += 1
            if attempts["n"] == 1:
                raise OSError("EIO simulated by test")
            return real(*args, **kwargs)

        monkeypatch.setattr(hermes_core.journals, "read_rows", flaky)
        assert _apply(hermes_core, s, stream_id) is True
        marker = next(m for m in s.messages if m.get("type") == "interrupted")
        assert marker.get("_pending_journal_recovery") is True
        hermes_core.append(sid, stream_id, "token", {"text": "Came back."})
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is True
        marker_after = next(m for m in s.messages if m.get("type") == "interrupted")
        assert "recovered from the run journal" in marker_after["content"]
        assert "_pending_journal_recovery" not in marker_after

    def test_journal_grows_between_reads(self, hermes_core: Core) -> None:
        sid, stream_id = "wsl_grow_sid", "wsl_grow_stream"
        s = make_session(session_id=sid, messages=[{"role": "user", "content": "x"}])
        s.pending_user_message = "Keep going"
        s.pending_started_at = time.time() - 120
        s.active_stream_id = stream_id
        assert _apply(hermes_core, s, stream_id) is True
        marker = next(m for m in s.messages if m.get("type") == "interrupted")
        assert marker.get("_pending_journal_recovery") is True
        hermes_core.append(sid, stream_id, "token", {"text": "Partial 1."})
        hermes_core.append(sid, stream_id, "token", {"text": " Partial 2."})
        hermes_core.append(sid, stream_id, "tool", {"name": "terminal", "preview": "ls", "args": {"cmd": "ls"}})
        assert hermes_core.recovery.retry_journal_recovery_in_place(s) is True
        marker_after = next(m for m in s.messages if m.get("type") == "interrupted")
        assert "recovered from the run journal" in marker_after["content"]
        marker_idx = s.messages.index(marker_after)
        text = " ".join(m.get("content", "") for m in s.messages[:marker_idx] if m.get("_recovered_from_run_journal"))
        assert "Partial 1." in text and "Partial 2." in text

    def test_concurrent_get_session_calls_idempotent(self, hermes_core: Core) -> None:
        sid, stream_id = "wsl_concurrent_sid", "wsl_concurrent_stream"
        s = make_session(session_id=sid, messages=[
            {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
            {"role": "user", "content": "later", "_recovered": True},
        ])
        s.messages.append(_pending_marker(stream_id))
        hermes_core.store.save(s)
        hermes_core.append(sid, stream_id, "token", {"text": "ConcurrentTokens"})
        results: list[Any] = []

        def _worker() -> None:
            try:
                hermes_core.recovery.get_session(sid)
                results.append("ok")
            except Exception as exc:  # noqa: BLE001 - reported below
                results.append(exc)

        threads = [threading.Thread(target=_worker, daemon=True) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=5)
        assert results.count("ok") == 2, f"both workers must succeed: {results}"
        assert len([m for m in s.messages if m.get("type") == "interrupted"]) == 1
        recovered = [m for m in s.messages if m.get("_recovered_from_run_journal")]
        assert sum(1 for m in recovered if "ConcurrentTokens" in m.get("content", "")) == 1
