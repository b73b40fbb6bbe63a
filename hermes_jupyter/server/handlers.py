"""REST handlers of the HTTP API (docs/api.md). Thin: parse and validate, call one engine method, answer JSON.

Every verb is `@web.authenticated` + `@authorized` on a `hermes:*` resource.
Domain exceptions are mapped to HTTP status codes and plain messages in one
place (`errors.ERRORS`, applied by `api_errors`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar
from urllib.parse import urlencode

import msgspec
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..agents.always import allowed_always, revoke_always
from ..agents.base import NotebookBinding
from ..attachments import AttachmentError, validate_attachments
from ..agents.models import describe_models
from ..ids import validate_id
from ..runs.queue import Mode
from ..sessions.titles import UNTITLED
from ..transcript.rows import PROPOSAL_DECISIONS
from .answerer import answering_person
from .autonomy import chosen_autonomy, max_autonomy
from .errors import mapped, user_error, write_json_error
from .inputs import check_text, parse_count, parse_json
from .kernel_token import KernelTokenAuth
from .principals import person_only, principal_of, require_person
from .scope import binding_now, check_notebook, check_run, check_session, kernel_paths, own_binding, visible_rows
from .services import HermesServices

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

#: Largest page of `GET sessions?limit=N`.
MAX_PAGE = 1000


def api_errors(method: F) -> F:
    """Map engine exceptions to JSON errors `{"message", "detail"}` (errors.ERRORS); others stay 500s."""
    @functools.wraps(method)
    async def wrapper(self: HermesHandler, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except web.HTTPError:
            raise
        except Exception as exc:
            error = mapped(exc)
            if error is None:
                raise
            raise error from exc
    return wrapper  # type: ignore[return-value]


class HermesHandler(KernelTokenAuth, APIHandler):
    """Base: access to the services, a bounded JSON body, JSON answers; the kernel token is accepted."""

    auth_resource = "hermes"

    @property
    def hermes(self) -> HermesServices:
        return self.settings["hermes"]  # type: ignore[no-any-return]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """`{"message", "detail"?, "reason"}`: a plain sentence, never a traceback, never a token, whoever
        raised it (our code, jupyter_server's auth and XSRF checks, tornado's 405): errors.write_json_error."""
        write_json_error(self, status_code, kwargs.get("exc_info", (None, None))[1])

    def json_body(self) -> dict[str, Any]:
        """The request's JSON object; text that cannot be stored (NUL, lone surrogates) is a 400."""
        raw = self.request.body or b"{}"
        if len(raw) > self.hermes.max_body_bytes:
            raise user_error(413, "The request is too large. Send a shorter message or smaller attachments.",
                             f"body of {len(raw)} bytes, limit {self.hermes.max_body_bytes}")
        try:
            body = parse_json(raw)  # a body nested too deeply is a plain 400 (inputs.MAX_DEPTH)
        except ValueError:
            raise user_error(400, "The request could not be read (it is not valid JSON). Try again.") from None
        if not isinstance(body, dict):
            raise user_error(400, "The request could not be read (it must be a JSON object). Try again.")
        check_text(body)
        return body

    def answer(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(msgspec.json.encode(data, enc_hook=str))  # rows are structs

    def sid(self, session_id: str) -> str:
        return validate_id(session_id, "session id")

    async def own_sid(self, session_id: str) -> str:
        """The session id, once this caller may touch that session (a kernel: only its own, server/scope.py)."""
        sid = self.sid(session_id)
        await check_session(self, self.hermes, sid)
        return sid

    async def own_run_id(self, run_id: str) -> str:
        """The run id, once this caller may touch that run (a kernel: only its own sessions' runs)."""
        run_id = validate_id(run_id, "run id")
        await check_run(self, self.hermes, run_id)
        return run_id


def _optional_str(body: dict[str, Any], key: str, max_len: int = 4096) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > max_len:
        raise user_error(400, f"The {key} must be text, and not too long. Shorten it and try again.",
                         f"{key}: a string of at most {max_len} characters")
    return value


def _binding(body: dict[str, Any]) -> NotebookBinding | None:
    """The notebook cell a run is started from, when the request names one."""
    if not any(body.get(k) for k in ("notebook_path", "cell_id", "kernel_id")):
        return None
    return NotebookBinding(
        notebook_path=_optional_str(body, "notebook_path"), cell_id=_optional_str(body, "cell_id", 200),
        kernel_id=_optional_str(body, "kernel_id", 200),
    )


_EDIT_LIMITS = {"title": 200, "model": 200, "backend": 40, "notebook_path": 4096, "kernel_id": 200}


def _session_edits(body: dict[str, Any]) -> dict[str, str | None]:
    """The fields of a PATCH: a title cannot be empty; model and binding may be null (cleared)."""
    changes = {key: _optional_str(body, key, limit) for key, limit in _EDIT_LIMITS.items() if key in body}
    if not changes:
        raise user_error(400, "Nothing to change: give a title, a model or a notebook.",
                         f"PATCH takes any of {sorted(_EDIT_LIMITS)}")
    if "title" in changes:
        title = (changes["title"] or "").strip()
        if not title:
            raise user_error(400, "Give the session a title: it cannot be empty.")
        changes["title"] = title
    if changes.get("kernel_id"):
        validate_id(changes["kernel_id"] or "", "kernel id")
    for key in ("model", "notebook_path", "kernel_id"):
        if key in changes and not (changes[key] or "").strip():
            changes[key] = None
    return changes


def _message(body: dict[str, Any]) -> str:
    message = body.get("message")
    if not isinstance(message, str) or not message.strip():
        raise user_error(400, "Write a message first: it cannot be empty.")
    return message


class SessionRootHandler(HermesHandler):
    auth_resource = "hermes:sessions"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """A JSON list, newest first (docs/api.md); with `limit`, one page `{sessions, next}` and a Link header.

        The engine builds the full list off the event loop and off its I/O threads (sessions/listing.py):
        at 100k sessions it is megabytes. A kernel lists only its own sessions, all in one page.
        """
        limit_arg = self.get_query_argument("limit", None)
        before = self.get_query_argument("before", None)
        path = self.get_query_argument("notebook_path", None)
        principal = await principal_of(self)
        visible = None if principal.kind != "kernel" else functools.partial(
            visible_rows, principal, paths=await kernel_paths(self, principal.kernel_id or ""))
        if limit_arg is None and before is None:
            self.set_header("Content-Type", "application/json")
            self.finish(await self.hermes.manager.list_sessions(path, visible=visible))
            return
        limit = min(parse_count(limit_arg, "limit", 100, minimum=1), MAX_PAGE)  # larger asks get the largest page
        page = await self.hermes.manager.sessions_page(limit, before, path, visible=visible)
        if page.next is not None:
            query = urlencode({"limit": limit, "before": page.next, **({"notebook_path": path} if path else {})})
            self.set_header("Link", f'<{self.request.path}?{query}>; rel="next"')
        self.answer({"sessions": page.rows, "next": page.next})

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        body = self.json_body()
        backend = _optional_str(body, "backend") or self.hermes.default_backend
        if backend not in self.hermes.allowed_backends:
            raise user_error(400, "That backend is not available on this server. Choose another one.",
                             f"backend {backend!r}; allowed: {', '.join(self.hermes.allowed_backends)}")
        binding = await own_binding(self, _binding(body))  # a kernel: its own kernel and notebook
        fields: dict[str, Any] = dict(
            title=_optional_str(body, "title", 200) or UNTITLED, backend=backend,
            model=_optional_str(body, "model", 200), notebook_path=binding and binding.notebook_path,
            cell_id=binding and binding.cell_id, kernel_id=binding and binding.kernel_id,
        )
        message = None if body.get("message") is None else _message(body)  # with a message: created and run
        session, run = await self.hermes.manager.create_session(fields, message)  # in one step (first_turn.py)
        self.answer({**session.to_json(), **({"run_id": run.run_id} if run is not None else {})}, 201)


class SessionHandler(HermesHandler):
    auth_resource = "hermes:sessions"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, session_id: str) -> None:
        session = await self.hermes.manager.read_session(await self.own_sid(session_id))
        self.answer({**session.to_json(), "max_autonomy": max_autonomy(self)})

    @web.authenticated
    @authorized
    @api_errors
    async def patch(self, session_id: str) -> None:
        """`{title?, model?, backend?, notebook_path?, kernel_id?, autonomy?}`: rename, switch model or backend,
        (re)bind, choose the autonomy (docs/autonomy.md); null unbinds. A new backend starts over with its own
        conversation state and, unless named, its model."""
        body = self.json_body()
        autonomy = await chosen_autonomy(self, body.pop("autonomy")) if "autonomy" in body else None
        changes: dict[str, Any] = _session_edits(body) if body or autonomy is None else {}
        if autonomy is not None:
            changes["autonomy"] = autonomy
        if "backend" in changes:
            await require_person(self, "backend")
            changes = self._switch_backend(changes)
        if set(changes) - {"model", "backend"}:  # the model is the session's setting; names, bindings the person's
            await require_person(self, "edit")
        session = await self.hermes.manager.edit_session(await self.own_sid(session_id), changes)
        self.answer({**session.compact(), "autonomy": session.autonomy})

    def _switch_backend(self, changes: dict[str, str | None]) -> dict[str, str | None]:
        backend = changes["backend"]
        if backend not in self.hermes.allowed_backends or backend not in self.hermes.manager.backends:
            raise user_error(400, "That backend is not available on this server. Choose another one.",
                             f"backend {backend!r}; allowed: {', '.join(self.hermes.allowed_backends)}")
        return {"model": None, **changes}

    @web.authenticated
    @authorized
    @api_errors
    @person_only("delete")
    async def delete(self, session_id: str) -> None:
        """Delete with its journals; `?corrupt=1` also deletes a session whose sidecar cannot be read."""
        corrupt = self.get_query_argument("corrupt", "0") in ("1", "true")
        await self.hermes.manager.delete_session(self.sid(session_id), corrupt=corrupt)
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
        try:
            attachments = validate_attachments(body.get("attachments"), self.hermes.manager.redactor)
        except AttachmentError as exc:
            raise user_error(400, str(exc)) from None
        mode: Mode = "steer" if body.get("mode") == "steer" else "queue"
        if body.get("mode") not in (None, "queue", "steer"):
            raise user_error(400, "Send the message normally, or choose to steer the running turn.",
                             "mode must be 'queue' or 'steer'")
        sid = await self.own_sid(session_id)
        notebook = await own_binding(self, _binding(body)) or await binding_now(self, self.hermes, sid)
        submitted = await self.hermes.manager.send(sid, message, attachments=attachments, notebook=notebook, mode=mode)
        self.answer(submitted.to_json(), 202)


class SessionActionHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, session_id: str, action: str) -> None:
        sid = await self.own_sid(session_id)
        if action == "continue":
            notebook = await own_binding(self, _binding(self.json_body())) or await binding_now(self, self.hermes, sid)
            run, continues = await self.hermes.manager.continue_turn(sid, notebook=notebook)
            self.answer({"run_id": run.run_id, "session_id": sid, "continues": continues}, 202)
        elif action == "retry":
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
        """`{run_id, session_id, status, last_seq, marker}`: marker is the run's closing marker row or null;
        a queued run's status is `queued`."""
        self.answer(await self.hermes.manager.describe_run(await self.own_run_id(run_id)))


class RunBundleHandler(HermesHandler):
    """The cell bundle of a run, as the one renderer makes it (the notebook writers write exactly this)."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, run_id: str) -> None:
        self.answer(await self.hermes.manager.run_bundle(await self.own_run_id(run_id)))


class RunEventsHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, run_id: str) -> None:
        run_id = await self.own_run_id(run_id)
        after_seq = parse_count(self.get_query_argument("after_seq", None), "after_seq", 0)
        limit = min(parse_count(self.get_query_argument("limit", None), "limit", 1000, minimum=1), 10_000)
        self.answer(await self.hermes.manager.read_events(run_id, after_seq, limit))


class RunCancelHandler(HermesHandler):
    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self, run_id: str) -> None:
        """Cancel a live run (its partial output is kept), or take a queued one off the queue.

        `{"cause": "kernel_restart"}`: the kernel that started the run is going away (a kernel the
        server did not start, e.g. nbclient's, whose restart only the kernel sees); the run ends
        interrupted, not cancelled (docs/api.md)."""
        cause = _optional_str(self.json_body(), "cause", 32)
        if cause not in (None, "kernel_restart"):
            raise user_error(400, "A run can be stopped only by a cancel or a kernel restart.", f"cause {cause!r}")
        self.answer(await self.hermes.manager.cancel_run(await self.own_run_id(run_id), cause=cause))


class ApprovalHandler(HermesHandler):
    """Answer a pending approval: `{"choice": "allow_once" | "deny"}`."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    @person_only("approval")
    async def post(self, run_id: str, approval_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        approval_id = validate_id(approval_id, "approval id")
        choice = _optional_str(self.json_body(), "choice", 64)
        if not choice:
            raise user_error(400, "Choose an answer for this approval (allow or deny).", "choice is required")
        self.hermes.approvals.answer(run_id, approval_id, choice, await answering_person(self))
        self.answer({"run_id": run_id, "approval_id": approval_id, "choice": choice})


class ProposalDecisionHandler(HermesHandler):
    """Record the user's decision on a proposed cell: `{"decision": "accepted" | "rejected"}` (docs/proposals.md).

    The server only keeps the decision (every client then shows it); the frontend that
    accepted applies the cell to the open notebook. 404 unknown, 409 already decided otherwise.
    """

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    @person_only("proposal")
    async def post(self, run_id: str, proposal_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        proposal_id = validate_id(proposal_id, "proposal id")
        decision = _optional_str(self.json_body(), "decision", 64)
        if decision not in PROPOSAL_DECISIONS:
            raise user_error(400, "Accept or reject the proposed cell.", "decision must be accepted or rejected")
        by = await answering_person(self)
        self.answer(await self.hermes.manager.decide_proposal(run_id, proposal_id, decision, by))


class NotebookRecoverHandler(HermesHandler):
    """Rebuild a notebook's unfinished hermes outputs: through its collaboration room when one holds it
    (`shared: true`), else in the file, unless a kernel session has it open (409, or `force`)."""

    auth_resource = "hermes:notebooks"

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        body = self.json_body()
        path = _optional_str(body, "path")
        if not path:
            raise user_error(400, "Name the notebook to recover.", "path is required")
        full = _confined(self.hermes.root_dir, path)
        await check_notebook(self, path)  # a kernel recovers only its own notebook
        recovered = await self.hermes.manager.recover_notebook(path, full, force=body.get("force") is True)
        self.answer(recovered.to_json())


def _confined(root: Path, relative: str) -> Path:
    """Resolve a contents path under the server's root_dir; refuse escapes (.., symlinks)."""
    root = root.resolve()
    full = (root / relative.lstrip("/")).resolve()
    if full != root and root not in full.parents:
        raise user_error(400, "That path escapes the server's folder. Choose a notebook inside it.")
    if full.suffix != ".ipynb":
        raise user_error(400, "That path is not a notebook. Choose an .ipynb file.")
    return full


class ClarifyAnswerHandler(HermesHandler):
    """Answer a clarifying question: `{"answer": str}`; 404 if never asked, 409 if already answered or expired."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    @person_only("clarify")
    async def post(self, run_id: str, clarify_id: str) -> None:
        run_id = validate_id(run_id, "run id")
        clarify_id = validate_id(clarify_id, "clarify id")
        answer = _optional_str(self.json_body(), "answer", 8000)
        if not answer or not answer.strip():
            raise user_error(400, "Type an answer to the question, then send it.", "answer must be a non-empty string")
        self.hermes.clarify.answer(run_id, clarify_id, answer, await answering_person(self))
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
            raise user_error(400, "This server does not offer that kind of agent. Choose one of the listed backends.",
                             f"backend must be one of {sorted(self.hermes.manager.backends)}")
        self.answer(await describe_models(name, backend))


class AllowedAlwaysHandler(HermesHandler):
    """`GET approvals/always`: `{always: [{backend, pattern}], unavailable}`, what "allow always" answers allow;
    `DELETE approvals/always?backend=NAME&pattern=P` revokes one and answers what is left."""

    auth_resource = "hermes:approvals"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        self.answer(await allowed_always(self.hermes.manager.backends))

    @web.authenticated
    @authorized
    @api_errors
    @person_only("revoke")
    async def delete(self) -> None:
        backend = self.get_query_argument("backend", "")
        pattern = self.get_query_argument("pattern", "")
        if not backend or not pattern or len(pattern) > 4096:
            raise user_error(400, "Choose what to stop allowing from the list.", "backend and pattern are required")
        self.answer({"always": await revoke_always(self.hermes.manager.backends, backend, pattern)})


_ID = r"(?P<{}>[^/]+)"
default_handlers = [
    (r"sessions", SessionRootHandler),
    (rf"sessions/{_ID.format('session_id')}", SessionHandler),
    (rf"sessions/{_ID.format('session_id')}/runs", RunRootHandler),
    (rf"sessions/{_ID.format('session_id')}/(?P<action>retry|undo|continue)", SessionActionHandler),
    (rf"runs/{_ID.format('run_id')}", RunHandler),
    (rf"runs/{_ID.format('run_id')}/events", RunEventsHandler),
    (rf"runs/{_ID.format('run_id')}/bundle", RunBundleHandler),
    (rf"runs/{_ID.format('run_id')}/cancel", RunCancelHandler),
    (rf"runs/{_ID.format('run_id')}/approvals/{_ID.format('approval_id')}", ApprovalHandler),
    (rf"runs/{_ID.format('run_id')}/clarify/{_ID.format('clarify_id')}", ClarifyAnswerHandler),
    (rf"runs/{_ID.format('run_id')}/proposals/{_ID.format('proposal_id')}", ProposalDecisionHandler),
    (r"models", ModelsHandler),
    (r"approvals/always", AllowedAlwaysHandler),
    (r"notebooks/recover", NotebookRecoverHandler),
]
