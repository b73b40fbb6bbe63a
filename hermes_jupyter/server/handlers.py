"""REST handlers of the HTTP API (docs/api.md). Thin: parse and validate, call one engine method, answer JSON.

Every verb is `@web.authenticated` + `@authorized` on a `hermes:*` resource.
Domain exceptions are mapped to HTTP status codes in one place (`api_errors`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import msgspec
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..agents.approvals import UnknownApproval
from ..agents.asks import AlreadyAnswered
from ..agents.base import NotebookBinding
from ..agents.models import describe_models
from ..ids import InvalidId, validate_id
from ..runs.first_turn import create_with_first_turn
from ..runs.manager import Draining, NothingToRetry, RunActive
from ..runs.status import UnknownRun
from ..store import CorruptSession, Session, UnknownSession
from ..titles import UNTITLED
from .kernel_token import KernelTokenAuth
from .services import HermesServices

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

_ERRORS: list[tuple[type[BaseException], int]] = [
    (AlreadyAnswered, 409),  # before UnknownApproval, its base class
    (InvalidId, 400), (UnknownSession, 404), (UnknownRun, 404), (UnknownApproval, 404), (FileNotFoundError, 404),
    (RunActive, 409), (NothingToRetry, 409), (CorruptSession, 409), (Draining, 409),
    (ValueError, 400),
]


def api_errors(method: F) -> F:
    """Map engine exceptions to JSON errors `{"message": ...}` with a 4xx (or 503) status."""
    @functools.wraps(method)
    async def wrapper(self: HermesHandler, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except web.HTTPError:
            raise
        except tuple(exc for exc, _ in _ERRORS) as exc:
            status = next(code for kind, code in _ERRORS if isinstance(exc, kind))
            message = exc.args[0] if exc.args else str(exc)
            raise web.HTTPError(status, "%s", str(message), reason=_reason(status)) from exc
    return wrapper  # type: ignore[return-value]


def _reason(status: int) -> str:
    return {400: "Bad Request", 404: "Not Found", 409: "Conflict", 413: "Payload Too Large", 503: "Unavailable"}[status]


class HermesHandler(KernelTokenAuth, APIHandler):
    """Base: access to the services, a bounded JSON body, JSON answers; the kernel token is accepted."""

    auth_resource = "hermes"

    @property
    def hermes(self) -> HermesServices:
        return self.settings["hermes"]  # type: ignore[no-any-return]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """`{"message": ...}` with the formatted message (APIHandler would send the raw format string)."""
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, web.HTTPError) and exc.log_message:
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"message": exc.log_message % exc.args, "reason": exc.reason}))
            return
        super().write_error(status_code, **kwargs)

    def json_body(self) -> dict[str, Any]:
        raw = self.request.body or b"{}"
        if len(raw) > self.hermes.max_body_bytes:
            raise web.HTTPError(413, "%s", f"request body over {self.hermes.max_body_bytes} bytes")
        try:
            body = json.loads(raw)
        except ValueError:
            raise web.HTTPError(400, "%s", "request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "%s", "request body must be a JSON object")
        return body

    def answer(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(msgspec.json.encode(data, enc_hook=str))  # rows are structs

    def sid(self, session_id: str) -> str:
        return validate_id(session_id, "session id")


def _optional_str(body: dict[str, Any], key: str, max_len: int = 4096) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > max_len:
        raise web.HTTPError(400, "%s", f"{key} must be a string of at most {max_len} characters")
    return value


def _message(body: dict[str, Any]) -> str:
    message = body.get("message")
    if not isinstance(message, str) or not message.strip():
        raise web.HTTPError(400, "%s", "message must be a non-empty string")
    return message


class SessionRootHandler(HermesHandler):
    auth_resource = "hermes:sessions"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        rows = self.hermes.store.list()
        path = self.get_query_argument("notebook_path", None)
        if path is not None:
            rows = [r for r in rows if r.get("notebook_path") == path]
        self.answer(rows)  # a JSON list, newest first (docs/api.md), like jupyter_server's own /api/sessions

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        body = self.json_body()
        backend = _optional_str(body, "backend") or self.hermes.default_backend
        if backend not in self.hermes.allowed_backends:
            raise web.HTTPError(400, "%s", f"backend {backend!r} is not allowed here")
        fields: dict[str, Any] = dict(
            title=_optional_str(body, "title", 200) or UNTITLED, backend=backend,
            model=_optional_str(body, "model", 200), notebook_path=_optional_str(body, "notebook_path"),
            cell_id=_optional_str(body, "cell_id", 200), kernel_id=_optional_str(body, "kernel_id", 200),
        )
        if body.get("message") is None:
            session = await self.hermes.manager.offload(self.hermes.store.create, **fields)
            self.answer(session.to_json(), 201)
            return
        message = _message(body)  # create and run in one step: a turn that cannot start leaves no session
        session, run = await create_with_first_turn(self.hermes.manager, message, **fields)
        self.answer({**session.to_json(), "run_id": run.run_id}, 201)


class SessionHandler(HermesHandler):
    auth_resource = "hermes:sessions"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, session_id: str) -> None:
        session = await self.hermes.manager.offload(self.hermes.recovery.get_session, self.sid(session_id))
        self.answer(session.to_json())

    @web.authenticated
    @authorized
    @api_errors
    async def patch(self, session_id: str) -> None:
        title = _optional_str(self.json_body(), "title", 200)
        if not title or not title.strip():
            raise web.HTTPError(400, "%s", "title must be a non-empty string")
        session = await self.hermes.manager.rename_session(self.sid(session_id), title.strip())
        self.answer(session.compact())

    @web.authenticated
    @authorized
    @api_errors
    async def delete(self, session_id: str) -> None:
        await self.hermes.manager.delete_session(self.sid(session_id))
        self.set_status(204)
        self.finish()


class RunRootHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, session_id: str) -> None:
        body = self.json_body()
        message = _message(body)
        attachments = body.get("attachments") or []
        if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
            raise web.HTTPError(400, "%s", "attachments must be a list of objects")
        notebook = None
        if any(body.get(k) for k in ("notebook_path", "cell_id", "kernel_id")):
            notebook = NotebookBinding(
                notebook_path=_optional_str(body, "notebook_path"), cell_id=_optional_str(body, "cell_id", 200),
                kernel_id=_optional_str(body, "kernel_id", 200),
            )
        run = await self.hermes.manager.start_run(self.sid(session_id), message, attachments=attachments, notebook=notebook)
        self.answer({"run_id": run.run_id, "session_id": run.session_id}, 202)


class SessionActionHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, session_id: str, action: str) -> None:
        sid = self.sid(session_id)
        if action == "retry":
            run = await self.hermes.manager.retry(sid)
            self.answer({"run_id": run.run_id, "session_id": sid}, 202)
        else:
            session = await self.hermes.manager.undo(sid)
            self.answer(session.to_json())


class RunHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, run_id: str) -> None:
        """`{run_id, session_id, status, last_seq, marker}`: marker is the run's closing marker row or null."""
        manager = self.hermes.manager
        self.answer(await manager.offload(manager.run_status, validate_id(run_id, "run id"), with_marker=True))


