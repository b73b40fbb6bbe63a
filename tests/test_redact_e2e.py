"""Secrets attacked through real runs of a real server: nothing shown or saved reassembles them.

A jupyter server with the extension runs turns of the repo's scripted agent (swapped in as the
`demo` backend) and of the `openai` backend against the stub server. Afterwards the journal
(over the API, all rows' text joined), every file under state_dir (gzipped journals opened),
the settled WebSocket message and the bundle (what a `%%hermes` cell shows; test_transcript_api
checks the kernel's render equals it) are searched. Each test fails on the old per-delta redaction.
"""

from __future__ import annotations

import gzip
import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.hermes.backend import HermesAgent

from .fakes.openai_stub_server import OpenAIStubServer
from .fakes.scripted_agent import Script, ScriptedAgent
from .server.client import HermesClient

KEY = "sk-proj-AbCdEf0123456789GhIjKlMnOpQr"
#: A key no pattern knows and the server never saw (a proxy's upstream key): only its shape gives it away.
UPSTREAM = "zq9Xw2LmT7vB4nK8pR3sYh6Jd1Fc5Ga0"
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
HERMES_KEY = "cfgKey-0a1b2c3d4e5f-hermes"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def hermes_state(tmp_path: Path) -> Path:
    return tmp_path / "hermes-state"


@pytest.fixture
def jp_server_config(hermes_state: Path, stub: OpenAIStubServer) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"hermes_jupyter": True}, "allow_unauthenticated_access": False},
        "HermesJupyter": {"state_dir": str(hermes_state), "drain_timeout": 1.0, "heartbeat_interval": 0.5},
        "OpenAIAgent": {"base_url": stub.base_url, "api_key": "stub-configured-key", "model": "stub-model",
                        "max_retries": 0},
    }


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


@pytest.fixture
def scripted(jp_serverapp: Any) -> ScriptedAgent:
    """The scripted agent, serving the sessions of the `demo` backend of the running server."""
    agent = ScriptedAgent()
    jp_serverapp.web_app.settings["hermes"].manager.backends["demo"] = agent
    return agent


def _deltas(event: str, text: str, size: int) -> list[tuple[str, dict[str, Any]]]:
    return [(event, {"text": text[i : i + size]}) for i in range(0, len(text), size)]


async def _run(api: HermesClient, message: str, backend: str = "demo") -> tuple[str, str, list[dict[str, Any]]]:
    sid = (await api.create_session(backend=backend))["session_id"]
    run_id = await api.start(sid, message)
    rows = await api.stream(run_id)
    return sid, run_id, rows


