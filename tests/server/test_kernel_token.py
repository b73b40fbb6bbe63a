"""A kernel's token opens the hermes routes (REST and the run WebSocket) and no other Jupyter route.

Each kernel gets its own as HERMES_JUPYTER_SERVER_TOKEN instead of the server token; a real kernel's
environment is checked in tests/notebook/test_real_kernels.py, its scope in test_principals.py.
Here the token is made for a kernel id the server has not started: the token alone names it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from hermes_jupyter.redact import Redactor
from hermes_jupyter.server.kernel_token import PREFIX, SETTING


@pytest.fixture
def kernel_token(jp_serverapp: Any) -> str:
    token = jp_serverapp.web_app.settings[SETTING].token_for("0b8a3d4e-1f2a-4c5b-9d6e-7f8091a2b3c4")
    assert isinstance(token, str) and token.startswith(PREFIX) and len(token) > 40
    return token


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


async def _code(jp_fetch: Any, *parts: str, headers: dict[str, str] | None = None, method: str = "GET",
                body: str | None = None, **kwargs: Any) -> int:
    try:
        response = await jp_fetch(*parts, method=method, body=body, headers=headers, **kwargs)
    except HTTPClientError as err:
        return err.code
    return int(response.code)


async def test_the_kernel_token_reaches_the_hermes_routes(jp_fetch: Any, kernel_token: str) -> None:
    for scheme in ("token", "Bearer"):
        headers = {"Authorization": f"{scheme} {kernel_token}"}
        assert await _code(jp_fetch, "hermes", "api", "sessions", headers=headers) == 200
    created = await jp_fetch("hermes", "api", "sessions", method="POST", body=json.dumps({"title": "from a kernel"}),
                             headers=_auth(kernel_token))  # a POST with no XSRF cookie: token-authenticated
    assert created.code == 201
    sid = json.loads(created.body)["session_id"]
    run = await jp_fetch("hermes", "api", "sessions", sid, "runs", method="POST",
                         body=json.dumps({"message": "count to 3"}), headers=_auth(kernel_token))
    assert run.code == 202


@pytest.mark.parametrize("route", [("api", "contents"), ("api", "kernels"), ("api", "sessions"),
                                   ("api", "kernelspecs"), ("api", "me"), ("api", "status")])
async def test_the_kernel_token_is_refused_by_every_other_jupyter_route(jp_fetch: Any, kernel_token: str,
                                                                        route: tuple[str, ...]) -> None:
    assert await _code(jp_fetch, *route) == 200  # the server token opens it
    assert await _code(jp_fetch, *route, headers=_auth(kernel_token)) in (401, 403)


async def test_the_kernel_token_cannot_create_a_kernel_or_write_a_file(jp_fetch: Any, kernel_token: str) -> None:
    assert await _code(jp_fetch, "api", "kernels", method="POST", body="{}", headers=_auth(kernel_token)) in (401, 403)
    body = json.dumps({"type": "file", "format": "text", "content": "x"})
    assert await _code(jp_fetch, "api", "contents", "planted.txt", method="PUT", body=body,
                       headers=_auth(kernel_token)) in (401, 403)


async def test_a_wrong_token_or_one_in_the_url_is_refused(jp_fetch: Any, kernel_token: str) -> None:
    assert await _code(jp_fetch, "hermes", "api", "sessions", headers=_auth(kernel_token[:-2] + "xx")) == 403
    assert await _code(jp_fetch, "hermes", "api", "sessions", headers={"Authorization": ""},
                       params={"token": kernel_token}) == 403  # headers only: URLs end up in logs


async def test_the_run_stream_accepts_the_kernel_token(jp_fetch: Any, jp_ws_fetch: Any, kernel_token: str) -> None:
    created = await jp_fetch("hermes", "api", "sessions", method="POST", body="{}", headers=_auth(kernel_token))
    sid = json.loads(created.body)["session_id"]
    run = await jp_fetch("hermes", "api", "sessions", sid, "runs", method="POST",
                         body=json.dumps({"message": "count to 3"}), headers=_auth(kernel_token))
    run_id = json.loads(run.body)["run_id"]
    ws = await jp_ws_fetch("hermes", "api", "runs", run_id, "stream", headers=_auth(kernel_token))
    rows = []
    try:
        while (message := await ws.read_message()) is not None:
            row = json.loads(message)
            if row.get("type") != "heartbeat":
                rows.append(row)
    finally:
        ws.close()
    assert rows[-1]["settled"] is True and rows[-1]["status"] == "completed"  # the server's verdict ends the stream
    rows = rows[:-1]
    assert rows[-1]["event"] == "done"
    assert "".join(r["payload"].get("text", "") for r in rows if r["event"] == "token") == "1 2 3"


async def test_the_kernel_token_is_redacted_wherever_it_appears(kernel_token: str) -> None:
    text = f"HERMES_JUPYTER_SERVER_TOKEN={kernel_token}; header: token {kernel_token}; bare {kernel_token}"
    assert kernel_token not in Redactor().text(text)  # by its shape, even without knowing the value
