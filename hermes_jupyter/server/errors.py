"""What a user reads when a request fails: one plain sentence per failure, the technical rest apart.

Every JSON error is `{"message": <what happened and what to do>, "detail": <ids,
sizes, the engine's own words, or absent>, "reason": <HTTP reason>}`. Engine
exceptions map to a status and a sentence here, in one table; handlers raise
`user_error` for failures of their own. Every hermes answer that fails, REST or the
WebSocket before its upgrade, whoever refused it (us, jupyter_server, tornado), is this
JSON: never Jupyter's page template, which carries the server's token (docs/api.md).
"""

from __future__ import annotations

import json
import os
import re
from http.client import responses
from typing import Any, Iterable

from tornado import web

from ..agents.always import AlwaysUnavailable, NotAllowedAlways
from ..agents.approvals import UnknownApproval
from ..agents.asks import AlreadyAnswered, UnknownQuestion
from ..fsio import NotAFile, SymlinkRefused, TooLarge, is_disk_full
from ..ids import InvalidId
from ..journal import JournalBusy
from ..journal.files import CorruptJournal, RefusedJournal
from ..sessions.listing import BadCursor
from ..runs.manager import Draining, NothingToContinue, NothingToRetry, RunActive
from ..notebook.recovery_service import NotebookOpen
from ..runs.queue import MAX_QUEUED, CannotSteer, QueueFull
from ..runs.proposals import ProposalDecided, UnknownProposal
from ..runs.status import UnknownRun
from ..sessions.store import CorruptSession, UnknownSession
from .kernel_token import PREFIX as KERNEL_TOKEN_PREFIX
from .rooms import RoomUnavailable

DISK_FULL = "The server's disk is full, so nothing was saved. Free some space on the server, then try again."

LINKED = ("Part of this session's storage is a link to another place, so nothing is read or written through it. "
          "Remove the link from the state directory, then try again.")

#: (exception type, HTTP status, plain message), first match wins.
ERRORS: list[tuple[type[BaseException], int, str]] = [
    (InvalidId, 400, "This address is invalid: it names a session or run in a form this server never uses. "
                     "Check the link and try again."),
    (BadCursor, 400, "This page of the session list is out of date. Reload the list from its first page."),
    (UnknownSession, 404, "This session does not exist (it may have been deleted). Reload the list of sessions."),
    (UnknownRun, 404, "This run is not known here (its session may have been deleted). Reload the session."),
    (AlreadyAnswered, 409, "This question was already answered, or it expired before the answer came. Reload the "
                           "session to see where the turn stands."),
    (UnknownApproval, 404, "This approval is no longer waiting for an answer. Reload the session to see where "
                           "the turn stands."),
    (UnknownQuestion, 404, "This question is no longer waiting for an answer. Reload the session to see where the "
                           "turn stands."),
    (UnknownProposal, 404, "This run proposed no such cell. Reload the session to see its proposals."),
    (ProposalDecided, 409, "This proposed cell was already decided (accepted or rejected elsewhere). Reload the "
                           "session to see its state."),
    (RefusedJournal, 409, LINKED),
    (CorruptJournal, 409, "This run's saved journal is damaged and cannot be read. The session itself is kept; "
                          "restore the journal from a backup if you need this run's rows."),
    (JournalBusy, 409, "This run is being written by another server process, or is finished and takes no more "
                       "events. Reload the session."),
    (FileNotFoundError, 404, "That notebook was not found. Check its path and try again."),
    (NotebookOpen, 409, "This notebook is open with a running kernel, so its file was left untouched: the open "
                        "notebook rebuilds its hermes outputs by itself, save it there. To rewrite the file anyway, "
                        "force the recovery."),
    (RoomUnavailable, 409, "This notebook is open for real-time collaboration and its shared copy could not be "
                           "reached, so nothing was changed. Try again in a moment."),
    (RunActive, 409, "This session is still running a turn. Wait for it to finish or stop it, then try again."),
    (QueueFull, 409, f"{MAX_QUEUED} messages are already waiting in this session. Wait until one is answered, "
                     "or remove one from the queue, then send again."),
    (CannotSteer, 409, "This agent cannot take a message in the middle of its answer. Send it normally instead: "
                       "it is answered as soon as the current answer ends."),
    (NotAllowedAlways, 404, "That is no longer allowed always. Reload the list."),
    (AlwaysUnavailable, 409, "The agent is not running, so what it allows always cannot be read or changed now. "
                             "Try again in a moment."),
    (NothingToRetry, 409, "There is no earlier message in this session to retry or undo."),
    (NothingToContinue, 409, "There is nothing to continue: the last answer in this session was not interrupted or "
                             "stopped (it finished, or failed and can be retried instead)."),
    (CorruptSession, 409, "This session's saved file cannot be read, so it was left untouched. Restore the file "
                          "from a backup, or delete the session to remove it."),
    (Draining, 409, "The server is shutting down and takes no new turns. Try again once it is back."),
    (SymlinkRefused, 409, LINKED),
    (NotAFile, 409, "Part of this session's saved data is not a plain file (or not a folder where one belongs), so it "
                    "is not read. Delete the session to remove it, or move the odd file away."),
    (TooLarge, 409, "Part of this session's saved data is far larger than Hermes reads, so it is not read. "
                    "Delete the session to remove it, or move the file away."),
    (ValueError, 400, "Part of the request is not valid. Check it and try again."),
]