class RunBundleHandler(HermesHandler):
    """The cell bundle of a run, as the one renderer makes it (the notebook writers write exactly this)."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, run_id: str) -> None:
        manager = self.hermes.manager
        self.answer(await manager.offload(manager.run_bundle, validate_id(run_id, "run id")))


class RunEventsHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, run_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        after_seq = _int_arg(self, "after_seq", 0)
        limit = min(_int_arg(self, "limit", 1000), 10_000)
        self.answer(await self.hermes.manager.read_events(run_id, after_seq, limit))


class RunCancelHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, run_id: str) -> None:
        cancelled = await self.hermes.manager.cancel(validate_id(run_id, "run id"))
        self.answer({"run_id": run_id, "cancelled": cancelled, **self.hermes.manager.run_status(run_id)})


class ApprovalHandler(HermesHandler):
    """Answer a pending approval: `{"choice": "allow_once" | "deny"}`."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, run_id: str, approval_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        approval_id = validate_id(approval_id, "approval id")
        choice = _optional_str(self.json_body(), "choice", 64)
        if not choice:
            raise web.HTTPError(400, "%s", "choice is required (allow_once or deny)")
        self.hermes.approvals.answer(run_id, approval_id, choice)
        self.answer({"run_id": run_id, "approval_id": approval_id, "choice": choice})


