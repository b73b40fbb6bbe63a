"""No hermes answer carries a token or Jupyter's page: every route x credential x error it can produce.

Why: jupyter_server's page template puts the server's token in `data-jupyter-api-token`, and a
kernel-token request to the run stream that failed got that page (issue 23): the kernel token
yielded the server token. Every hermes answer is JSON (or the WebSocket protocol) instead,
never with a token in it (docs/api.md, Errors). Routes come from the running server's router,
so a new route is asked here without editing this file.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse
from tornado.web import HTTPError

from hermes_jupyter.server.errors import BY_STATUS, MASK, UNEXPECTED, error_json
from hermes_jupyter.server.kernel_token import SETTING

from .test_auth_gate import hermes_routes

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: What no answer may hold besides the tokens themselves: the page template and its token attribute.
PAGE_MARKS = ("data-jupyter-api-token", "<html", "<!doctype")
MAX_BODY = 64 * 1024
BAD_ID = "bad~id"
UNKNOWN_ID = "nosuch123"
#: A body every POST/PATCH route accepts the fields of (so an unknown id, not the body, is what fails).
VALID_BODY = {"message": "hello", "choice": "deny", "decision": "rejected", "answer": "yes", "title": "t",
              "path": "missing.ipynb"}
XSRF = "0123abcd0123abcd"
#: The credentials a page on another site could make a browser send (or none at all).
BROWSER = ("none", "wrong token", "cookie and xsrf", "cookie without xsrf")
#: Credentials that do not act for the person: refused what only a person may do, and other kernels' runs.
LIMITED = ("kernel token", "server token in url")
KERNEL_ID = "0b5c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    jp_server_config["HermesJupyter"]["max_request_bytes"] = MAX_BODY
    return jp_server_config


@dataclass
class Asked:
    """One request of the matrix and what it must answer (None: any 4xx but 500)."""

    what: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    expect: int | None = None
    #: The credentials it is asked with (None: all of them).
    only: tuple[str, ...] | None = None


@dataclass
class Server:
    base: str
    server_token: str
    kernel_token: str
    cookie: str
    seen: dict[int, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def credentials(self) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
        """name -> (headers, query): every way a request may (fail to) say who sends it."""
        return {
            "none": ({}, {}),
            "kernel token": ({"Authorization": f"token {self.kernel_token}"}, {}),
            "server token": ({"Authorization": f"token {self.server_token}"}, {}),
            "server token in url": ({}, {"token": self.server_token}),
            "cookie and xsrf": ({"Cookie": f"{self.cookie}; _xsrf={XSRF}", "X-XSRFToken": XSRF}, {}),
            "cookie without xsrf": ({"Cookie": self.cookie}, {}),
            "wrong token": ({"Authorization": "token hermes-wrong-token-0000"}, {}),
        }

    async def ask(self, asked: Asked, query: dict[str, str]) -> HTTPResponse | None:
        url = self.base + asked.path + (("&" if "?" in asked.path else "?") + urlencode(query) if query else "")
        request = HTTPRequest(url, method=asked.method, headers=asked.headers, body=asked.body,
                              follow_redirects=False, allow_nonstandard_methods=True, request_timeout=60)
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except Exception as exc:  # noqa: BLE001 - an answer that never came is one more finding
            self.problems.append(f"{asked.what}: {asked.method} {asked.path}: no answer ({exc!r})")
            return None
        self.check(asked, response)
        return response

    def check(self, asked: Asked, response: HTTPResponse) -> None:
        """Record every way `response` breaks the rule (one list, so a failure shows them all)."""
        code, what = response.code, f"{asked.what}: {asked.method} {asked.path} -> {response.code}"
        self.seen[code] = self.seen.get(code, 0) + 1
        text = (response.body or b"").decode("utf-8", "replace")
        shown = " ".join(text[:160].split())
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.get_all())
        marks = {"the server token": self.server_token, "the kernel token": self.kernel_token,
                 **{mark: mark for mark in PAGE_MARKS}}
        for name, mark in marks.items():
            if mark.lower() in text.lower() or mark.lower() in headers.lower():
                self.problems.append(f"{what}: carries {name}")
        if code == 599 or code >= 500 or (asked.expect is not None and code != asked.expect):
            self.problems.append(f"{what}: expected {asked.expect or '4xx'}; {shown}")
        if code < 400:
            return
        if not response.headers.get("Content-Type", "").startswith("application/json"):
            self.problems.append(f"{what}: Content-Type {response.headers.get('Content-Type')}")
        if asked.method == "HEAD":
            return
        try:
            message = json.loads(text)["message"]
            assert isinstance(message, str) and message.endswith(".")
        except (ValueError, KeyError, TypeError, AssertionError):
            self.problems.append(f"{what}: not a JSON error with a message: {shown}")


async def signed_in(jp_serverapp: Any, jp_http_port: int, jp_base_url: str) -> Server:
    """The server's tokens and a browser's login cookie (async: the test's loop serves the requests)."""
    base = f"http://127.0.0.1:{jp_http_port}{jp_base_url}"
    token = jp_serverapp.identity_provider.token
    kernel_token = jp_serverapp.web_app.settings[SETTING].token_for(KERNEL_ID)
    signed_in = await AsyncHTTPClient().fetch(base + "api/status", headers={"Authorization": f"token {token}"})
    cookies = [c.split(";", 1)[0] for c in signed_in.headers.get_list("Set-Cookie") if c.startswith("username-")]
    assert cookies, "a token request signs the browser in (jupyter_server sets its login cookie)"
    return Server(base, token, kernel_token, cookies[0])


def concrete(pattern: str, value: str) -> str | None:
    """The path of a route with every id set to `value`; None for the catch-all (asked apart)."""
    path = pattern[pattern.index("hermes/api/"):].rstrip("$")
    path = re.sub(r"\(\?P<action>([^)|]*)[^)]*\)", r"\1", path)  # the route's first action
    path = re.sub(r"\(\?P<\w+>[^)]*\)", quote(value), path)
    return None if "(" in path or "*" in path else path


def implemented(handler: type) -> set[str]:
    return {m for m in METHODS if any(m.lower() in vars(c) for c in handler.__mro__
                                      if c.__module__.startswith("hermes_jupyter"))}


def rest_cases(pattern: str, handler: type) -> list[Asked]:
    """Each error a REST route can produce: bad id, unknown id, bad/deep/oversized body, wrong method."""
    has_ids = "(?P<" in pattern
    asked: list[Asked] = []
    methods = implemented(handler)
    for method in sorted(methods):
        sends = method in ("POST", "PATCH")
        body = json.dumps(VALID_BODY).encode() if sends else None
        if has_ids:
            asked.append(Asked("bad id", method, concrete(pattern, BAD_ID) or "", body=body, expect=400))
            asked.append(Asked("unknown id", method, concrete(pattern, UNKNOWN_ID) or "", body=body))
        if sends:
            path = concrete(pattern, UNKNOWN_ID) or ""
            asked.append(Asked("not json", method, path, body=b"{not json"))
            asked.append(Asked("deep json", method, path, body=b"[" * 20_000 + b"]" * 20_000))
            asked.append(Asked("oversized", method, path, body=b'{"message": "' + b"x" * MAX_BODY + b'"}'))
            asked.append(Asked("cross-origin", method, path, {"Origin": "http://evil.example"}, body))
        elif not has_ids:  # a listing answers 200 (its body is checked too); a DELETE without arguments 400
            asked.append(Asked("no arguments", method, concrete(pattern, UNKNOWN_ID) or ""))
    path = concrete(pattern, UNKNOWN_ID) or ""
    for method in sorted(set(METHODS) - methods):
        asked.append(Asked("wrong method", method, path, body=b"{}" if method in ("POST", "PUT", "PATCH") else None,
                           expect=405))
    asked.append(Asked("head", "HEAD", path, expect=405 if "GET" not in methods else None))
    return asked


def upgrade(headers: dict[str, str] | None = None) -> dict[str, str]:
    key = base64.b64encode(b"0123456789abcdef").decode()
    return {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key,
            "Sec-WebSocket-Version": "13", **(headers or {})}


def stream_cases(run_id: str) -> list[Asked]:
    """Each refusal of the run stream before its upgrade (the upgrade itself is 101, asked elsewhere)."""
    def at(rid: str, query: str = "") -> str:
        return f"hermes/api/runs/{quote(rid)}/stream{query}"
    return [
        Asked("stream: not an upgrade", "GET", at(run_id), expect=400),
        Asked("stream: page of an unknown run", "GET", at(UNKNOWN_ID), headers={"Accept": "text/html"}, expect=400),
        Asked("stream: bad id", "GET", at(BAD_ID), headers=upgrade(), expect=400),
        Asked("stream: bad cursor", "GET", at(run_id, "?after_seq=abc"), headers=upgrade(), expect=400),
        Asked("stream: unknown run", "GET", at(UNKNOWN_ID), headers=upgrade(), expect=404),
        Asked("stream: no Connection upgrade", "GET", at(run_id), headers=upgrade({"Connection": "keep-alive"}),
              expect=400),
        Asked("stream: cross-origin", "GET", at(run_id), headers=upgrade({"Origin": "http://evil.example"}),
              expect=403, only=BROWSER),  # a token is not sent by a browser on its own: it may come from anywhere
        Asked("stream: no key", "GET", at(run_id), headers={k: v for k, v in upgrade().items() if "Key" not in k},
              expect=400),
        Asked("stream: unknown version", "GET", at(run_id), headers=upgrade({"Sec-WebSocket-Version": "99"}),
              expect=426),
        Asked("stream: post", "POST", at(run_id), body=b"{}", expect=405),
        Asked("stream: head", "HEAD", at(run_id), expect=405),
    ]


def for_credential(asked: Asked, credential: str, headers: dict[str, str]) -> Asked:
    """The same request with a credential, and what it must answer then: the credential is checked first."""
    expect = asked.expect
    if asked.what == "cross-origin":  # refused before or after the credential is read (403 or 404)
        pass
    elif credential in ("none", "wrong token"):
        expect = 403
    elif credential == "cookie without xsrf" and asked.method not in ("GET", "HEAD"):
        expect = 403
    elif credential in LIMITED and expect not in (404, 405):  # may be refused first (docs/agent-reach.md)
        expect = None
    return Asked(f"{credential}, {asked.what}", asked.method, asked.path, {**asked.headers, **headers}, asked.body,
                 expect, asked.only)


async def _started_run(server: Server) -> str:
    auth = {"Authorization": f"token {server.server_token}"}
    client = AsyncHTTPClient()
    created = await client.fetch(server.base + "hermes/api/sessions", method="POST", headers=auth,
                                 body=json.dumps({"message": "count to 3"}))
    return str(json.loads(created.body)["run_id"])


async def test_every_hermes_route_answers_every_error_as_json_without_a_token(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_base_url: str
) -> None:
    server = await signed_in(jp_serverapp, jp_http_port, jp_base_url)
    routes = hermes_routes(jp_serverapp.web_app.default_router)
    stream = [r for r in routes if r[0].rstrip("$").endswith("/stream")]
    rest = [r for r in routes if r not in stream and concrete(r[0], UNKNOWN_ID) is not None]
    assert len(rest) >= 14 and len(stream) == 1, routes
    run_id = await _started_run(server)
    matrix = [case for pattern, handler in rest for case in rest_cases(pattern, handler)]
    matrix += stream_cases(run_id)
    matrix += [Asked("no such address", m, p, body=b"{}" if m in ("POST", "PATCH") else None, expect=404)
               for p in ("hermes/api/nope", "hermes/api/sessions/a/b/c", "hermes/api/runs/x/stream/y",
                         "hermes/api/sessions/")
               for m in ("GET", "POST", "PATCH", "DELETE")]
    for credential, (headers, query) in server.credentials().items():
        for asked in (a for a in matrix if a.only is None or credential in a.only):
            await server.ask(for_credential(asked, credential, headers), query)
    leaks = sorted(server.problems, key=lambda p: "carries the" not in p)  # a token handed out first
    assert not leaks, f"{len(leaks)} bad answers:\n" + "\n".join(leaks[:40])
    for status in (400, 403, 404, 405, 413, 426):
        assert server.seen.get(status), (status, server.seen)


async def test_a_damaged_journal_is_the_same_plain_409_on_rest_and_the_stream(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_base_url: str, hermes: Any
) -> None:
    server = await signed_in(jp_serverapp, jp_http_port, jp_base_url)
    run_id = await _started_run(server)
    auth = {"Authorization": f"token {server.server_token}"}
    sealed: list[Path] = []
    for _ in range(500):  # the demo's three tokens take milliseconds; sealing follows the settle
        sealed = list(hermes.state_dir.glob(f"runs/*/{run_id}.jsonl.gz"))
        if sealed:
            break
        await asyncio.sleep(0.02)
    assert sealed, "a settled run's journal is sealed (compressed)"
    sealed[0].write_bytes(b"\x1f\x8b\x08\x00 not a gzip stream")
    for asked in (Asked("damaged: events", "GET", f"hermes/api/runs/{run_id}/events", auth),
                  Asked("damaged: stream", "GET", f"hermes/api/runs/{run_id}/stream", upgrade(auth))):
        response = await server.ask(asked, {})
        assert response is not None and response.code == 409, (asked.what, response and response.body)
    assert not server.problems, server.problems


async def test_an_unexpected_failure_is_a_plain_500_that_says_nothing_of_it(
    jp_serverapp: Any, http_server_client: Any, jp_http_port: int, jp_base_url: str, hermes: Any, monkeypatch: Any
) -> None:
    server = await signed_in(jp_serverapp, jp_http_port, jp_base_url)
    auth = {"Authorization": f"token {server.server_token}"}
    run_id = UNKNOWN_ID

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"boom in /very/secret/place with {server.server_token}")

    monkeypatch.setattr(hermes.manager, "run_status", broken)
    monkeypatch.setattr(hermes.manager, "read_events", broken)
    for path, headers in ((f"hermes/api/runs/{run_id}/events", auth),
                          (f"hermes/api/runs/{run_id}/stream", upgrade(auth))):
        request = HTTPRequest(server.base + path, headers=headers, request_timeout=60)
        response = await AsyncHTTPClient().fetch(request, raise_error=False)
        assert response.code == 500 and response.headers["Content-Type"].startswith("application/json"), path
        body = json.loads(response.body)
        assert body["message"] == UNEXPECTED and "detail" not in body, body
        assert b"boom" not in response.body and b"Traceback" not in response.body
        assert server.server_token.encode() not in response.body


def test_a_detail_quoting_a_token_shows_it_masked() -> None:
    """jupyter_server and tornado word some refusals with what the request sent (a Referer, a URL)."""
    kernel_token = "hjk_0b5c1d2e-3f40_" + "A" * 43
    refusal = HTTPError(403, "Blocking Cross Origin request from http://x/?token=%s and %s", "server-token-123",
                        kernel_token)
    body = json.loads(error_json(403, refusal, ["server-token-123", "abc", None]))
    assert "server-token-123" not in body["detail"] and kernel_token not in body["detail"], body
    assert body["detail"].count(MASK) == 2 and body["message"] == BY_STATUS[403]
    assert json.loads(error_json(400, HTTPError(400, "abc abc"), ["abc"]))["detail"] == "abc abc"  # too short to mask
