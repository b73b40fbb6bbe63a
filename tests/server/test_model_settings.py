"""Model settings from the UI (docs/models.md): a real in-process server, the scripted OpenAI stub.

The server's preset (config) points the openai backend at one stub with a preset key; a person's
saved settings point it at another. What is checked: the key never comes back, only a person may
save or test, the next run goes where the settings say, tests answer in plain words, local servers
are found on the configured ports, locks hold.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.endpoint_settings import FILE_NAME
from hermes_jupyter.server.kernel_token import PERSON_SETTING, SETTING as KERNEL_TOKENS

from ..fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from ..server_process import free_port
from .client import HermesClient

PRESET_KEY = "sk-preset-" + "a1b2c3d4e5f6a7b8c9d0"
SAVED_KEY = "sk-saved-" + "0f9e8d7c6b5a4f3e2d1cWXYZ"
KERNEL = "0b8a3d4e-1f2a-4c5b-9d6e-7f8091a2b3c4"


@pytest.fixture
def preset_stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(model="preset-model") as stub:
        yield stub


@pytest.fixture
def saved_stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(api_key=SAVED_KEY) as stub:
        yield stub


@pytest.fixture
def locked() -> list[str]:
    return []


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], preset_stub: OpenAIStubServer,
                     saved_stub: OpenAIStubServer, locked: list[str]) -> dict[str, Any]:
    config = dict(jp_server_config)
    config["HermesJupyter"] = {**config["HermesJupyter"], "backend": "openai", "locked_settings": locked,
                               "local_model_ports": {"stub": saved_stub.port, "nothing": free_port()}}
    config["OpenAIAgent"] = {"base_url": preset_stub.base_url, "model": "preset-model", "api_key": PRESET_KEY,
                             "max_retries": 0}
    return config


async def _save(api: HermesClient, **body: Any) -> tuple[int, Any]:
    return await api.call("PUT", "settings", body=body)


async def _answer(api: HermesClient, sid: str, message: str = "hello") -> str:
    rows = await api.stream(await api.start(sid, message))
    return "".join(r["payload"].get("text", "") for r in rows if r["event"] == "token")


async def test_a_saved_key_never_comes_back(api: HermesClient, hermes_state: Path) -> None:
    code, saved = await _save(api, url="http://127.0.0.1:9/v1", model="m", key=SAVED_KEY)
    assert code == 200, saved
    code, shown = await api.call("GET", "settings")
    assert code == 200
    for body in (saved, shown):
        assert SAVED_KEY not in json.dumps(body) and SAVED_KEY[-8:] not in json.dumps(body)
        assert body["key_set"] is True and body["key_hint"] == "…" + SAVED_KEY[-4:]
    assert (shown["url"], shown["model"], shown["locked"]) == ("http://127.0.0.1:9/v1", "m", [])
    path = hermes_state / FILE_NAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and SAVED_KEY in path.read_text()
    code, short = await _save(api, key="short-key-123")
    assert short["key_set"] is True and short["key_hint"] is None  # under 16 characters: no hint at all


async def test_only_a_person_saves_or_tests(api: HermesClient, jp_fetch: Any, jp_serverapp: Any) -> None:
    token = jp_serverapp.web_app.settings[KERNEL_TOKENS].token_for(KERNEL)
    headers = {"Authorization": f"token {token}"}
    for method, path, body in (("PUT", "settings", {"key": SAVED_KEY}), ("POST", "settings/test", {})):
        response = await jp_fetch("hermes", "api", path, method=method, body=json.dumps(body), headers=headers,
                                  raise_error=False)
        assert response.code == 403, response.body
        assert b"Only a person can change or test the model settings" in response.body
    jp_serverapp.web_app.settings[PERSON_SETTING] = frozenset()  # the server token is now a bare token
    code, body = await _save(api, key=SAVED_KEY)
    assert code == 403 and SAVED_KEY not in json.dumps(body)
    code, shown = await api.call("GET", "settings")  # reading stays open: nothing secret in it
    assert code == 200 and shown["key_set"] and shown["key_hint"] == "…" + PRESET_KEY[-4:]


async def test_the_next_run_uses_the_saved_endpoint_model_and_key(
    api: HermesClient, preset_stub: OpenAIStubServer, saved_stub: OpenAIStubServer, hermes: Any,
) -> None:
    sid = (await api.create_session())["session_id"]
    assert await _answer(api, sid) == "Hello from the stub model."
    assert preset_stub.chat_requests()[-1]["model"] == "preset-model"
    code, _ = await _save(api, url=saved_stub.base_url, model=STUB_MODEL, key=SAVED_KEY)
    assert code == 200
    assert await _answer(api, sid) == "Hello from the stub model."
    sent = [r for r in saved_stub.requests if r.method == "POST"]
    assert sent and sent[-1].body["model"] == STUB_MODEL
    assert sent[-1].headers["Authorization"] == f"Bearer {SAVED_KEY}"
    assert len(preset_stub.chat_requests()) == 1  # nothing more went to the preset server
    saved_stub.error_note = f" (upstream said: key {SAVED_KEY})"  # a proxy echoing the key
    rows = await api.stream(await api.start(sid, "error 400"))
    assert SAVED_KEY not in json.dumps(rows)
    assert SAVED_KEY in hermes.manager.redactor.known


async def test_the_preset_key_goes_only_to_the_preset_url(api: HermesClient, saved_stub: OpenAIStubServer) -> None:
    saved_stub.api_key = None
    sid = (await api.create_session())["session_id"]
    code, shown = await _save(api, url=saved_stub.base_url, model=STUB_MODEL)
    assert code == 200 and shown["key_set"] is False
    assert await _answer(api, sid) == "Hello from the stub model."
    assert all("Authorization" not in r.headers for r in saved_stub.requests)


async def test_a_connection_test_says_what_is_wrong(api: HermesClient, saved_stub: OpenAIStubServer) -> None:
    async def test(**body: Any) -> dict[str, Any]:
        code, answer = await api.call("POST", "settings/test", body=body)
        assert code == 200, answer
        assert SAVED_KEY not in json.dumps(answer) and "wrong-key" not in json.dumps(answer)
        return answer  # type: ignore[no-any-return]

    wrong = await test(url=saved_stub.base_url, key="wrong-key-0123456789", model=STUB_MODEL)
    assert (wrong["ok"], wrong["kind"]) == (False, "wrong_key")
    assert wrong["message"].startswith("The server refused the key.")
    down = await test(url=f"http://127.0.0.1:{free_port()}/v1", key=SAVED_KEY)
    assert (down["kind"], down["message"][:16]) == ("unreachable", "Nothing answered")
    unknown = await test(url=saved_stub.base_url, key=SAVED_KEY, model="no-such-model")
    assert unknown["kind"] == "unknown_model"
    assert unknown["message"] == f"The server does not offer the model no-such-model. It offers: {STUB_MODEL}."
    good = await test(url=saved_stub.base_url, key=SAVED_KEY, model=STUB_MODEL)
    assert (good["ok"], good["models"], good["message"]) == (True, [STUB_MODEL], f"Connected. Models: {STUB_MODEL}.")
    await _save(api, url=saved_stub.base_url, key=SAVED_KEY)
    stored = await test()  # no key given: the saved one, to the saved URL
    assert stored["ok"] is True


async def test_local_servers_are_found_on_their_ports(api: HermesClient, saved_stub: OpenAIStubServer) -> None:
    code, body = await api.call("GET", "settings/local")
    assert code == 200
    assert body["servers"] == [{"name": "stub", "url": saved_stub.base_url, "models": [STUB_MODEL]}]


@pytest.mark.parametrize("locked", [["url", "key"]])
async def test_locked_settings_are_said_and_kept(api: HermesClient, preset_stub: OpenAIStubServer) -> None:
    code, shown = await api.call("GET", "settings")
    assert shown["locked"] == ["key", "url"] and shown["url"] == preset_stub.base_url
    code, refused = await _save(api, url="http://127.0.0.1:9/v1")
    assert code == 403 and refused["message"] == (
        "The address is set by your administrator and cannot be changed here.")
    code, saved = await _save(api, model=STUB_MODEL)
    assert code == 200 and saved["model"] == STUB_MODEL and saved["url"] == preset_stub.base_url


async def test_a_session_switches_backend_without_a_restart(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any, preset_stub: OpenAIStubServer,
) -> None:
    sid = (await api.create_session(backend="demo"))["session_id"]
    token = jp_serverapp.web_app.settings[KERNEL_TOKENS].token_for(KERNEL)
    response = await jp_fetch("hermes", "api", "sessions", sid, method="PATCH", raise_error=False,
                              body=json.dumps({"backend": "openai"}), headers={"Authorization": f"token {token}"})
    assert response.code in (403, 404)  # a kernel neither switches nor (not its session) sees it
    code, session = await api.call("PATCH", "sessions", sid, body={"backend": "openai"})
    assert code == 200 and session["backend"] == "openai" and session["model"] is None
    assert await _answer(api, sid) == "Hello from the stub model."
    assert len(preset_stub.chat_requests()) == 1
    code, refused = await api.call("PATCH", "sessions", sid, body={"backend": "nope"})
    assert code == 400

