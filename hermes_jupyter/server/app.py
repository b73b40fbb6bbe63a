"""The `hermes_jupyter` server extension: the composition root.

It builds the store, journals, recovery, agents and RunManager once, hands
them to the handlers, repairs sessions a previous process left pending, and
drains active runs on shutdown so the next start has nothing to guess.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import PeriodicCallback
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, default

from ..agents.approvals import ApprovalBroker
from ..autonomy import AUTONOMY_LEVELS
from ..agents.base import AgentBackend
from ..agents.clarify import ClarifyBroker
from ..agents.endpoint_check import LOCAL_PORTS
from ..agents.endpoint_settings import SETTING_NAMES, Endpoint, SettingsStore
from ..agents.registry import BACKENDS, BackendContext, configurable_classes
from ..fsio import DEFAULT_CAPS, ReadCaps
from ..journal import DURABILITY_POLICIES, Journals
from ..recovery.liveness import LiveRuns
from ..paths import core_transcript_dir, default_state_dir
from ..recovery.repair import Recovery, RecoveryPolicy
from ..runs import settle
from ..redact import Redactor, redact_logs
from ..retention import RetentionPolicy, collect
from ..notebook.recovery_service import NotebookPlaces
from ..runs.manager import RunManager
from ..sessions.store import SessionStore
from .autonomy import MAX_SETTING as MAX_AUTONOMY
from .completion import ALLOW_SETTING as ALLOW_COMPLETION, close_client, handlers as completion_handlers
from .handlers import default_handlers
from .variables import handlers as variable_handlers
from .kernel_launch import give_kernels_tokens
from .kernel_token import PERSON_SETTING, SETTING as KERNEL_TOKEN_SETTING, KernelTokens, person_digests
from .kernels import KernelWatcher
from .no_route import PATTERN as NO_ROUTE, NoRouteHandler
from .notebook_editor import NotebookEditor
from .notebook_handlers import handlers as notebook_handlers
from .rooms import SharedNotebooks
from .model_settings import ModelSettings
from .services import HermesServices
from .settings_handlers import SETTING as MODEL_SETTINGS, handlers as settings_handlers
from .state_check import refuse_if_linked
from .stream import RunStreamHandler
from .telemetry import Telemetry

def _configurable_classes() -> list[type[Any]]:
    from ..agents.tools import NotebookTools

    return [*configurable_classes(), NotebookTools]


class HermesJupyter(ExtensionApp):
    """Hosts Hermes agent sessions in the Jupyter server (config class `HermesJupyter`)."""

    name = "hermes_jupyter"
    load_other_extensions = True
    classes = _configurable_classes()

    state_dir = Unicode(
        config=True,
        help="Where sessions and run journals live. Default: $HERMES_JUPYTER_STATE_DIR, else $HERMES_HOME/jupyter.",
    )
    backend = Enum(
        list(BACKENDS), default_value="demo", config=True,
        help="Backend for new sessions: demo (offline, default), openai (any OpenAI-compatible endpoint), hermes.",
    )
    allowed_backends = List(
        Unicode(), default_value=list(BACKENDS), config=True,
        help="Backends users may choose per session (a hub admin can restrict this).",
    )
    locked_settings = List(
        Enum(list(SETTING_NAMES)), default_value=[], config=True,
        help="Model settings people may not change in JupyterLab: any of backend, url, model, key. A locked one "
        "is what this config says (OpenAIAgent.base_url, .model, .api_key; HermesJupyter.backend), and the "
        "settings panel says it is set by the administrator (docs/models.md).",
    )
    local_model_ports = Dict(
        Int(), default_value=dict(LOCAL_PORTS), config=True,
        help="Ports of 127.0.0.1 the settings panel asks for a local model server (GET /v1/models), by name.",
    )
    journal_durability = Enum(
        list(DURABILITY_POLICIES), default_value="batch", config=True,
        help="batch: group commit, every event fsynced within journal_fsync_window; every: fsync per event; "
        "terminal: fsync only terminal events.",
    )
    journal_fsync_window = Float(0.02, config=True, help="Seconds between group-commit fsyncs (default 0.02).")
    journal_compress = Bool(
        True, config=True,
        help="Compress a run's journal (runs/<sid>/<run_id>.jsonl.gz) once the run is settled; readers take both forms.",
    )
    journal_retention_days = Float(
        RetentionPolicy.max_age_days, config=True,
        help="Remove journals of settled runs not written for this many days (0: keep them). A journal is never "
        "removed while its session still needs it to recover a turn; the session keeps the whole conversation.",
    )
    journal_max_bytes = Int(
        RetentionPolicy.max_total_bytes, config=True,
        help="Remove journals of settled runs, oldest first, while all journals take more than this (0: no cap).",
    )
    journal_gc_interval = Float(3600.0, config=True, help="Seconds between journal collections (0: only at start).")
    max_event_bytes = Int(256 * 1024, config=True, help="Largest journaled payload in bytes; larger ones are truncated.")
    max_request_bytes = Int(1 << 20, config=True, help="Largest accepted request body in bytes (413 above).")
    max_sidecar_bytes = Int(
        DEFAULT_CAPS.sidecar, config=True,
        help="Largest session file read, in bytes; a larger one is listed as damaged and can be deleted.",
    )
    max_index_bytes = Int(
        DEFAULT_CAPS.index, config=True,
        help="Largest session list index read, in bytes; a larger one is rebuilt from the session files.",
    )
    max_journal_line_bytes = Int(
        DEFAULT_CAPS.journal_line, config=True,
        help="Longest run journal line read, in bytes; reading stops at a longer one (never below max_event_bytes).",
    )
    max_sealed_journal_bytes = Int(
        DEFAULT_CAPS.sealed_journal, config=True,
        help="Most bytes a compressed run journal may expand to; a larger one is damaged, a larger live one stays "
        "uncompressed.",
    )
    kernel_restart_policy = Enum(
        ["interrupt", "detach"], default_value="interrupt", config=True,
        help="What a kernel restart or shutdown does to runs started from it: interrupt (settle them with a "
        "kernel_restart marker, default) or detach (let them finish unobserved).",
    )
    drain_timeout = Float(10.0, config=True, help="Seconds shutdown waits for active runs before interrupting them.")
    cancel_grace = Float(5.0, config=True, help="Seconds a backend gets to stop after cancel before it is abandoned.")
    heartbeat_interval = Float(15.0, config=True, help="Seconds of idle stream before a heartbeat message (< 30).")
    recovery_grace = Float(
        30.0, config=True,
        help="Seconds a pending turn of this process is left alone before a read repairs it (turns from "
        "before a restart are repaired at once).",
    )

    person_token_sha256 = List(
        Unicode(), config=True,
        help="sha256 digests (hex) of tokens that act as a person on the hermes routes: an API client holding one "
        "may answer approvals and questions, decide proposals, rename, bind and delete sessions. List only "
        "tokens no kernel can read (never the server token, which lies in the runtime dir). "
        "Make one with: python -c \"import hashlib,secrets; t=secrets.token_urlsafe(32); "
        "print(t, hashlib.sha256(t.encode()).hexdigest())\"",
    )
    allow_inline_completion = Bool(
        True, config=True,
        help="Whether people may turn on inline completion in code cells (their JupyterLab setting, off by "
        "default), which sends the code around the cursor, redacted, to the OpenAI-compatible model at every "
        "pause in typing. False: `POST complete` answers 409 (docs/editor.md).",
    )
    max_autonomy = Enum(
        list(AUTONOMY_LEVELS), default_value="agent", config=True,
        help="The most a person may let the agent do in a notebook (docs/autonomy.md): ask (read only), propose "
        "(changes are proposals, nothing runs), agent (changes applied, each run of code asked; default) or "
        "agent_auto (applied and run without asking). A choice above it is refused (403).",
    )
    kernel_env_drop = List(
        Unicode(), default_value=["JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "JUPYTER_TOKEN"], config=True,
        help="Environment variables left out of every kernel this server starts: credentials that act as the "
        "user (the hub token, the server token). Kernels reach hermes with their own kernel token instead.",
    )

    @default("state_dir")
    def _default_state_dir(self) -> str:
        return str(default_state_dir())

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        state = Path(self.state_dir).expanduser()
        self.kernel_tokens = KernelTokens()
        self.settings[KERNEL_TOKEN_SETTING] = self.kernel_tokens
        self.settings[PERSON_SETTING] = person_digests(list(self.person_token_sha256))
        self.settings[ALLOW_COMPLETION] = self.allow_inline_completion
        self.settings[MAX_AUTONOMY] = self.max_autonomy
        give_kernels_tokens(self.serverapp.kernel_manager, self.kernel_tokens, self.kernel_env_drop)
        server_token = getattr(self.serverapp.identity_provider, "token", "") or ""
        self.redactor = Redactor.from_environ(extra=[server_token])  # kernel tokens are masked by their hjk_ shape
        rooms = SharedNotebooks(self.serverapp)
        #: The one writer of agent cell changes (docs/notebook-edits.md), built before the tools that use it.
        contents = self.serverapp.contents_manager
        self.notebook_editor = NotebookEditor(contents, getattr(contents, "root_dir", None) or self.serverapp.root_dir,
                                              rooms)
        refused = refuse_if_linked(state, self.log)  # a linked sessions/ or runs/: every route says so
        if refused is not None:
            self.settings["hermes"] = refused
            return
        caps = ReadCaps(self.max_sidecar_bytes, self.max_index_bytes, self.max_journal_line_bytes,
                        self.max_sealed_journal_bytes)
        store = SessionStore(state / "sessions", caps=caps)
        journals = Journals(
            state / "runs", durability=self.journal_durability, window_s=self.journal_fsync_window,
            max_event_bytes=self.max_event_bytes, caps=caps,
        )
        live = LiveRuns()
        recovery = Recovery(
            store, journals, live, settler=settle, core_dir=core_transcript_dir(), process_started_at=time.time(),
            policy=RecoveryPolicy(grace_s=self.recovery_grace),
        )
        event_logger = getattr(self.serverapp, "event_logger", None)
        telemetry = Telemetry(event_logger)
        approvals, clarify = ApprovalBroker(), ClarifyBroker()
        backends = self._build_backends(approvals, clarify)
        redactor = self.redactor = self._redactor(backends)
        self._log_filter = redact_logs(redactor)
        manager = RunManager(
            store, journals, recovery, live, backends, default_backend=self.backend,
            cancel_grace_s=self.cancel_grace, heartbeat_s=self.heartbeat_interval, on_lifecycle=telemetry.lifecycle,
            seal_journals=self.journal_compress, redactor=redactor,
            notebooks=NotebookPlaces(Path(self.serverapp.root_dir), state, rooms, self._open_in_a_frontend),
        )
        self.hermes = HermesServices(
            state_dir=state, store=store, journals=journals, live=live, recovery=recovery, manager=manager,
            root_dir=Path(self.serverapp.root_dir), approvals=approvals, clarify=clarify,
            allowed_backends=list(self.allowed_backends), default_backend=self.backend,
            max_body_bytes=self.max_request_bytes, rooms=rooms, notebook_editor=self.notebook_editor,
        )
        self.settings["hermes"] = self.hermes
        self.settings[MODEL_SETTINGS] = self._model_settings(state, backends)
        if event_logger is not None:
            KernelWatcher(manager, self.kernel_restart_policy).listen(event_logger)

    async def _open_in_a_frontend(self, path: str) -> bool:
        """A notebook with a live kernel session is open somewhere: its unsaved edits must not be clobbered."""
        if self.serverapp is None:
            return False
        wanted = path.strip("/")
        sessions = await self.serverapp.session_manager.list_sessions()
        return any(str(s.get("path", "")).strip("/") == wanted for s in sessions)

    def _model_settings(self, state: Path, backends: dict[str, AgentBackend]) -> ModelSettings:
        """The settings saved in JupyterLab over this config's preset (docs/models.md), applied now and on save."""
        openai = backends.get("openai")
        preset = Endpoint(backend=self.backend, url=getattr(openai, "base_url", ""),
                          model=getattr(openai, "model", ""), key=getattr(openai, "api_key", ""))

        def apply(endpoint: Endpoint) -> None:
            if openai is not None:
                openai.use_endpoint(endpoint.url, endpoint.model, endpoint.key)  # type: ignore[attr-defined]
            self.hermes.default_backend = endpoint.backend

        return ModelSettings(
            SettingsStore(state), preset, locked=frozenset(self.locked_settings),
            allowed_backends=[b for b in self.allowed_backends if b in backends], apply=apply,
            learn_key=self._learn_key, local_ports=dict(self.local_model_ports),
        )

    def _learn_key(self, key: str) -> None:
        """A saved key is masked from now on: in new runs (the manager's redactor) and in the log."""
        manager = self.hermes.manager
        if key not in manager.redactor.known:
            manager.redactor = self.redactor = manager.redactor.with_values([key])
            self._log_filter.redactor = manager.redactor

    def _redactor(self, backends: dict[str, AgentBackend]) -> Redactor:
        """The server's redactor (environment secrets, server and kernel tokens) plus the backends' keys,
        Hermes' own configured keys included, so the log and every error mask them too."""
        keys: list[object] = [getattr(b, "api_key", None) for b in backends.values()]
        for backend in backends.values():
            known = getattr(backend, "known_secrets", None)
            keys.extend(known() if callable(known) else ())
        return self.redactor.with_values(k for k in keys if isinstance(k, str))

    def _build_backends(self, approvals: ApprovalBroker, clarify: ClarifyBroker) -> dict[str, AgentBackend]:
        """The allowed backends, each wired to the approval and clarify brokers (and the notebook tools)."""
        from .notebook_access import make_tools_factory

        names = set(self.allowed_backends) | {self.backend}
        tools = make_tools_factory(self.serverapp, approvals, parent=self, redactor=self.redactor,
                                   editor=getattr(self, "notebook_editor", None))
        tools.max_autonomy = self.max_autonomy  # a session chosen above a since-lowered cap gets the cap
        ctx = BackendContext(parent=self, approvals=approvals, clarify=clarify, tools_factory=tools)
        backends = {name: factory(ctx) for name, factory in BACKENDS.items() if name in names}
        if "hermes" in backends:
            self._confine_agent(backends["hermes"])
        return backends

    def _confine_agent(self, hermes: Any) -> None:
        """The sandboxed agent works in root_dir and never sees this server's runtime or state dir."""
        assert self.serverapp is not None
        hermes.sandbox_writable = [*hermes.sandbox_writable, str(self.serverapp.root_dir)]
        hermes.sandbox_hidden = [*hermes.sandbox_hidden, str(Path(self.state_dir).expanduser()),
                                 str(self.serverapp.runtime_dir)]

    def initialize_handlers(self) -> None:
        prefix = "hermes/api/"
        self.handlers.extend((prefix + pattern, handler) for pattern, handler in default_handlers)
        self.handlers.extend((prefix + pattern, handler) for pattern, handler in settings_handlers)
        self.handlers.extend((prefix + pattern, handler) for pattern, handler in variable_handlers)
        self.handlers.extend((prefix + pattern, handler) for pattern, handler in completion_handlers)
        self.handlers.extend((prefix + pattern, handler) for pattern, handler in notebook_handlers)
        self.handlers.append((prefix + r"runs/(?P<run_id>[^/]+)/stream", RunStreamHandler))
        self.handlers.append((NO_ROUTE, NoRouteHandler))  # last: any other hermes/api address is a JSON 404

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """After the server listens: tell kernels where it is, and repair what a previous process left.

        Each kernel gets its own token when it starts (server/kernel_launch.py), never the server's or
        the hub's: those stay out of its environment (`kernel_env_drop`, docs/agent-reach.md).
        """
        os.environ["HERMES_JUPYTER_SERVER_URL"] = serverapp.connection_url
        os.environ["HERMES_JUPYTER_SERVER_ROOT"] = str(serverapp.root_dir)  # notebook paths become root-relative
        os.environ.pop("HERMES_JUPYTER_SERVER_TOKEN", None)  # only per kernel, never server-wide
        os.environ.pop("JUPYTER_TOKEN", None)  # read once at start-up (IdentityProvider.token)
        if not hasattr(self, "hermes"):
            return  # the state dir was refused (state_check.py): nothing to repair or collect
        self._startup_scan = asyncio.ensure_future(self._repair_left_pending())
        self._warm_start = asyncio.ensure_future(self._warm_hermes())
        _drain_on_sigint(serverapp)
        self._activity = PeriodicCallback(self._mark_activity, 30_000)
        self._activity.start()
        self._gc: PeriodicCallback | None = None
        if self.journal_gc_interval > 0:
            self._gc = PeriodicCallback(self._collect_journals, self.journal_gc_interval * 1000)
            self._gc.start()

    async def _warm_hermes(self) -> None:
        """With hermes as the default backend, start its process (and one agent) now, in the background,
        so the first turn does not wait several seconds for them."""
        hermes = self.hermes.manager.backends.get("hermes")
        if self.backend != "hermes" or hermes is None or not getattr(hermes, "warm_start", False):
            return
        try:
            await hermes.start()  # type: ignore[attr-defined]
        except Exception:  # the first turn retries the spawn and reports the failure in plain words
            self.log.warning("hermes_jupyter: warm start of the hermes backend failed", exc_info=True)

    def _mark_activity(self) -> None:
        """Active runs count as activity, so an idle culler never culls a server mid-run."""
        if self.hermes.manager.active_runs() and self.serverapp is not None:
            self.serverapp.web_app.settings["hermes_last_activity"] = datetime.now(timezone.utc)

    async def _repair_left_pending(self) -> None:
        """Repair, in the background, sessions a previous server process left pending (cause server_restart)."""
        await asyncio.to_thread(self.hermes.journals.purge_leftovers)
        rows = await asyncio.to_thread(self.hermes.store.list)  # unreadable sidecars are rows marked corrupt
        for row in rows:
            stream = row.get("active_stream_id")
            if stream and not self.hermes.live.is_live(stream):
                try:
                    await asyncio.to_thread(self.hermes.recovery.get_session, row["session_id"])
                except Exception:  # one unreadable session must not stop the scan
                    self.log.exception("startup repair of session %s failed", row["session_id"])
        self.log.info("hermes_jupyter: startup scan checked %d sessions", len(rows))
        try:  # the turns those repairs settled had messages queued behind them: those start now
            await self.hermes.manager.resume_queues()
        except Exception:
            self.log.exception("hermes_jupyter: resuming queued turns failed")
        await self._collect_journals()  # after the repairs: settled sessions free their journals

    async def _collect_journals(self) -> None:
        """Compress and prune journals per the retention settings, off the event loop."""
        policy = RetentionPolicy(
            max_age_days=self.journal_retention_days, max_total_bytes=self.journal_max_bytes,
            compress=self.journal_compress,
        )
        try:
            report = await asyncio.to_thread(collect, self.hermes.store, self.hermes.journals, policy)
        except Exception:  # retention must never take the server down
            self.log.exception("hermes_jupyter: journal collection failed")
            return
        if report.pruned or report.compressed:
            self.log.info("hermes_jupyter: %s", report.sentence())

    async def stop_extension(self) -> None:
        """Drain: refuse new runs, wait up to drain_timeout, settle the rest as server_shutdown."""
        if self.serverapp is not None:
            await close_client(self.serverapp.web_app.settings)
        hermes = getattr(self, "hermes", None)
        if hermes is None:
            return
        for timer in (getattr(self, "_activity", None), getattr(self, "_gc", None)):
            if timer is not None:
                timer.stop()
        left = await hermes.manager.drain(self.drain_timeout)
        if left:
            self.log.warning("hermes_jupyter: interrupted %d runs at shutdown: %s", len(left), left)
        for backend in hermes.manager.backends.values():
            try:
                await asyncio.wait_for(backend.aclose(), 5)
            except Exception:  # closing a backend must not block shutdown
                self.log.exception("closing backend %s failed", backend.name)
        hermes.journals.close()
        hermes.store.close()


def _drain_on_sigint(serverapp: Any) -> None:
    """Without a terminal, jupyter_server leaves SIGINT to Python, which exits without cleanup.

    Servers started by a spawner (JupyterHub's local spawner sends SIGINT first) would then skip the
    drain and the next start would report `server_restart`; stop cleanly instead, as on SIGTERM.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, lambda sig, frame: serverapp.stop(from_signal=True))
