"""`jupyter hermes recover | sessions | gc | audit`: the state directory and notebooks seen from a shell, no server needed.

`recover` rewrites unfinished hermes outputs of notebooks from the run journals
(the same code the server's `POST notebooks/recover` runs); `sessions` lists
the sessions, newest first; `gc` compresses and prunes run journals as the
server's retention settings do (`retention.collect`); `audit` lists a notebook's agent-touched
cells from their provenance (`audit.py`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_core.application import JupyterApp
from traitlets import Bool, Float, Int, Unicode

from . import __version__
from .paths import default_state_dir
from .retention import RetentionPolicy

if TYPE_CHECKING:
    from .api_client import ServerInfo

_STATE_DIR_HELP = (
    "The hermes-jupyter state directory (default: $HERMES_JUPYTER_STATE_DIR, else $HERMES_HOME/jupyter, "
    "HERMES_HOME defaulting to ~/.hermes)."
)


class _StateDirApp(JupyterApp):
    """A subcommand that reads the state directory."""

    version = __version__
    state_dir = Unicode("", config=True, help=_STATE_DIR_HELP)
    aliases = {"state-dir": "_StateDirApp.state_dir"}

    def resolved_state_dir(self) -> Path:
        return Path(self.state_dir).expanduser() if self.state_dir else default_state_dir()


class RecoverApp(_StateDirApp):
    name = "jupyter-hermes-recover"
    description = (
        "Rewrite, from the run journals, every hermes cell output of the given notebooks whose run "
        "status is not final (a run cut off by a kernel restart gets its partial output and the "
        "interrupted marker; one that completed while no kernel listened gets its full answer). "
        "Every other cell is left untouched. A notebook that a running Jupyter server serves is "
        "recovered by that server (through its collaboration room when one holds the notebook), "
        "or left untouched with the server's reason."
    )
    examples = "jupyter hermes recover analysis.ipynb --state-dir ~/.hermes/jupyter"
    aliases = {"state-dir": "RecoverApp.state_dir"}
    force = Bool(False, config=True, help=(
        "Ask a running server to rewrite the file even when the notebook is open there with a kernel "
        "(unsaved edits in that notebook are then lost when it is saved over)."))
    flags = {"force": ({"RecoverApp": {"force": True}}, "Rewrite the file even where a running server has the notebook open.")}

    def start(self) -> None:
        from nbformat import ValidationError

        from .notebook.defer import serving
        from .notebook.recover import recover_notebook_file  # nbformat is only needed here

        if not self.extra_args:
            self.log.error("give at least one notebook: jupyter hermes recover NB.ipynb")
            self.exit(2)
        state_dir = self.resolved_state_dir()
        failed = False
        for name in self.extra_args:
            found = serving(Path(name)) if Path(name).is_file() else None
            if found is not None:  # a server may hold it in a room or a browser: it decides (notebook/defer.py)
                failed = not self._recover_through(name, *found) or failed
                continue
            try:
                cells = recover_notebook_file(name, state_dir)
            except (OSError, ValueError, ValidationError) as exc:  # unreadable, not JSON, invalid notebook
                self.log.error("%s: %s", name, exc)
                failed = True
                continue
            print(f"{name}: {_cells(cells)} recovered")
        if failed:
            self.exit(1)

    def _recover_through(self, name: str, server: ServerInfo, api_path: str) -> bool:
        from .notebook.defer import recover_through_server

        done = recover_through_server(server, api_path, force=self.force)
        if done.refused is not None:
            hint = "" if self.force or "force" not in done.refused else " (jupyter hermes recover --force)"
            self.log.error("%s: %s%s", name, done.refused, hint)
            return False
        where = "in its collaboration room" if done.shared else "in the file"
        print(f"{name}: {_cells(done.cells)} recovered by the running Jupyter server at {done.url} ({where})")
        return True


def _cells(n: int) -> str:
    return f"{n} cell{'s' if n != 1 else ''}"


#: Rows per page when `jupyter hermes sessions` walks the listing.
CLI_PAGE = 500


class SessionsApp(_StateDirApp):
    name = "jupyter-hermes-sessions"
    description = "List the hermes sessions of the state directory, newest first."
    as_json = Bool(False, config=True, help="Print one JSON object per line instead of a table.")
    aliases = {"state-dir": "SessionsApp.state_dir"}
    flags = {"json": ({"SessionsApp": {"as_json": True}}, "Print JSON lines.")}

    def start(self) -> None:
        from .sessions.store import SessionStore

        root = self.resolved_state_dir() / "sessions"
        if not root.is_dir():
            self.log.info("no sessions under %s", root)
            return
        store = SessionStore(root)
        try:
            cursor: str | None = None
            while True:  # page by page: a state dir with 100k sessions starts printing at once
                page = store.page(CLI_PAGE, cursor)
                for row in page.rows:
                    print(json.dumps(row, default=str) if self.as_json else _session_line(row))
                if page.next is None:
                    break
                cursor = page.next
        finally:
            store.close()


class GcApp(_StateDirApp):
    name = "jupyter-hermes-gc"
    description = (
        "Compress the journals of finished runs and remove old ones whose sessions already show the whole "
        "conversation (never one a session still needs to recover a turn). Says what it freed."
    )
    examples = "jupyter hermes gc --dry-run\njupyter hermes gc --days 7 --max-bytes 200000000"
    dry_run = Bool(False, config=True, help="Only say what would be freed; change nothing.")
    retention_days = Float(
        RetentionPolicy.max_age_days, config=True, help="Remove settled journals older than this many days (0: never)."
    )
    max_bytes = Int(
        RetentionPolicy.max_total_bytes, config=True,
        help="Remove settled journals, oldest first, while all journals take more than this many bytes (0: no cap).",
    )
    as_json = Bool(False, config=True, help="Print the numbers as one JSON object after the sentence.")
    aliases = {"state-dir": "GcApp.state_dir", "days": "GcApp.retention_days", "max-bytes": "GcApp.max_bytes"}
    flags = {
        "dry-run": ({"GcApp": {"dry_run": True}}, "Only say what would be freed."),
        "json": ({"GcApp": {"as_json": True}}, "Also print the numbers as JSON."),
    }

    def start(self) -> None:
        from .journal import Journals
        from .retention import collect
        from .sessions.store import SessionStore

        state_dir = self.resolved_state_dir()
        if not (state_dir / "runs").is_dir():
            print(f"There are no run journals under {state_dir}; nothing to free.")
            return
        store, journals = SessionStore(state_dir / "sessions"), Journals(state_dir / "runs")
        policy = RetentionPolicy(max_age_days=self.retention_days, max_total_bytes=self.max_bytes)
        try:
            report = collect(store, journals, policy, dry_run=self.dry_run)
        finally:
            journals.close()
            store.close()
        print(report.sentence())
        if self.as_json:
            print(json.dumps(report.to_json()))


class AuditApp(JupyterApp):
    name = "jupyter-hermes-audit"
    version = __version__
    description = (
        "List every cell of the given notebooks that an agent created or changed: what it did, which model, "
        "who approved it, and whether someone edited the cell since (its source no longer matches the hash "
        "the agent left). Reads only the notebook."
    )
    examples = "jupyter hermes audit analysis.ipynb\njupyter hermes audit analysis.ipynb --json"
    as_json = Bool(False, config=True, help="Print a JSON list, one item per agent cell, instead of a table.")
    flags = {"json": ({"AuditApp": {"as_json": True}}, "Print JSON.")}

    def start(self) -> None:
        import nbformat

        from .audit import as_json, audit, table

        if not self.extra_args:
            self.log.error("give a notebook: jupyter hermes audit NB.ipynb")
            self.exit(2)
        failed = False
        for name in self.extra_args:
            try:
                notebook = nbformat.read(name, as_version=4)
            except (OSError, ValueError, nbformat.ValidationError) as exc:  # unreadable, not JSON, not a notebook
                self.log.error("%s cannot be read as a notebook: %s", name, exc)
                failed = True
                continue
            items = audit(notebook)
            print(json.dumps(as_json(items)) if self.as_json else table(name, items))
        if failed:
            self.exit(1)


def _session_line(row: dict[str, Any]) -> str:
    updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(row.get("updated_at") or 0)))
    state = "running" if row.get("active_stream_id") else "corrupt" if row.get("corrupt") else ""
    title = str(row.get("title") or "")
    where = f"  [{row['notebook_path']}]" if row.get("notebook_path") else ""
    return f"{updated}  {row.get('session_id')}  {row.get('message_count', 0):>4} msgs  {state:<7} {title}{where}"


class HermesApp(JupyterApp):
    name = "jupyter-hermes"
    version = __version__
    description = "hermes-jupyter from the command line."
    subcommands = {
        "recover": (RecoverApp, RecoverApp.description.splitlines()[0]),
        "sessions": (SessionsApp, SessionsApp.description),
        "gc": (GcApp, GcApp.description.split(" (")[0] + "."),
        "audit": (AuditApp, AuditApp.description.split(":")[0] + "."),
    }

    def start(self) -> None:
        if self.subapp is None:
            self.print_help()
            self.exit(2)
        super().start()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `jupyter-hermes` console script (`jupyter hermes …`)."""
    try:
        HermesApp.launch_instance(argv)
    finally:
        for app in (RecoverApp, SessionsApp, GcApp, AuditApp, HermesApp):
            app.clear_instance()


if __name__ == "__main__":  # `python -m hermes_jupyter.cli …` works as the console script does
    main()
