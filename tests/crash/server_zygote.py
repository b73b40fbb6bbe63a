"""Fork real jupyter servers from one process that has already imported them.

Why: under load a cold `jupyter server` start is dominated by imports (seconds),
and a crash loop needs dozens of server lives. This process imports
jupyter_server and the extension once, then forks a child per request; each
child runs a real `ServerApp` (the extension loaded as in production, real HTTP
and WebSocket) and is SIGKILLed by the test like any server.

Protocol (stdin → stdout, one JSON line each): `{"argv": [...], "env": {...},
"log": PATH}` → `{"pid": N}`. Children are reaped here (SIGCHLD ignored).
"""

from __future__ import annotations

import json
import os
import signal
import sys

import jupyter_server.serverapp  # noqa: F401 - the slow imports, paid once
import hermes_jupyter.server.app  # noqa: F401


def _child(request: dict) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    code = 0
    try:
        jupyter_server.serverapp.main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the log says why
        import traceback

        traceback.print_exc()
        code = 1
    os._exit(code)


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), flush=True)


if __name__ == "__main__":
    main()