def _stored_text(root: Path) -> str:
    """Every file under `root` as text, gzipped journals opened."""
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        parts.append((gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace"))
    return "\n".join(parts)


async def _everything(api: HermesClient, state: Path, sid: str, run_id: str) -> dict[str, str]:
    """Where a run's text is shown or saved: joined journal text, files, settled message, bundle, sidecar."""
    code, page = await api.call("GET", "runs", run_id, "events", after_seq="0")
    assert code == 200
    joined = "".join(str(r["payload"].get("text", "")) for r in page["events"])
    code, bundle = await api.call("GET", "runs", run_id, "bundle")
    assert code == 200
    code, session = await api.call("GET", "sessions", sid)
    return {"journal text": joined, "journal rows": json.dumps(page["events"]), "files": _stored_text(state),
            "settled": json.dumps(api.settled[run_id]), "bundle": json.dumps(bundle), "session": json.dumps(session)}


def _assert_nowhere(secret: str, places: dict[str, str]) -> None:
    for name, text in places.items():
        assert secret not in text, f"the secret is whole in the {name}"
        # no fragment that reassembles it: neither half may be shown either
        assert secret[: len(secret) // 2] not in text and secret[len(secret) // 2 :] not in text, name


@pytest.mark.parametrize("size", [1, 4, 400])
async def test_a_key_echoed_in_pieces_is_masked_in_the_journal_files_message_and_bundle(
    api: HermesClient, scripted: ScriptedAgent, hermes_state: Path, size: int,
) -> None:
    answer = "Here is a long preamble. " * 15 + f"Your key is {KEY}; keep it safe."  # the key straddles char 400
    scripted.default = Script(steps=[*_deltas("reasoning", f"The user's key is {KEY} I think.", size),
                                     *_deltas("token", answer, size)])
    sid, run_id, rows = await _run(api, "show my key")
    assert rows[-1]["event"] == "done"
    places = await _everything(api, hermes_state, sid, run_id)
    _assert_nowhere(KEY, places)
    assert places["journal text"].endswith("Your key is [redacted]; keep it safe.")
    seqs = [r["seq"] for r in rows]
    assert seqs == list(range(1, len(rows) + 1))  # nothing held back is lost, seq stays gapless


async def test_a_value_named_secret_in_a_tool_result_is_masked_bare_and_in_the_models_echo(
    api: HermesClient, scripted: ScriptedAgent, hermes_state: Path,
) -> None:
    result = f"aws_secret_access_key = {AWS}\n{AWS}\n"
    scripted.default = Script(steps=[
        ("tool", {"tid": "t1", "name": "terminal", "args": {"command": "cat ~/.aws/credentials"}}),
        ("tool_complete", {"tid": "t1", "name": "terminal", "preview": result, "duration": 0.1, "is_error": False}),
        *_deltas("token", f"The secret is {AWS}, printed twice.", 4),
    ])
    sid, run_id, _ = await _run(api, "read my aws credentials")
    _assert_nowhere(AWS, await _everything(api, hermes_state, sid, run_id))


async def test_a_provider_401_echoing_an_unknown_key_is_masked_in_apperror(
    api: HermesClient, stub: OpenAIStubServer, hermes_state: Path,
) -> None:
    stub.error_note = f" Upstream said: invalid key {UPSTREAM}."
    try:
        sid, run_id, rows = await _run(api, "error 401", backend="openai")
    finally:
        stub.error_note = ""
    terminal = rows[-1]
    assert terminal["event"] == "apperror" and terminal["payload"]["type"] == "authentication"
    assert "Upstream said: invalid key [redacted]" in terminal["payload"]["detail"]
    _assert_nowhere(UPSTREAM, await _everything(api, hermes_state, sid, run_id))


async def test_a_status_row_relaying_a_provider_error_is_masked_by_shape(
    api: HermesClient, scripted: ScriptedAgent, hermes_state: Path,
) -> None:
    scripted.default = Script(steps=[
        ("status", {"text": f"Provider error: 401 invalid api key {UPSTREAM}, retrying", "level": "warning"}),
        ("token", {"text": "Done."}),
    ])
    sid, run_id, rows = await _run(api, "retry please")
    assert [r["payload"]["text"] for r in rows if r["event"] == "status"] == [
        "Provider error: 401 invalid api key [redacted], retrying"]
    _assert_nowhere(UPSTREAM, await _everything(api, hermes_state, sid, run_id))


async def test_a_key_from_hermes_config_echoed_by_the_model_is_masked(
    api: HermesClient, scripted: ScriptedAgent, hermes_state: Path, tmp_path: Path,
) -> None:
    home = tmp_path / "hermes_home"
    home.mkdir()
    (home / "config.yaml").write_text(f"model:\n  default: stub-model\n  api_key: {HERMES_KEY}\n", encoding="utf-8")
    scripted.env = {"HERMES_HOME": str(home)}  # type: ignore[attr-defined]
    scripted.known_secrets = types.MethodType(HermesAgent.known_secrets, scripted)  # type: ignore[attr-defined]
    scripted.default = Script(steps=_deltas("token", f"Hermes is configured with {HERMES_KEY} as its key.", 3))
    sid, run_id, _ = await _run(api, "what key does hermes use")
    places = await _everything(api, hermes_state, sid, run_id)
    _assert_nowhere(HERMES_KEY, places)
    assert "configured with [redacted] as its key." in places["journal text"]


def test_the_servers_own_redactor_knows_hermes_configured_keys(tmp_path: Path) -> None:
    """The server's redactor (its log filter, every error it writes) masks Hermes' config keys too,
    not only the runs of the hermes backend."""
    from hermes_jupyter.redact import Redactor
    from hermes_jupyter.server.app import HermesJupyter

    home = tmp_path / "hermes_home"
    home.mkdir()
    (home / "config.yaml").write_text(f"model:\n  api_key: {HERMES_KEY}\n", encoding="utf-8")
    hermes = types.SimpleNamespace(env={"HERMES_HOME": str(home)}, api_key=None)
    hermes.known_secrets = types.MethodType(HermesAgent.known_secrets, hermes)
    owner = types.SimpleNamespace(redactor=Redactor())
    redactor = HermesJupyter._redactor(owner, {"hermes": hermes})  # type: ignore[arg-type]
    assert redactor.text(f"upstream said {HERMES_KEY}") == "upstream said [redacted]"
