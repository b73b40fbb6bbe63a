"""`POST complete`: inline completion in code cells from the configured OpenAI-compatible model (docs/editor.md).

Why a route of its own, not a run: a completion is asked for at every pause in typing and is thrown
away at the next key, so it is not journaled and belongs to no session. What it shares with runs is
what matters: only a person asks (a kernel must not make the server send code to a model), the
model is the one chosen in Model settings, and the server's redactor masks the code before it
leaves and the answer before it is returned. A client that gives up (the next key) closes the
request, and the model request is cancelled with it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Final

import httpx
from jupyter_server.auth.decorator import authorized
from tornado import web

from ..agents.endpoint_settings import Endpoint
from ..redact import Redactor
from .errors import user_error
from .handlers import HermesHandler, api_errors
from .principals import person_only
from .settings_handlers import SETTING as MODEL_SETTINGS

#: `HermesJupyter.allow_inline_completion`, as app.py hands it to the handlers.
ALLOW_SETTING: Final = "hermes_allow_inline_completion"
#: Characters of code before / after the cursor sent to the model (the nearest ones).
MAX_PREFIX_CHARS: Final = 6000
MAX_SUFFIX_CHARS: Final = 2000
MAX_TOKENS: Final = 64
TIMEOUT_S: Final = 8.0
#: Where the model is asked to insert its text.
CURSOR: Final = "<CURSOR>"
SYSTEM_PROMPT: Final = (
    "You complete code in a Jupyter notebook cell. Reply with only the text to insert at "
    f"{CURSOR}: no explanation, no code fences, no repetition of the code around it. "
    "Keep it short (at most a few lines). Reply with nothing when no completion fits."
)
_FENCE = re.compile(r"^```[\w+-]*\n(.*?)\n?```\s*$", re.DOTALL)
_CLIENT = "hermes_completion_client"


@dataclass(frozen=True)
class CompletionRequest:
    """What the editor sends; `path` and `cell_id` only name where (for the log), never sent to the model."""

    path: str
    cell_id: str
    prefix: str
    suffix: str
    language: str


def parse_request(body: dict[str, Any]) -> CompletionRequest:
    """The request, checked; the prefix and suffix are cut to the code nearest the cursor."""
    def text(name: str, limit: int | None = None) -> str:
        value = body.get(name, "")
        if not isinstance(value, str) or (limit is not None and len(value) > limit):
            raise user_error(400, "The completion request could not be read. Keep typing to ask again.",
                             f"{name} must be a string" + (f" of at most {limit} characters" if limit else ""))
        return value

    return CompletionRequest(
        path=text("path", 4096), cell_id=text("cell_id", 200), language=text("language", 40) or "python",
        prefix=text("prefix")[-MAX_PREFIX_CHARS:], suffix=text("suffix")[:MAX_SUFFIX_CHARS],
    )


def completion_body(request: CompletionRequest, model: str, redactor: Redactor) -> dict[str, Any]:
    """The chat-completions body: the code around the cursor, redacted, with a short instruction."""
    code = redactor.text(request.prefix) + CURSOR + redactor.text(request.suffix)
    user = f"Complete the {request.language} code at {CURSOR}.\n\n{code}"
    body: dict[str, Any] = {
        "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}],
        "max_tokens": MAX_TOKENS, "temperature": 0, "stream": False,
    }
    if model:
        body["model"] = model
    return body


def cleaned(text: str, request: CompletionRequest) -> str:
    """The model's text as an insertion: without a code fence around it, nor the current line repeated."""
    fenced = _FENCE.match(text.strip("\n"))
    if fenced:
        text = fenced.group(1)
    line = request.prefix.rsplit("\n", 1)[-1]
    if line.strip() and text.startswith(line):
        text = text[len(line):]
    return text.replace(CURSOR, "").rstrip()


async def complete(client: httpx.AsyncClient, endpoint: Endpoint, request: CompletionRequest,
                   redactor: Redactor) -> str:
    """Ask the endpoint; the insertion text, redacted ("" when the model has none)."""
    headers = {"Authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    url = endpoint.url.rstrip("/") + "/chat/completions"
    try:
        response = await client.post(url, json=completion_body(request, endpoint.model, redactor), headers=headers,
                                     timeout=TIMEOUT_S)
    except httpx.TimeoutException:
        raise user_error(504, "The model took too long to suggest a completion.", f"no answer from {url} "
                         f"within {TIMEOUT_S:g} s") from None
    except httpx.HTTPError as exc:
        raise user_error(502, f"Could not reach the model at {endpoint.url}.", type(exc).__name__) from None
    if response.status_code >= 400:
        raise user_error(502, "The model refused the completion request. Test it in Model settings.",
                         redactor.text(f"HTTP {response.status_code} from {url}: {response.text[:300]}"))
    try:
        content = response.json()["choices"][0]["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise user_error(502, "The model's answer could not be read.", f"not a chat completion from {url}") from None
    return redactor.text(cleaned(str(content), request))


class CompleteHandler(HermesHandler):
    """`POST complete` `{path, cell_id, prefix, suffix, language}` → `{text}`: a person only."""

    auth_resource = "hermes:complete"
    _task: asyncio.Task[str] | None = None

    @web.authenticated
    @authorized
    @api_errors
    @person_only("complete")
    async def post(self) -> None:
        if not self.settings.get(ALLOW_SETTING, True):
            raise user_error(409, "Inline completion is off on this server.",
                             "c.HermesJupyter.allow_inline_completion is False")
        request = parse_request(self.json_body())
        settings = self.settings.get(MODEL_SETTINGS)
        endpoint = settings.endpoint if settings is not None else None
        if endpoint is None or endpoint.backend != "openai" or not endpoint.url:
            # the demo and Hermes have no completion model: nothing to suggest, nothing sent anywhere
            self.answer({"text": "", "detail": "inline completion needs the OpenAI-compatible backend"})
            return
        self._task = asyncio.ensure_future(complete(self._client(), endpoint, request, self.hermes.manager.redactor))
        try:
            text = await self._task
        except asyncio.CancelledError:
            return  # the editor went on typing and closed the request: nobody reads an answer
        self.answer({"text": text})

    def on_connection_close(self) -> None:
        """The editor gave up on this completion: stop asking the model for it."""
        if self._task is not None:
            self._task.cancel()
        super().on_connection_close()

    def _client(self) -> httpx.AsyncClient:
        """One client for the server's life (its connections are kept for the next keystroke)."""
        client = self.settings.get(_CLIENT)
        if client is None:
            client = self.settings[_CLIENT] = httpx.AsyncClient(follow_redirects=False)
        return client


async def close_client(settings: dict[str, Any]) -> None:
    """At shutdown: close the kept connections to the model."""
    client = settings.pop(_CLIENT, None)
    if client is not None:
        await client.aclose()


handlers = [(r"complete", CompleteHandler)]