REASONS = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 413: "Payload Too Large",
           500: "Internal Server Error", 503: "Unavailable", 507: "Insufficient Storage"}

UNEXPECTED = "Something went wrong on the server. Try again; if it keeps happening, the server log says why."

#: Errors raised outside our handlers' code (authentication, routing, tornado's own checks), by status.
BY_STATUS = {
    400: "The request could not be read. Check it and try again.",
    401: "You are not signed in to this server. Sign in (or pass its token) and try again.",
    403: "You are not allowed to do this on this server. Ask its administrator for access.",
    404: "There is nothing at this address. Check the link and try again.",
    405: "This address does not accept that kind of request.",
    413: "The request is too large. Send a shorter message or smaller attachments.",
    426: "This address only answers a WebSocket in a version this server speaks. Update the client and try again.",
}

JSON = "application/json"
MASK = "[redacted]"
#: Shorter "tokens" (a typo, a test's `x`) are not masked: replacing them would garble the sentence.
MIN_TOKEN_CHARS = 8


class UserError(web.HTTPError):
    """An HTTP error whose message is a plain sentence; `detail` carries the technical part, if any."""

    def __init__(self, status: int, message: str, detail: str | None = None) -> None:
        super().__init__(status, "%s", message, reason=REASONS.get(status))
        self.message = message
        self.detail = detail


def user_error(status: int, message: str, detail: str | None = None) -> UserError:
    return UserError(status, message, detail)


class PlainValueError(ValueError):
    """Bad input whose message already is a plain sentence (shown as is); `detail` is the technical part."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail


def mapped(exc: BaseException) -> UserError | None:
    """The user-facing error for an engine exception, or None if it is unexpected (a 500)."""
    detail: str | None
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)  # never the path: it would show the server's layout
    else:
        detail = str(exc.args[0]) if exc.args else None
    if is_disk_full(exc):
        return UserError(507, DISK_FULL, detail)
    if isinstance(exc, PlainValueError):
        return UserError(400, str(exc), exc.detail)
    for kind, status, message in ERRORS:
        if isinstance(exc, kind):
            return UserError(status, message, detail)
    return None


def error_body(status: int, exc: BaseException | None) -> dict[str, Any]:
    """The JSON of an error answer; never a traceback, never an exception's text outside `detail`.

    Only our own `UserError`s choose the sentence; the words of jupyter_server and tornado
    (authentication, XSRF, routing, upgrade checks) go to `detail`, under a sentence of ours.
    """
    if isinstance(exc, UserError):
        body: dict[str, Any] = {"message": exc.message, "reason": exc.reason}
        if exc.detail:
            body["detail"] = exc.detail
        return body
    reason = (exc.reason if isinstance(exc, web.HTTPError) else None) or REASONS.get(status) or responses.get(status)
    if status >= 500 and not isinstance(exc, web.HTTPError):
        return {"message": UNEXPECTED, "reason": reason}
    body = {"message": BY_STATUS.get(status, UNEXPECTED if status >= 500 else "The request failed. Try again."),
            "reason": reason}
    if isinstance(exc, web.HTTPError) and exc.log_message:
        body["detail"] = exc.log_message % exc.args if exc.args else exc.log_message
    return body


def error_json(status: int, exc: BaseException | None, tokens: Iterable[str | None]) -> str:
    """`error_body` as JSON text, with `tokens` and anything shaped like a kernel token masked: a `detail`
    quoting a request (a Referer, a URL) must not hand a token back, not even to the one who sent it."""
    text = json.dumps(error_body(status, exc))
    for token in tokens:
        if token and len(token) >= MIN_TOKEN_CHARS and token in text:
            text = text.replace(token, MASK)
    return _KERNEL_TOKEN.sub(MASK, text)


_KERNEL_TOKEN = re.compile(re.escape(KERNEL_TOKEN_PREFIX) + r"[A-Za-z0-9_-]+")
_HEADER_TOKEN = re.compile(r"(?i)^\s*(?:token|bearer)\s+(\S+)\s*$")


def server_tokens(handler: web.RequestHandler) -> tuple[str | None, ...]:
    """The tokens a request's answer could echo: the server's own, a hub's, and the request's own."""
    provider = handler.settings.get("identity_provider")
    header = _HEADER_TOKEN.match(handler.request.headers.get("Authorization", ""))
    return (getattr(provider, "token", None), os.environ.get("JUPYTERHUB_API_TOKEN"),
            header.group(1) if header else None, handler.get_query_argument("token", None))


def write_json_error(handler: web.RequestHandler, status: int, exc: BaseException | None) -> None:
    """Finish `handler` with the JSON error answer (REST and the WebSocket before its upgrade)."""
    handler.set_header("Content-Type", JSON)
    handler.finish(error_json(status, exc, server_tokens(handler)))
