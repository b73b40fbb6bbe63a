"""Scene: "Model settings…" beside the model picker; the person points the session at an OpenAI-compatible
server (the scripted stub, which wants a key), tests the connection, saves, and the next answer comes from
that server. The key goes in once and never comes back (docs/models.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from ..server_process import JupyterServerProcess
from .lab_page import SIDEBAR, LabPage
from .test_notebook_assist import keep_screenshot

KEY = "sk-browser-" + "5f4e3d2c1b0a9f8e7d6cQRST"
FORM = ".jp-Dialog [data-testid=hermes-model-settings]"
STATUS = f"{FORM} [data-testid=hermes-settings-status]"


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(api_key=KEY) as server:
        yield server


@pytest.fixture
def own_lab(make_lab_server: Callable[[str], JupyterServerProcess],
            make_lab: Callable[[JupyterServerProcess], Any]) -> LabPage:
    """A server of its own: saving settings changes what new sessions get, for every tab."""
    lab: LabPage = make_lab(make_lab_server("model-settings"))
    return lab


def _status(lab: LabPage, starts: str, timeout_ms: int = 30_000) -> str:
    lab.page.wait_for_function(
        "([sel, starts]) => { const e = document.querySelector(sel); return !!e && e.textContent.startsWith(starts); }",
        arg=[STATUS, starts], timeout=timeout_ms,
    )
    return lab.page.inner_text(STATUS)


def test_the_settings_dialog_switches_the_session_to_an_openai_compatible_server(
    own_lab: LabPage, stub: OpenAIStubServer,
) -> None:
    lab = own_lab
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.page.click(f"{SIDEBAR} [data-testid=hermes-model-settings-open]")
    lab.page.wait_for_selector(f"{FORM}[data-state=ready]")
    lab.page.select_option(f"{FORM} [data-testid=hermes-settings-backend]", "openai")
    lab.page.fill(f"{FORM} [data-testid=hermes-settings-url]", stub.base_url)
    lab.page.fill(f"{FORM} [data-testid=hermes-settings-key]", "sk-wrong-" + "0" * 20)
    lab.page.click(f"{FORM} [data-testid=hermes-settings-test]")
    assert _status(lab, "The server refused the key.")
    lab.page.fill(f"{FORM} [data-testid=hermes-settings-key]", KEY)
    lab.page.fill(f"{FORM} [data-testid=hermes-settings-model]", STUB_MODEL)
    lab.page.click(f"{FORM} [data-testid=hermes-settings-test]")
    assert _status(lab, "Connected.") == f"Connected. Models: {STUB_MODEL}."
    assert lab.page.get_attribute(f"{FORM} [data-testid=hermes-settings-key]", "type") == "password"
    keep_screenshot(lab, "model-settings")
    keep_screenshot(lab, "model-settings-dark", dark=True)
    lab.page.click(f"{FORM} [data-testid=hermes-settings-save]")
    assert _status(lab, "Saved.") == f"Saved. The next answer comes from {STUB_MODEL} at {stub.base_url}."
    key_field = f"{FORM} [data-testid=hermes-settings-key]"
    assert lab.page.input_value(key_field) == ""  # never filled back from the server
    assert KEY[-4:] in (lab.page.get_attribute(key_field, "placeholder") or "")
    lab.page.click(".jp-Dialog .jp-mod-reject")
    lab.page.wait_for_selector(FORM, state="detached")

    lab.send("hello there")
    lab.wait_idle()
    assert lab.last_message_text() == "Hello from the stub model."
    sent = [r for r in stub.requests if r.method == "POST" and r.body and r.body.get("messages")]
    assert sent and sent[-1].headers["Authorization"] == f"Bearer {KEY}" and sent[-1].body["model"] == STUB_MODEL
    session = lab.server.get(f"sessions/{session_id}").json()
    assert (session["backend"], session["model"]) == ("openai", STUB_MODEL)
    settings = lab.server.get("settings")
    assert settings.status_code == 200 and KEY not in settings.text