class NotebookRecoverHandler(HermesHandler):
    auth_resource = "hermes:notebooks"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        body = self.json_body()
        path = _optional_str(body, "path")
        if not path:
            raise web.HTTPError(400, "%s", "path is required")
        full = _confined(self.hermes.root_dir, path)
        if not full.is_file():
            raise FileNotFoundError(f"no notebook at {path}")
        if body.get("force") is not True and await self._open_in_a_frontend(path):
            raise web.HTTPError(
                409, "%s", f"{path} is open with a kernel session: recover it in the browser (the JupyterLab "
                "extension rebuilds the outputs in the open notebook, keeping unsaved edits), or pass force=true",
            )
        from ..notebook.recover import recover_notebook_file  # nbformat is only needed here

        cells = await self.hermes.manager.offload(
            recover_notebook_file, full, self.hermes.state_dir, verdict_of=self.hermes.recovery.verdict
        )
        self.answer({"path": path, "cells_recovered": cells})


    async def _open_in_a_frontend(self, path: str) -> bool:
        """A notebook with a live kernel session is open somewhere: its unsaved edits must not be clobbered."""
        wanted = path.strip("/")
        sessions = await self.session_manager.list_sessions()  # type: ignore[no-untyped-call]
        return any(str(s.get("path", "")).strip("/") == wanted for s in sessions)


def _confined(root: Path, relative: str) -> Path:
    """Resolve a contents path under the server's root_dir; refuse escapes (.., symlinks)."""
    root = root.resolve()
    full = (root / relative.lstrip("/")).resolve()
    if full != root and root not in full.parents:
        raise web.HTTPError(400, "%s", "path escapes the server root")
    if full.suffix != ".ipynb":
        raise web.HTTPError(400, "%s", "path must name a .ipynb notebook")
    return full


def _int_arg(handler: HermesHandler, name: str, default: int) -> int:
    raw = handler.get_query_argument(name, None)
    if raw is None:
        return default
    if not raw.isdigit():
        raise web.HTTPError(400, "%s", f"{name} must be a non-negative integer")
    return int(raw)


class ClarifyAnswerHandler(HermesHandler):
    """Answer a clarifying question: `{"answer": str}`; 404 if never asked, 409 if already answered or expired."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, run_id: str, clarify_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        clarify_id = validate_id(clarify_id, "clarify id")
        answer = _optional_str(self.json_body(), "answer", 8000)
        if not answer or not answer.strip():
            raise web.HTTPError(400, "%s", "answer is required (a non-empty string)")
        self.hermes.clarify.answer(run_id, clarify_id, answer)
        self.answer({"run_id": run_id, "clarify_id": clarify_id, "answer": answer})


class ModelsHandler(HermesHandler):
    """`GET models?backend=NAME`: `{backend, default, models: [{id, label}]}` (default: the default backend)."""

    auth_resource = "hermes:sessions"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        name = self.get_query_argument("backend", None) or self.hermes.default_backend
        backend = self.hermes.manager.backends.get(name)
        if backend is None or name not in {*self.hermes.allowed_backends, self.hermes.default_backend}:
            raise web.HTTPError(400, "%s", f"backend must be one of {sorted(self.hermes.manager.backends)}")
        self.answer(await describe_models(name, backend))


_ID = r"(?P<{}>[^/]+)"
default_handlers = [
    (r"sessions", SessionRootHandler),
    (rf"sessions/{_ID.format('session_id')}", SessionHandler),
    (rf"sessions/{_ID.format('session_id')}/runs", RunRootHandler),
    (rf"sessions/{_ID.format('session_id')}/(?P<action>retry|undo)", SessionActionHandler),
    (rf"runs/{_ID.format('run_id')}", RunHandler),
    (rf"runs/{_ID.format('run_id')}/events", RunEventsHandler),
    (rf"runs/{_ID.format('run_id')}/bundle", RunBundleHandler),
    (rf"runs/{_ID.format('run_id')}/cancel", RunCancelHandler),
    (rf"runs/{_ID.format('run_id')}/approvals/{_ID.format('approval_id')}", ApprovalHandler),
    (rf"runs/{_ID.format('run_id')}/clarify/{_ID.format('clarify_id')}", ClarifyAnswerHandler),
    (r"models", ModelsHandler),
    (r"notebooks/recover", NotebookRecoverHandler),
]
