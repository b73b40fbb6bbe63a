"""Inline completion (`POST complete`, docs/editor.md): a real in-process server, the scripted OpenAI stub.

What is checked: only a person asks; the code is redacted before it reaches the model (the stub's
recorded request) and the answer before it is returned; the demo backend sends nothing anywhere;
an administrator's `allow_inline_completion = False` is a plain 409.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_jupyter.server.completion import MAX_TOKENS, CompletionRequest, cleaned
from hermes_jupyter.server.kernel_token import PERSON_SETTING, SETTING as KERNEL_TOKENS

from ..fakes.openai_stub_server import STUB_COMPLETION, STUB_MODEL, OpenAIStubServer
from .client import HermesClient

KEY = "sk-stub-" + "9a8b7c6d5e4f3a2b1c0dLMNO"
#: A key the user typed into a cell: the server knows nothing about it, its shape gives it away.
TYPED_KEY = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0"
KERNEL = "0b8a3d4e-1f2a-4c5b-9d6e-7f8091a2b3c4"
REQUEST = {"path": "work.ipynb", "cell_id": "c-1", "prefix": "def add", "suffix": "\n", "language": "python"}


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(api_key=KEY) as server:
        yield server


@pytest.fixture
def backend() -> str:
    return "openai"


@pytest.fixture
def allowed() -> bool:
    return True


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], stub: OpenAIStubServer, backend: str,
                     allowed: bool) -> dict[str, Any]:
    config = dict(jp_server_config)
    config["HermesJupyter"] = {**config["HermesJupyter"], "backend": backend, "allow_inline_completion": allowed}
    config["OpenAIAgent"] = {"base_url": stub.base_url, "model": STUB_MODEL, "api_key": KEY, "max_retries": 0}
    return config


async def _complete(api: HermesClient, **changes: Any) -> tuple[int, Any]:
    return await api.call("POST", "complete", body={**REQUEST, **changes})


async def test_a_completion_comes_from_the_configured_model(api: HermesClient, stub: OpenAIStubServer) -> None:
    code, body = await _complete(api)
    assert (code, body) == (200, {"text": STUB_COMPLETION})
    [sent] = stub.chat_requests()
    assert sent["model"] == STUB_MODEL and sent["max_tokens"] == MAX_TOKENS and sent["temperature"] == 0
    assert "def add<CURSOR>\n" in sent["messages"][-1]["content"]
    assert stub.requests[-1].headers["Authorization"] == f"Bearer {KEY}"


async def test_secrets_in_the_code_never_reach_the_model(api: HermesClient, stub: OpenAIStubServer) -> None:
    prefix = f'client = make(api_key="{TYPED_KEY}")\nother = "{KEY}"\ndef add'
    code, body = await _complete(api, prefix=prefix, suffix=f"\n# {TYPED_KEY}\n")
    assert code == 200 and body["text"] == STUB_COMPLETION
    sent = json.dumps(stub.chat_requests())
    assert TYPED_KEY not in sent and KEY not in sent and "[redacted]" in sent
    assert "def add<CURSOR>" in sent  # the code itself still goes


async def test_only_a_person_asks(api: HermesClient, jp_fetch: Any, jp_serverapp: Any,
                                  stub: OpenAIStubServer) -> None:
    token = jp_serverapp.web_app.settings[KERNEL_TOKENS].token_for(KERNEL)
    response = await jp_fetch("hermes", "api", "complete", method="POST", body=json.dumps(REQUEST),
                              headers={"Authorization": f"token {token}"}, raise_error=False)
    assert response.code == 403 and b"Only a person can ask for inline completions" in response.body
    jp_serverapp.web_app.settings[PERSON_SETTING] = frozenset()  # the server token is now a bare token
    assert (await _complete(api))[0] == 403
    assert stub.chat_requests() == []


async def test_a_bad_request_is_a_plain_400(api: HermesClient, stub: OpenAIStubServer) -> None:
    code, body = await _complete(api, prefix=7)
    assert code == 400 and body["message"].startswith("The completion request could not be read")
    assert stub.chat_requests() == []


@pytest.mark.parametrize("backend", ["demo"])
async def test_the_demo_backend_answers_nothing_and_sends_nothing(api: HermesClient, stub: OpenAIStubServer) -> None:
    code, body = await _complete(api)
    assert code == 200 and body["text"] == "" and stub.chat_requests() == []


@pytest.mark.parametrize("allowed", [False])
async def test_an_administrator_can_turn_it_off(api: HermesClient, stub: OpenAIStubServer) -> None:
    code, body = await _complete(api)
    assert code == 409 and body["message"] == "Inline completion is off on this server."
    assert stub.chat_requests() == []


async def test_a_model_error_is_said_plainly_without_the_key(api: HermesClient, stub: OpenAIStubServer) -> None:
    stub.api_key = "sk-another-" + "0" * 24  # the stub now refuses our key
    code, body = await _complete(api)
    assert code == 502 and "refused the completion request" in body["message"] and KEY not in json.dumps(body)


def test_the_answer_is_cut_to_the_insertion() -> None:
    request = CompletionRequest(path="", cell_id="", prefix="x = 1\nprint(", suffix="", language="python")
    assert cleaned("```python\nx)\n```", request) == "x)"
    assert cleaned("print(x)", request) == "x)"  # the current line is not repeated
    assert cleaned("x)  \n", request) == "x)"
